//! Seed 000 §1.2 `get_next_action`: the next action for an intent, from remembered sessions of
//! the task, the app's labels, or a registered intent's planned way.

use atlas_model::{AtlasError, Result, validate_text};

use crate::query_path::MAX_STEPS_LIMIT;
use crate::{GraphView, Known, Navigator, round3};
use atlas_api::navigation::QueryPathRequest;
use atlas_api::navigation::{
    Basis, CandidateAction, NextAction, NextActionRequest, NextActionResponse,
};

/// How well an intent must match its target before `get_next_action` acts on it. An agent
/// follows the answer without looking, so a loose match is worse than no answer ("unsure", when
/// it asks its LLM); `query_path` shows its confidence and keeps the embedder's own threshold.
const NEXT_ACTION_SURE: f64 = 0.95;

impl<V: GraphView> Navigator<'_, V> {
    /// Seed 000 §1.2 `get_next_action`, with the app's trust in the kind of answer it gives.
    pub fn get_next_action(&self, req: NextActionRequest) -> Result<NextActionResponse> {
        let page = req.current_page.clone();
        // An empty version is no version reported.
        let version = req.app_version.clone().filter(|v| !v.trim().is_empty());
        let (mut response, way) = self.answer(req, version.as_deref())?;
        if let Some(kind) = response.kind() {
            let state = self.view.read();
            let graph = state.graph();
            if let Some(app) = graph.app_of_page(&page) {
                let mut trust = graph.trust(app.app_id(), version.as_deref(), kind, &page);
                trust.irreversible = response
                    .action
                    .as_ref()
                    .is_some_and(|a| crate::memory::irreversible(&a.widget_text, &a.widget_id));
                trust.way = way;
                response.trust = Some(trust);
            }
        }
        Ok(response)
    }

    /// The answer on `version` (none reported: none), and the remembered way it is a step of
    /// (with its record), when it is one.
    fn answer(
        &self,
        req: NextActionRequest,
        version: Option<&str>,
    ) -> Result<(NextActionResponse, Option<atlas_model::WayTrust>)> {
        validate_text("current_page", &req.current_page, true)?;
        validate_text("intent", &req.intent, true)?;
        if let Some(session) = &req.session_id {
            validate_text("session_id", session, false)?;
        }
        if let Some(version) = &req.app_version {
            validate_text("app_version", version, false)?;
        }
        let session = req.session_id.clone();
        let session = session.as_deref().filter(|s| !s.is_empty());
        let (app_id, recalled) = {
            let state = self.view.read();
            let app = state
                .graph()
                .app_of_page(&req.current_page)
                .ok_or_else(|| AtlasError::PageNotFound(req.current_page.clone()))?;
            if let Some(given) = req.app_id.as_deref().filter(|a| !a.is_empty())
                && given != app.app_id()
            {
                // Looked up within the app named, the page is not there.
                return Err(AtlasError::NotFound(format!(
                    "current_page {} is not a page of {given} (it is one of {})",
                    req.current_page,
                    app.app_id()
                )));
            }
            (
                app.app_id().to_string(),
                crate::memory::recall(app, &req.intent, &req.current_page, session, version),
            )
        };
        match recalled {
            Some(recalled) => Ok(recalled_answer(recalled, Basis::Memory)),
            None => Ok((self.unremembered(req, &app_id, session)?, None)),
        }
    }

    /// The answer where no remembered session says anything: the app's labels, else a
    /// registered intent's planned way.
    fn unremembered(
        &self,
        req: NextActionRequest,
        app_id: &str,
        session: Option<&str>,
    ) -> Result<NextActionResponse> {
        // Nobody did this task before: unless the intent is a registered one word for word, go by
        // what the app's labels say, and by a registered intent it resembles only when the
        // labels cannot tell. A resembling intent is often a sibling task ("a note named 'a'" for
        // "a note named 'b'") whose way ends elsewhere. Resolving may embed, so it runs outside
        // the lock.
        let resolved = self.resolve_intent(app_id, &req.intent);
        let sure = resolved
            .as_ref()
            .ok()
            .and_then(|t| t.as_ref())
            .is_some_and(|t| t.score >= 1.0);
        let mut doubt = None;
        let mut unsure = (None, Vec::new());
        if !sure {
            let weighed = {
                let state = self.view.read();
                state.graph().app(app_id).map(|app| {
                    crate::ground::weigh(
                        app,
                        &req.intent,
                        &req.current_page,
                        crate::memory::session_steps(app, session, &req.intent),
                    )
                })
            };
            // Embedding may be slow: outside the lock.
            let grounded = weighed.map(|weighed| {
                self.meaning.learn(&weighed.texts());
                crate::ground::conclude(weighed, self.meaning, self.grounding, req.explain)
            });
            if let Some(grounded) = grounded {
                let candidates = grounded
                    .considered
                    .into_iter()
                    .map(candidate_answer)
                    .collect();
                match grounded.answer {
                    Ok(answer) => {
                        let (mut response, _) = recalled_answer(answer, Basis::Labels);
                        response.confidence = grounded.confidence.map(round3);
                        response.candidates = candidates;
                        return Ok(response);
                    }
                    Err(why) => {
                        doubt = Some(why);
                        unsure = (grounded.confidence.map(round3), candidates);
                    }
                }
            }
        }
        let target = resolved?.filter(|t| t.score >= NEXT_ACTION_SURE);
        let (intent, current_page) = (req.intent.clone(), req.current_page.clone());
        let path = self.route(
            QueryPathRequest {
                app_id: app_id.to_string(),
                intent: req.intent,
                current_page: Some(req.current_page),
                max_steps: Some(MAX_STEPS_LIMIT as i64),
                include_history: None,
            },
            false,
            target,
        )?;
        // Standing on the page a resembling intent ends on says where the task ends, not that it
        // is done: a task that acts there (a setting changed, a dialog answered) ends on the page
        // it first reached to act. Where the labels were unsure, the way's end is the end only
        // once the session has taken a step from this page.
        let acted_here = || {
            let state = self.view.read();
            state.graph().app(app_id).is_some_and(|app| {
                crate::memory::session_steps(app, session, &intent)
                    .iter()
                    .any(|s| s.from_page == current_page)
            })
        };
        let info = path.path.filter(|info| {
            path.success && (!info.steps.is_empty() || doubt.is_none() || acted_here())
        });
        let Some(info) = info else {
            // Why the labels could not tell says more than "no registered intent matched".
            let error = doubt.map_or(path.message, |d| d.message());
            return Ok(NextActionResponse {
                error: Some(error),
                confidence: unsure.0,
                candidates: unsure.1,
                ..Default::default()
            });
        };
        let Some(first) = info.steps.first() else {
            return Ok(NextActionResponse {
                is_complete: true,
                remaining_steps: Some(0),
                basis: Some(Basis::Path),
                ..Default::default()
            });
        };
        Ok(NextActionResponse {
            action: Some(NextAction {
                action_type: first.action_type.clone(),
                widget_id: first.widget_id.clone(),
                widget_text: first.widget_text.clone(),
                widget_xpath: first.widget_xpath.clone(),
                input_text: first.input_text.clone(),
                confidence: first.confidence,
                expected_page: first.expected_page.clone(),
                description: first.description.clone(),
                checked: None,
            }),
            remaining_steps: Some(info.total_steps),
            basis: Some(Basis::Path),
            ..Default::default()
        })
    }
}

/// What remembered tasks or the app's labels said, as an answer, and the way it is a step of.
fn recalled_answer(
    recalled: crate::memory::Recall,
    basis: Basis,
) -> (NextActionResponse, Option<atlas_model::WayTrust>) {
    match recalled {
        crate::memory::Recall::Done {
            confidence,
            message,
            way,
        } => (
            NextActionResponse {
                is_complete: true,
                finish_message: message,
                remaining_steps: Some(0),
                basis: Some(basis),
                confidence: Some(round3(confidence)),
                ..Default::default()
            },
            way,
        ),
        crate::memory::Recall::Act {
            action,
            expected_page,
            remaining,
            confidence,
            way,
            checked,
        } => {
            let why = match basis {
                Basis::Memory => "按记住的同类任务执行",
                Basis::Labels => "按界面文字推断",
                Basis::Path => "按规划路径执行",
            };
            let description = format!("{}（{why}）", action.label());
            let answer = NextActionResponse {
                action: Some(NextAction {
                    checked,
                    ..NextAction::of(action, expected_page, round3(confidence), description)
                }),
                remaining_steps: Some(remaining),
                basis: Some(basis),
                ..Default::default()
            };
            (answer, way)
        }
    }
}

fn candidate_answer(c: crate::ground::Considered) -> CandidateAction {
    let features = c.features.map(|x| {
        crate::ground::FEATURES
            .iter()
            .map(|n| n.to_string())
            .zip(x)
            .collect()
    });
    let (action, is_complete) = match c.proposal {
        crate::ground::Proposal::Finish => (None, true),
        crate::ground::Proposal::Act {
            action,
            expected_page,
        } => {
            let description = action.label();
            (
                Some(NextAction::of(action, expected_page, 0.0, description)),
                false,
            )
        }
    };
    CandidateAction {
        action,
        is_complete,
        probability: round3(c.probability),
        features,
    }
}
