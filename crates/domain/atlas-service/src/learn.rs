//! Seed 000 §2.1, §2.3, §4.1: learning from what agents report.

use atlas_graph::{AppGraph, TransitionRef};
use atlas_model::{
    Action, AtlasError, Check, Intent, Result, TraceStep, Transition, VersionSource, Versioned,
    intent_id, transition_id, validate_text,
};
use atlas_store::{Added, Counts, Record, Stepped};

pub use atlas_api::learning::{
    BatchAddTransitionsRequest, BatchAddTransitionsResponse, BatchTransition, EndSessionRequest,
    EndSessionResponse, RegisterIntentRequest, RegisterIntentResponse, ReportTransitionRequest,
    ReportTransitionResponse, ReportedAction, TransitionStats,
};

use crate::Atlas;
use crate::activity::Reported;
use crate::state::State;
use crate::versions::{app_knowing, page_seen};
use atlas_navigate::round3;
use atlas_navigate::{DocTexts, intent_key};

/// Most transitions in one batch call.
pub const MAX_BATCH_TRANSITIONS: usize = 100_000;
/// Most steps remembered per session trace.
const MAX_TRACE_STEPS: usize = 500;
/// Most bytes a session trace grows to (compact JSON), well under what one entity may take
/// ([`atlas_store::MAX_ENTITY_BYTES`]) so that a long session never has its reports refused.
const MAX_TRACE_BYTES: usize = atlas_store::MAX_ENTITY_BYTES / 2;

fn stats_of(counts: &Counts) -> TransitionStats {
    TransitionStats {
        success_count: counts.success,
        fail_count: counts.fail,
        success_rate: round3(counts.success_rate()),
        avg_latency_ms: round3(counts.avg_latency_ms()),
    }
}

/// Checks an action's texts; `nested` names its fields as `action.type`, … (a report's), else
/// as `type`, … (a batch item's).
fn check_action(action: &Action, nested: bool) -> Result<()> {
    let names = match nested {
        true => [
            "action.type",
            "action.widget",
            "action.widget_text",
            "action.widget_xpath",
            "action.input_text",
        ],
        false => [
            "type",
            "widget",
            "widget_text",
            "widget_xpath",
            "input_text",
        ],
    };
    validate_text(names[0], &action.action_type, true)?;
    validate_text(names[1], &action.widget_id, false)?;
    validate_text(names[2], &action.widget_text, false)?;
    validate_text(names[3], &action.widget_xpath, false)?;
    validate_text(names[4], &action.input_text, false)
}

/// The app of a step from `from` by `action` to `to`, and the edge it counts on when the app has
/// one.
fn find_edge<'s>(
    state: &'s State,
    from: &str,
    action: &Action,
    to: &str,
) -> Result<(&'s AppGraph, Option<TransitionRef<'s>>)> {
    let from_app = state
        .graph
        .app_of_page(from)
        .ok_or_else(|| AtlasError::PageNotFound(from.to_string()))?;
    if from_app.page(to).is_none() {
        // Not a page of the step's app: of another app, or of none.
        let to_app = state
            .graph
            .app_of_page(to)
            .ok_or_else(|| AtlasError::PageNotFound(to.to_string()))?;
        // Looked up within the step's app, the page is not there (as `get_next_action` answers
        // a page of another app): a request the schema cannot refuse, so not a malformed one.
        return Err(AtlasError::NotFound(format!(
            "to_page {to} is not a page of {} (from_page's app); it is one of {}",
            from_app.app_id(),
            to_app.app_id()
        )));
    }
    // The edge of this very step: found among the page's links rather than by hashing the
    // step into its id (a SHA-256 every report), since the id is a function of the step.
    let existing = from_app
        .between(from, to)
        .find(|t| t.action() == action)
        .or_else(|| {
            // The same step named another way (its widget's id and text where the edge knows
            // only the text, or the other way round) counts on the edge there is: one widget,
            // one edge.
            from_app
                .between(from, to)
                .filter(|t| {
                    let known = t.action();
                    known.action_type == action.action_type
                        && known.input_text == action.input_text
                        && known.same_widget(action)
                })
                .max_by_key(|t| (t.success_count(), std::cmp::Reverse(t.transition_id())))
        });
    Ok((from_app, existing))
}

/// The transition for (from, action, to) after adding counts, new or existing.
fn next_transition(
    state: &State,
    from: &str,
    action: Action,
    to: &str,
    added: Counts,
    now: &str,
) -> Result<(Transition, bool)> {
    let (app, existing) = find_edge(state, from, &action, to)?;
    let updated = existing.is_some();
    Ok((
        counted(app, existing, from, action, to, added, now),
        updated,
    ))
}

/// A step's transition whole after adding `added`: its edge's, or a new one of `app`.
fn counted(
    app: &AppGraph,
    edge: Option<TransitionRef<'_>>,
    from: &str,
    action: Action,
    to: &str,
    added: Counts,
    now: &str,
) -> Transition {
    let mut t = edge
        .map(|t| t.to_transition())
        .unwrap_or_else(|| Transition {
            transition_id: transition_id(from, &action, to),
            app_id: app.app_id().to_string(),
            from_page: from.to_string(),
            to_page: to.to_string(),
            action,
            success_count: 0,
            fail_count: 0,
            latency_total_ms: 0.0,
            latency_samples: 0,
            last_failure_reason: String::new(),
            created_at: now.to_string(),
            updated_at: now.to_string(),
            ..Default::default()
        });
    added.add_to(&mut t);
    t.updated_at = now.to_string();
    t
}

/// The counts one reported step adds.
fn counts_of(success_count: u64, fail_count: u64, latency: Option<u64>) -> Counts {
    Counts {
        success: success_count,
        fail: fail_count,
        latency_total_ms: latency.unwrap_or(0) as f64,
        latency_samples: u64::from(latency.is_some()),
    }
}

/// The checks (and the app version) a session's trace takes now, as a report with no step of its
/// own; none when there is nothing new. A session keeps at most as many checks as steps.
fn checks_step(
    app: &AppGraph,
    session: &str,
    intent: &str,
    app_version: Option<&str>,
    checks: Vec<Check>,
    at: String,
) -> Option<Stepped> {
    let trace_id = trace_id(app.app_id(), session, intent);
    let trace = app.trace(&trace_id);
    let room = MAX_TRACE_STEPS - trace.map_or(0, |t| t.checks.len()).min(MAX_TRACE_STEPS);
    let checks: Vec<Check> = checks.into_iter().take(room).collect();
    let new_version =
        app_version.is_some_and(|v| trace.is_none_or(|t| t.app_version.as_deref() != Some(v)));
    (!checks.is_empty() || new_version).then(|| Stepped {
        app_id: app.app_id().to_string(),
        trace_id,
        session_id: session.to_string(),
        intent: intent.to_string(),
        step: None,
        checks,
        app_version: app_version.map(str::to_string),
        at,
    })
}

/// A `report_transition` call, checked: its action, latency, failure reason and version, and
/// when it came (written out only where a whole entity is: a known edge's report keeps the
/// number).
struct ReportedStep {
    action: Action,
    latency: Option<u64>,
    reason: String,
    version: Option<String>,
    added: Counts,
    at: i64,
}

impl ReportedStep {
    /// Refuses the report, changing nothing, when a field is not what seed 000 allows.
    fn checked(req: &ReportTransitionRequest) -> Result<ReportedStep> {
        validate_text("from_page", &req.from_page, true)?;
        validate_text("to_page", &req.to_page, true)?;
        let action = Action {
            action_type: req.action.action_type.trim().to_string(),
            widget_id: req.action.widget.clone().unwrap_or_default(),
            widget_text: req.action.widget_text.clone().unwrap_or_default(),
            widget_xpath: req.action.widget_xpath.clone().unwrap_or_default(),
            input_text: req.action.input_text.clone().unwrap_or_default(),
        };
        check_action(&action, true)?;
        let latency = match req.latency_ms {
            None => None,
            Some(ms) if (0..=3_600_000).contains(&ms) => Some(ms as u64),
            Some(ms) => {
                return Err(AtlasError::invalid(
                    "latency_ms",
                    format!("latency_ms must be between 0 and 3600000, got {ms}"),
                ));
            }
        };
        let reason = req.reason.clone().unwrap_or_default();
        validate_text("reason", &reason, false)?;
        for (field, value) in [
            ("app_id", &req.app_id),
            ("intent", &req.intent),
            ("session_id", &req.session_id),
        ] {
            if let Some(v) = value {
                validate_text(field, v, false)?;
            }
        }
        let version = crate::versions::version_named("app_version", req.app_version.as_deref())?;
        Ok(ReportedStep {
            added: counts_of(u64::from(req.success), u64::from(!req.success), latency),
            action,
            latency,
            reason,
            version,
            at: atlas_model::unix_seconds_now(),
        })
    }

    /// The version the step was seen in: a successful step's.
    fn seen_in(&self, req: &ReportTransitionRequest) -> Option<&str> {
        self.version.as_deref().filter(|_| req.success)
    }

    fn now(&self) -> String {
        atlas_model::rfc3339_of_seconds(self.at)
    }
}

/// The id of the remembered trace of one session for one intent.
pub(crate) fn trace_id(app_id: &str, session: &str, intent: &str) -> String {
    intent_id(app_id, &format!("trace\u{1f}{session}\u{1f}{intent}"))
}

impl Atlas {
    /// Seed 000 §2.1 `report_transition`.
    pub async fn report_transition(
        &self,
        req: ReportTransitionRequest,
    ) -> Result<ReportTransitionResponse> {
        let step = ReportedStep::checked(&req)?;
        let (response, app_id, report) = self
            .commit_with(|state| {
                let (app, edge) = find_edge(state, &req.from_page, &step.action, &req.to_page)?;
                if let Some(app_id) = req.app_id.as_deref().filter(|a| !a.is_empty())
                    && app_id != app.app_id()
                {
                    // Looked up within the app named, the page is not there.
                    return Err(AtlasError::NotFound(format!(
                        "from_page {} is not a page of {app_id} (it is one of {})",
                        req.from_page,
                        app.app_id()
                    )));
                }
                let (counted, transition_id, counts, updated) =
                    self.count_step(app, edge, &req, &step);
                let response = ReportTransitionResponse {
                    success: true,
                    transition_id: transition_id.clone(),
                    updated,
                    stats: stats_of(&counts),
                };
                let report = Reported {
                    at: step.at,
                    transition_id,
                    added: step.added,
                };
                let mut records = vec![counted];
                if let Some(version) = step.seen_in(&req) {
                    // The step was seen: so were its pages, and the version.
                    records.extend(app_knowing(
                        &app.app,
                        Some(version),
                        VersionSource::Reported,
                    ));
                    records.extend(page_seen(app, &req.from_page, version));
                    if req.to_page != req.from_page {
                        records.extend(page_seen(app, &req.to_page, version));
                    }
                }
                records.extend(self.session_step(app, &req, &step));
                Ok((records, (response, app.app_id().to_string(), report)))
            })
            .await?;
        self.activity.remember(&app_id, report);
        Ok(response)
    }

    /// The record that counts a reported step on its edge, the edge's id and counters after it,
    /// and whether the edge was there before. A known edge's counters grow in place and only
    /// their growth is written; a new edge, or a step in a version the edge was not seen in (or
    /// after it was found gone), writes the edge whole, its versions with it.
    fn count_step(
        &self,
        app: &AppGraph,
        edge: Option<TransitionRef<'_>>,
        req: &ReportTransitionRequest,
        step: &ReportedStep,
    ) -> (Record, String, Counts, bool) {
        let reason = (!req.success && !step.reason.is_empty()).then(|| step.reason.clone());
        let seen_in = step.seen_in(req);
        let marks_version = |edge: &TransitionRef<'_>| {
            seen_in.is_some_and(|v| edge.is_gone() || !edge.seen_in().iter().any(|s| s == v))
        };
        match edge {
            Some(edge) if self.store.takes_added() && !marks_version(&edge) => {
                let mut counts = edge.counts();
                counts.add(step.added);
                let id = edge.transition_id().to_string();
                let record = Record::Added(Added {
                    app_id: app.app_id().to_string(),
                    transition_id: id.clone(),
                    added: step.added,
                    reason,
                    at: step.at,
                });
                (record, id, counts, true)
            }
            edge => {
                let updated = edge.is_some();
                let (from, to) = (&req.from_page, &req.to_page);
                let now = step.now();
                let mut t = counted(app, edge, from, step.action.clone(), to, step.added, &now);
                if let Some(reason) = reason {
                    t.last_failure_reason = reason;
                }
                if let Some(version) = seen_in {
                    t.saw(version);
                }
                let (id, counts) = (t.transition_id.clone(), Counts::of(&t));
                let record = Record::Counted {
                    transition: t,
                    added: step.added,
                };
                (record, id, counts, updated)
            }
        }
    }

    /// The step in its session's trace, where the report names a session and an intent: only
    /// the step where the store replays it once, else the trace whole. A session past its
    /// bounds stops growing; its reports still count.
    fn session_step(
        &self,
        app: &AppGraph,
        req: &ReportTransitionRequest,
        step: &ReportedStep,
    ) -> Option<Record> {
        let session = req.session_id.as_deref().filter(|s| !s.is_empty())?;
        let intent = req.intent.as_deref().filter(|s| !s.is_empty())?;
        let trace_id = trace_id(app.app_id(), session, intent);
        let trace = app.trace(&trace_id);
        let traced = TraceStep {
            from_page: req.from_page.clone(),
            to_page: req.to_page.clone(),
            action: step.action.clone(),
            success: req.success,
            latency_ms: step.latency.unwrap_or(0),
            checked: req.action.checked,
        };
        let room = trace.is_none_or(|t| {
            t.steps.len() < MAX_TRACE_STEPS
                && atlas_model::json_size(t) + atlas_model::json_size(&traced) < MAX_TRACE_BYTES
        });
        let stepped = Stepped {
            app_id: app.app_id().to_string(),
            trace_id,
            session_id: session.to_string(),
            intent: intent.to_string(),
            step: room.then_some(traced),
            checks: vec![],
            app_version: None,
            at: step.now(),
        };
        Some(if self.store.takes_steps() {
            Record::Stepped(stepped)
        } else {
            let mut whole = trace.cloned().unwrap_or_else(|| stepped.new_trace());
            stepped.apply_to(&mut whole);
            Record::Trace(whole)
        })
    }

    /// Keeps the graph's answers a session checked (and the app version it runs on) with the
    /// session, where they make the app's record of trust ([`atlas_model::Tally`]). A session
    /// keeps at most as many checks as steps; past that its checks stop counting, as its steps do.
    pub async fn record_checks(
        &self,
        app_id: &str,
        session: &str,
        intent: &str,
        app_version: Option<&str>,
        checks: Vec<Check>,
    ) -> Result<()> {
        for (field, value) in [
            ("app_id", app_id),
            ("session_id", session),
            ("intent", intent),
        ] {
            validate_text(field, value, true)?;
        }
        if let Some(version) = app_version {
            validate_text("app_version", version, true)?;
        }
        let at = atlas_model::now_rfc3339();
        self.commit_with(|state| {
            let Some(app) = state.graph.app(app_id) else {
                // An app with no page yet has nothing its answers could be about.
                return Ok((vec![], ()));
            };
            let Some(stepped) = checks_step(app, session, intent, app_version, checks, at) else {
                return Ok((vec![], ()));
            };
            let record = if self.store.takes_steps() {
                Record::Stepped(stepped)
            } else {
                let mut whole = app
                    .trace(&stepped.trace_id)
                    .cloned()
                    .unwrap_or_else(|| stepped.new_trace());
                stepped.apply_to(&mut whole);
                Record::Trace(whole)
            };
            Ok((vec![record], ()))
        })
        .await
    }

    /// How a session ended (see [`EndSessionRequest`]). Ending it again overwrites the outcome.
    pub async fn end_session(&self, req: EndSessionRequest) -> Result<EndSessionResponse> {
        self.end_session_checked(req, Vec::new(), None, None).await
    }

    /// [`Atlas::end_session`], keeping with the session, in the same write, the graph's answers
    /// its last screen checked, the app version it ran on (see [`Atlas::record_checks`]) and,
    /// for a finished run, what its last screen showed ([`Trace::ends_on`]).
    ///
    /// [`Trace::ends_on`]: atlas_model::Trace::ends_on
    pub async fn end_session_checked(
        &self,
        req: EndSessionRequest,
        checks: Vec<Check>,
        app_version: Option<&str>,
        ends_on: Option<String>,
    ) -> Result<EndSessionResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("session_id", &req.session_id, true)?;
        validate_text("intent", &req.intent, true)?;
        if let Some(message) = &req.message {
            validate_text("message", message, false)?;
        }
        if let Some(version) = app_version {
            validate_text("app_version", version, false)?;
        }
        // An empty version is no version reported.
        let app_version = app_version.filter(|v| !v.trim().is_empty());
        let trace_id = trace_id(&req.app_id, &req.session_id, &req.intent);
        let now = atlas_model::now_rfc3339();
        self.commit_with(|state| {
            let app = state
                .graph
                .app(&req.app_id)
                .ok_or_else(|| AtlasError::NotFound(format!("app {}", req.app_id)))?;
            let checked = checks_step(
                app,
                &req.session_id,
                &req.intent,
                app_version,
                checks,
                now.clone(),
            );
            let mut trace = match (app.trace(&trace_id), &checked) {
                (Some(trace), _) => trace.clone(),
                (None, Some(checked)) => checked.new_trace(),
                (None, None) => {
                    let response = EndSessionResponse {
                        success: true,
                        updated: false,
                        steps: 0,
                    };
                    return Ok((vec![], response));
                }
            };
            if let Some(checked) = &checked {
                checked.apply_to(&mut trace);
            }
            trace.finished = Some(req.finished);
            trace.ends_on = ends_on.clone().filter(|_| req.finished);
            trace.finish_message = req
                .message
                .as_deref()
                .map(str::trim)
                .filter(|m| req.finished && !m.is_empty())
                .map(str::to_string);
            trace.updated_at = now.clone();
            let response = EndSessionResponse {
                success: true,
                updated: true,
                steps: trace.steps.len(),
            };
            Ok((vec![Record::Trace(trace)], response))
        })
        .await
    }

    /// Seed 000 §2.3 `register_intent`. Registering the same text again updates it.
    pub async fn register_intent(
        &self,
        req: RegisterIntentRequest,
    ) -> Result<RegisterIntentResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("intent_text", &req.intent_text, true)?;
        for (i, k) in req.keywords.iter().enumerate() {
            validate_text(&format!("keywords[{i}]"), k, true)?;
        }
        if let Some(page) = &req.target_page {
            validate_text("target_page", page, true)?;
        }
        let now = atlas_model::now_rfc3339();
        let id = intent_id(&req.app_id, req.intent_text.trim());
        let texts = self.read(|g| {
            let existing = g.app(&req.app_id).and_then(|a| a.intent(&id));
            let mut keywords = existing.map(|i| i.keywords.clone()).unwrap_or_default();
            crate::add_missing(&mut keywords, &req.keywords);
            let text = existing.map_or(req.intent_text.trim(), |i| i.intent_text.as_str());
            DocTexts::of_intent(text, &keywords)
        });
        let ready = self.embed_ahead(&req.app_id, &[(intent_key(&id), texts)])?;
        let existed = self
            .commit_embedded(&ready, |state| {
                let app = state.graph.app(&req.app_id).ok_or_else(|| {
                    AtlasError::NotFound(format!(
                        "app not found: {} (add a page first)",
                        req.app_id
                    ))
                })?;
                if let Some(page) = &req.target_page
                    && app.page(page).is_none()
                {
                    return Err(AtlasError::PageNotFound(page.clone()));
                }
                let existing = app.intent(&id).cloned();
                let existed = existing.is_some();
                let mut intent = existing.unwrap_or_else(|| Intent {
                    intent_id: id.clone(),
                    app_id: req.app_id.clone(),
                    intent_text: req.intent_text.trim().to_string(),
                    target_page: None,
                    keywords: vec![],
                    created_at: now.clone(),
                    ..Default::default()
                });
                if req.target_page.is_some() {
                    intent.target_page = req.target_page.clone();
                }
                crate::add_missing(&mut intent.keywords, &req.keywords);
                Ok((vec![Record::Intent(intent)], existed))
            })
            .await?;
        Ok(RegisterIntentResponse {
            success: true,
            intent_id: id,
            message: if existed {
                "意图已存在，已更新".into()
            } else {
                "意图已注册".into()
            },
        })
    }

    /// Seed 000 §4.1 `batch_add_transitions`: each valid item is added (or its counts added to an
    /// existing edge); invalid items are counted and explained, and written all together.
    pub async fn batch_add_transitions(
        &self,
        req: BatchAddTransitionsRequest,
    ) -> Result<BatchAddTransitionsResponse> {
        if req.transitions.len() > MAX_BATCH_TRANSITIONS {
            return Err(AtlasError::invalid(
                "transitions",
                format!("at most {MAX_BATCH_TRANSITIONS} transitions per call"),
            ));
        }
        let now = atlas_model::now_rfc3339();
        let total = req.transitions.len();
        self.commit_with(|state| {
            let (mut created, mut updated, mut errors) = (0, 0, Vec::new());
            let mut batch: std::collections::HashMap<String, (Transition, Counts)> =
                std::collections::HashMap::new();
            let mut order = Vec::new();
            for (i, item) in req.transitions.iter().enumerate() {
                let action = Action {
                    action_type: item.action_type.trim().to_string(),
                    widget_id: item.widget_id.clone().unwrap_or_default(),
                    widget_text: item.widget_text.clone().unwrap_or_default(),
                    widget_xpath: String::new(),
                    input_text: item.input_text.clone().unwrap_or_default(),
                };
                let checked = validate_text("from_page", &item.from_page, true)
                    .and_then(|()| validate_text("to_page", &item.to_page, true))
                    .and_then(|()| check_action(&action, false));
                let added = counts_of(
                    item.success_count.unwrap_or(0),
                    item.fail_count.unwrap_or(0),
                    item.latency_ms,
                );
                let checked = checked.and_then(|()| {
                    next_transition(state, &item.from_page, action, &item.to_page, added, &now)
                });
                match checked {
                    Ok((t, existed)) => {
                        // The same edge twice in one batch: add the second's counts to the first.
                        if let Some((prev, prev_added)) = batch.get_mut(&t.transition_id) {
                            added.add_to(prev);
                            prev_added.add(added);
                            updated += 1;
                            continue;
                        }
                        if existed {
                            updated += 1
                        } else {
                            created += 1
                        }
                        order.push(t.transition_id.clone());
                        batch.insert(t.transition_id.clone(), (t, added));
                    }
                    Err(e) => errors.push(format!("transitions[{i}]: {e}")),
                }
            }
            let records = order
                .into_iter()
                .filter_map(|id| batch.remove(&id))
                .map(|(transition, added)| Record::Counted { transition, added })
                .collect();
            let failed = errors.len();
            Ok((
                records,
                BatchAddTransitionsResponse {
                    success: failed == 0,
                    total,
                    created,
                    updated,
                    failed,
                    errors,
                },
            ))
        })
        .await
    }
}
