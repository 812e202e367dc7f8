//! Remembered ways: `get_ways` (what task memory would replay for an app, each way with its
//! own record), `report_verdict` (what someone other than the agent judged of a session, which
//! decides what the session confirms) and `forget_way`. Forgetting writes the way's key and the time into the app's
//! record rather than deleting sessions: the sessions stay true history (the viewer, `trust`,
//! other ways that share them), only what they said of this way before then stops counting,
//! and the mark travels with the app through the journal, `migrate` and a replica.

pub use atlas_api::learning::{DoubtedWay, ReportVerdictRequest, ReportVerdictResponse};
pub use atlas_api::ways::{
    ForgetWayRequest, ForgetWayResponse, GetWaysRequest, GetWaysResponse, RememberedWay, WayStep,
};
use atlas_model::{AtlasError, Result, TraceStep, Verdict, validate_text};
use atlas_store::Record;

use crate::Atlas;
use crate::learn::trace_id;
use crate::versions::version_named;

fn step_of(step: &TraceStep) -> WayStep {
    WayStep {
        from_page: step.from_page.clone(),
        to_page: step.to_page.clone(),
        action_type: step.action.action_type.clone(),
        widget_text: step.action.widget_text.clone(),
        input_text: step.action.input_text.clone(),
    }
}

fn no_app(app_id: &str) -> AtlasError {
    AtlasError::NotFound(format!("app not found: {app_id}"))
}

impl Atlas {
    /// `get_ways`: the app's remembered ways (for one task, when asked), each with its record
    /// judged at its first step for the version asked about.
    pub fn get_ways(&self, req: GetWaysRequest) -> Result<GetWaysResponse> {
        validate_text("app_id", &req.app_id, true)?;
        if let Some(intent) = &req.intent {
            validate_text("intent", intent, true)?;
        }
        let version = version_named("app_version", req.app_version.as_deref())?;
        self.read(|g| {
            let app = g.app(&req.app_id).ok_or_else(|| no_app(&req.app_id))?;
            let ways =
                atlas_navigate::remembered_ways(app, req.intent.as_deref(), version.as_deref())
                    .into_iter()
                    .map(|w| RememberedWay {
                        record: w.record,
                        steps: w.steps.iter().map(step_of).collect(),
                        runs: w.runs,
                    })
                    .collect();
            Ok(GetWaysResponse {
                app_id: req.app_id.clone(),
                ways,
            })
        })
    }

    /// `report_verdict`: the session's verdict kept with it (a second verdict replaces the
    /// first); a failed one also keeps, with the session, a wrong check of each remembered way
    /// it replayed, from the step where it left the passing runs' steps (else at the way's
    /// finish) — once, however often it is said again. A session with no steps reported is not
    /// found among the remembered ones: nothing is written, and `updated` says so.
    pub async fn report_verdict(&self, req: ReportVerdictRequest) -> Result<ReportVerdictResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("session_id", &req.session_id, true)?;
        validate_text("intent", &req.intent, true)?;
        for (field, text) in [("reason", &req.reason), ("judge", &req.judge)] {
            if let Some(text) = text {
                validate_text(field, text, false)?;
            }
        }
        let id = trace_id(&req.app_id, &req.session_id, &req.intent);
        self.commit_with(|state| {
            let app = state
                .graph
                .app(&req.app_id)
                .ok_or_else(|| no_app(&req.app_id))?;
            let Some(trace) = app.trace(&id) else {
                let response = ReportVerdictResponse {
                    success: true,
                    updated: false,
                    steps: 0,
                    doubted: Vec::new(),
                };
                return Ok((vec![], response));
            };
            let at = atlas_model::now_ms();
            let already_failed = trace.judged_failed();
            let doubts = if req.passed || already_failed {
                Vec::new()
            } else {
                atlas_navigate::doubts_of_failed_run(app, trace, at)
            };
            let mut trace = trace.clone();
            trace.verdict = Some(Verdict {
                passed: req.passed,
                reason: req.reason.as_deref().unwrap_or_default().trim().to_string(),
                judge: req.judge.as_deref().unwrap_or_default().trim().to_string(),
                at,
            });
            let doubted = doubts
                .iter()
                .map(|c| DoubtedWay {
                    way: c.way.clone(),
                    step: c.step,
                })
                .collect();
            trace.checks.extend(doubts);
            trace.updated_at = atlas_model::now_rfc3339();
            let response = ReportVerdictResponse {
                success: true,
                updated: true,
                steps: trace.steps.len(),
                doubted,
            };
            Ok((vec![Record::Trace(trace)], response))
        })
        .await
    }

    /// `forget_way`: the way's sessions and checks so far no longer count for it; the next
    /// finished run that goes it confirms it anew. A key the app remembers no way by is not
    /// found, and nothing is written.
    pub async fn forget_way(&self, req: ForgetWayRequest) -> Result<ForgetWayResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("way", &req.way, true)?;
        self.commit_with(|state| {
            let graph = state
                .graph
                .app(&req.app_id)
                .ok_or_else(|| no_app(&req.app_id))?;
            let way = atlas_navigate::remembered_ways(graph, None, None)
                .into_iter()
                .find(|w| w.record.way == req.way)
                .ok_or_else(|| {
                    AtlasError::NotFound(format!(
                        "{} remembers no way {} (get_ways lists those it does)",
                        req.app_id, req.way
                    ))
                })?;
            let at = atlas_model::now_ms();
            let mut app = graph.app.clone();
            app.forgotten_ways.insert(req.way.clone(), at);
            app.updated_at = atlas_model::now_rfc3339();
            let response = ForgetWayResponse {
                app_id: req.app_id.clone(),
                way: req.way.clone(),
                forgotten_at: app.updated_at.clone(),
                confirmations_forgotten: way.record.confirmed,
            };
            Ok((vec![Record::App(app)], response))
        })
        .await
    }
}
