//! Seed 000 §1.2 `get_next_action`: the next action for an intent, from remembered sessions of
//! the task, the app's labels, or a registered intent's planned way.

use atlas_model::{AnswerKind, AtlasError, Result, Trust, validate_text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::route::{MAX_STEPS_LIMIT, QueryPathRequest};
use crate::{GraphView, Known, Navigator, round3};

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
        let mut response = self.answer(req)?;
        if let Some(kind) = response.kind() {
            let state = self.view.read();
            let graph = state.graph();
            if let Some(app) = graph.app_of_page(&page) {
                response.trust = Some(graph.trust(app.app_id(), version.as_deref(), kind, &page));
            }
        }
        Ok(response)
    }

    fn answer(&self, req: NextActionRequest) -> Result<NextActionResponse> {
        validate_text("current_page", &req.current_page, true)?;
        validate_text("intent", &req.intent, true)?;
        if let Some(session) = &req.session_id {
            validate_text("session_id", session, false)?;
        }
        if let Some(version) = &req.app_version {
            validate_text("app_version", version, false)?;
        }
        let session = req.session_id.as_deref().filter(|s| !s.is_empty());
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
                crate::memory::recall(app, &req.intent, &req.current_page, session),
            )
        };
        if let Some(recalled) = recalled {
            return Ok(recalled_answer(recalled, Basis::Memory));
        }
        // Nobody did this task before: unless the intent is a registered one word for word, go by
        // what the app's labels say, and by a registered intent it resembles only when the
        // labels cannot tell. A resembling intent is often a sibling task ("a note named 'a'" for
        // "a note named 'b'") whose way ends elsewhere. Resolving may embed, so it runs outside
        // the lock.
        let resolved = self.resolve_intent(&app_id, &req.intent);
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
                state.graph().app(&app_id).map(|app| {
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
                        let mut response = recalled_answer(answer, Basis::Labels);
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
                app_id: app_id.clone(),
                intent: req.intent,
                current_page: Some(req.current_page),
                max_steps: Some(MAX_STEPS_LIMIT as i64),
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
            state.graph().app(&app_id).is_some_and(|app| {
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
            }),
            remaining_steps: Some(info.total_steps),
            basis: Some(Basis::Path),
            ..Default::default()
        })
    }
}

/// What remembered tasks or the app's labels said, as an answer.
fn recalled_answer(recalled: crate::memory::Recall, basis: Basis) -> NextActionResponse {
    match recalled {
        crate::memory::Recall::Done {
            confidence,
            message,
        } => NextActionResponse {
            is_complete: true,
            finish_message: message,
            remaining_steps: Some(0),
            basis: Some(basis),
            confidence: Some(round3(confidence)),
            ..Default::default()
        },
        crate::memory::Recall::Act {
            action,
            expected_page,
            remaining,
            confidence,
        } => {
            let why = match basis {
                Basis::Memory => "按记住的同类任务执行",
                Basis::Labels => "按界面文字推断",
                Basis::Path => "按规划路径执行",
            };
            let description = format!("{}（{why}）", action.label());
            NextActionResponse {
                action: Some(NextAction::of(
                    action,
                    expected_page,
                    round3(confidence),
                    description,
                )),
                remaining_steps: Some(remaining),
                basis: Some(basis),
                ..Default::default()
            }
        }
    }
}

/// `get_next_action`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NextActionRequest {
    /// Current page id.
    pub current_page: String,
    /// The goal, e.g. "点外卖".
    pub intent: String,
    /// App id, checked against the page's app when given.
    #[serde(default)]
    pub app_id: Option<String>,
    /// Beyond the seed: the agent's session. Its reported steps (with the same `intent`) tell
    /// which remembered steps were already taken, so a page visited twice in one task gets the
    /// right action each time.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Beyond the seed: the app's version the agent's device runs, as it reports it: the trust
    /// shown is that version's.
    #[serde(default)]
    pub app_version: Option<String>,
    /// Beyond the seed: list every candidate the labels offered with the features the model
    /// weighed (for evaluation and debugging).
    #[serde(default)]
    pub explain: bool,
}

/// An action to take.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NextAction {
    /// click, input, back, …
    pub action_type: String,
    /// The widget's id, when known.
    pub widget_id: String,
    /// The widget's text.
    pub widget_text: String,
    /// The widget's XPath, when known.
    pub widget_xpath: String,
    /// The text to type (input actions).
    pub input_text: String,
    /// How sure the answer is.
    pub confidence: f64,
    /// The page it should lead to.
    pub expected_page: String,
    /// The action in words.
    pub description: String,
}

impl NextAction {
    fn of(
        action: atlas_model::Action,
        expected_page: String,
        confidence: f64,
        description: String,
    ) -> NextAction {
        NextAction {
            action_type: action.action_type,
            widget_id: action.widget_id,
            widget_text: action.widget_text,
            widget_xpath: action.widget_xpath,
            input_text: action.input_text,
            confidence,
            expected_page,
            description,
        }
    }
}

/// `get_next_action`'s answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NextActionResponse {
    /// The action, when there is one to take.
    pub action: Option<NextAction>,
    /// The intent is served where the agent is.
    pub is_complete: bool,
    /// Steps left to the intent's page, this one included, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining_steps: Option<usize>,
    /// Why there is no action, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the answer rests on, so an agent can weigh it: `memory` (remembered sessions of the
    /// same task), `labels` (the app's widget labels read against the intent) or `path` (a
    /// registered intent's page and the planned way there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Beyond the seed, for answers read from labels: the calibrated probability that the best
    /// candidate (the action given, or `candidates[0]` when unsure) is right, measured on apps the
    /// model was not fitted on. An agent may act on `candidates[0]` above its own threshold. For
    /// a remembered session's end (`basis` `memory`, `is_complete`), how alike the remembered
    /// task is to the asked one, as for a remembered action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Beyond the seed, for answers read from labels: the best candidates, most likely first (all
    /// of them with their features when `explain` was asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateAction>,
    /// Beyond the seed, for a remembered session's end: the words its agent finished with (as
    /// `end_session` was told them), the asked task's values in place of the remembered ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_message: Option<String>,
    /// Beyond the seed: how far this app's own record lets the graph be trusted on this kind
    /// of answer (`{kind, checked, wrong, bound}`); an agent's fast path takes the answer only
    /// when `bound` reaches its target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
}

impl NextActionResponse {
    /// The kind of answer it is, for trust: a finish, or what its action rests on.
    pub fn kind(&self) -> Option<AnswerKind> {
        if self.action.is_none() {
            return self.is_complete.then_some(AnswerKind::Finish);
        }
        self.basis.map(|basis| match basis {
            Basis::Memory => AnswerKind::Memory,
            Basis::Labels => AnswerKind::Labels,
            Basis::Path => AnswerKind::Path,
        })
    }
}

/// A candidate answer the labels offered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CandidateAction {
    /// `null` for "the task is done".
    pub action: Option<NextAction>,
    /// The candidate is "the task is done".
    pub is_complete: bool,
    /// Its share of the model's probability among this step's candidates.
    pub probability: f64,
    /// The features the model weighed, by name, when `explain` was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<std::collections::BTreeMap<String, f64>>,
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

/// What an answer rests on: `memory` (remembered sessions of the same task), `labels` (the
/// app's widget labels read against the intent), `path` (a registered intent's page and the
/// planned way there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Each value is told in the enum's doc: a doc comment on a variant would turn the JSON
// Schema's `enum` into a `oneOf` of constants.
#[allow(missing_docs)]
pub enum Basis {
    Memory,
    Labels,
    Path,
}
