//! `atlas model-sim --droidtask DIR`: DroidTask's ideal model over HTTP, an OpenAI-compatible
//! chat endpoint, so a suite of DroidTask tasks runs end to end through the interface a real
//! model uses (`atlas test run`, `atlas bench fleet`).
//!
//! It plays the model a vision model would be: it knows the task from the conversation's first
//! user message (the agent writes the task first), recognises the recorded screen from the
//! screenshot it is shown, and answers the ground truth's action there ([`ideal_action`]) as
//! AutoGLM-Phone's server writes it: a sentence of reasoning, then the action, nothing after.
//!
//! Key design decision: **the screen is recognised from the picture, not told.** The simulated
//! phone renders a screen the same way every time, so the server renders the task's recorded
//! screens itself and compares what they show ([`crate::look`]: decoded pixels, so a client that
//! writes the screenshot again, or scales it, shows the same screen). A screenshot it does not
//! know is a screen off the task (answered with Back, as the in-process model answers), or,
//! right after typing, the last screen with the text in its field, which the recording never
//! showed. Nothing but the request goes from the agent to the model, as with a real model.
//! Conversations are told apart by their first user message (task and first screen): two runs
//! of one task at the same moment would share their progress, so a suite holds a task once.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atlas_device_sim::RecordedApp;
use atlas_device_sim::render::{Glyphs, screen_pixels};
use atlas_device_sim::update::Update;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{Value, json};

use crate::agent::{GroundTruth, IdealProgress, ideal_action, read_ground_truth, step_at};
use crate::look::Look;

/// One recorded app and its demonstrated tasks (and the update it was given, if any).
struct AppTasks {
    /// The recording's folder name.
    name: String,
    app: RecordedApp,
    tasks: Vec<GroundTruth>,
    update: Option<Update>,
}

/// A conversation's progress: the ideal model's, the last screen recognised, and how many
/// messages the conversation had at its last call (fewer now: a new run of the task).
#[derive(Default)]
struct Conversation {
    progress: IdealProgress,
    screen: Option<String>,
    messages: usize,
}

/// The ideal model of every recorded app of a DroidTask folder.
pub struct IdealServer {
    apps: Vec<AppTasks>,
    glyphs: Option<Glyphs>,
    /// What each recorded screen shows, by app and screen (filled as tasks are asked).
    renderings: Mutex<HashMap<(usize, String), Option<Look>>>,
    conversations: Mutex<HashMap<String, Conversation>>,
    /// The latest requests, screenshots left out ([`REQUESTS_KEPT`] of them).
    requests: Mutex<std::collections::VecDeque<Value>>,
    delay: Duration,
    calls: std::sync::atomic::AtomicUsize,
}

impl IdealServer {
    /// Reads `dir` (DroidTask's layout: `user_tasks/<app>/` with `states/`, `events/` and
    /// `taskN.yaml`; or that `user_tasks` folder itself); each answer waits `delay` first, as a
    /// hosted model would.
    pub fn read(dir: &Path, delay: Duration) -> Result<IdealServer, String> {
        let apps = atlas_device_sim::app::recording_folders(dir)?
            .iter()
            .map(|folder| {
                Ok(AppTasks {
                    name: folder
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    app: RecordedApp::read(folder)?,
                    tasks: read_ground_truth(folder)?.0,
                    update: None,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        if apps.iter().all(|a| a.tasks.is_empty()) {
            return Err(format!("{}: no demonstrated tasks", dir.display()));
        }
        Ok(IdealServer {
            apps,
            glyphs: Glyphs::find(),
            renderings: Mutex::default(),
            conversations: Mutex::default(),
            requests: Mutex::default(),
            delay,
            calls: Default::default(),
        })
    }

    /// The same model on every app's seeded update, as `atlas device sim --update SEED` plays
    /// it (made from the recording's steps): it reads the new screens as a person would, taking
    /// the way on through a screen the update put in the way.
    pub fn updated(mut self, seed: u64) -> Result<IdealServer, String> {
        for app in &mut self.apps {
            let (next, update) = atlas_device_sim::update::update(&app.app, seed, &[])?;
            app.app = next;
            app.update = Some(update);
        }
        Ok(self)
    }

    /// Every app as this model plays it (updated, when it is), by its recording's folder name:
    /// the apps simulated phones are to have installed.
    pub fn apps(&self) -> Vec<(String, RecordedApp)> {
        self.apps
            .iter()
            .map(|a| (a.name.clone(), a.app.clone()))
            .collect()
    }

    /// Tasks known, over every app.
    pub fn tasks(&self) -> usize {
        self.apps.iter().map(|a| a.tasks.len()).sum()
    }

    /// The router: `POST /v1/chat/completions` (and without `/v1`), `GET /v1/models`,
    /// `GET /requests` (the latest requests, as the scripted model lists them).
    pub fn router(self) -> Router {
        Router::new()
            .route("/v1/chat/completions", post(complete))
            .route("/chat/completions", post(complete))
            .route("/v1/models", get(models))
            .route("/requests", get(requests))
            .with_state(Arc::new(self))
    }

    /// The task whose instruction opens `first` (the longest, where one opens another).
    fn task_of(&self, first: &str) -> Option<(usize, &GroundTruth)> {
        self.apps
            .iter()
            .enumerate()
            .flat_map(|(i, a)| a.tasks.iter().map(move |t| (i, t)))
            .filter(|(_, t)| !t.instruction.is_empty() && first.starts_with(&t.instruction))
            .max_by_key(|(_, t)| t.instruction.len())
    }

    /// The recorded screens of `task` that `png` shows (none when it is not a PNG, or shows a
    /// screen of none of them).
    fn recognise(&self, app: usize, task: &GroundTruth, png: &[u8]) -> Vec<String> {
        let Some(seen) = Look::of_png(png) else {
            return Vec::new();
        };
        let recording = &self.apps[app].app;
        let update = self.apps[app].update.as_ref();
        let added: Vec<String> = update.map(|u| u.added_screens()).unwrap_or_default();
        let mut renderings = self.renderings.lock().unwrap_or_else(|e| e.into_inner());
        let mut same = Vec::new();
        for screen in task
            .steps
            .iter()
            .flat_map(|(screens, _)| screens)
            .chain(&added)
        {
            let look = renderings.entry((app, screen.clone())).or_insert_with(|| {
                let recorded = recording.screens.get(screen)?;
                let (w, h) = (recorded.width.max(1), recorded.height.max(1));
                let rgb =
                    screen_pixels(w, h, &recorded.views, &HashMap::new(), self.glyphs.as_ref());
                Look::of_pixels(&rgb, w as usize, h as usize, 3)
            });
            if look.as_ref().is_some_and(|l| l.differing_cells(&seen) == 0)
                && !same.contains(screen)
            {
                same.push(screen.clone());
            }
        }
        same
    }

    fn answer(&self, messages: &[Value]) -> Result<String, String> {
        let first = messages
            .iter()
            .find(|m| m["role"] == "user")
            .map(atlas_llm::message_text)
            .ok_or("no user message")?;
        let (app, task) = self
            .task_of(&first)
            .ok_or("the first user message opens with no DroidTask task this server knows")?;
        let png = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(image_of)
            .ok_or("the last user message has no PNG screenshot (data:image/png;base64,…)")?;
        let seen = self.recognise(app, task, &png);
        let key = format!("{app}\u{0}{first}");
        let mut conversations = self.conversations.lock().unwrap_or_else(|e| e.into_inner());
        let conversation = conversations.entry(key).or_default();
        if messages.len() <= conversation.messages {
            *conversation = Conversation::default();
        }
        conversation.messages = messages.len();
        // Screens that look the same are told apart as a model would: by where the task is.
        let from = conversation.progress.from;
        let seen = seen
            .into_iter()
            .min_by_key(|s| step_at(task, s, from).unwrap_or(usize::MAX));
        // A picture it does not know is the last screen with text typed in, right after typing;
        // otherwise a screen off the task, where it answers Back as the in-process model does.
        let typed_last = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .is_some_and(|m| atlas_llm::message_text(m).contains("action=\"Type\""));
        if seen.is_some() || !typed_last {
            conversation.screen = seen.clone();
        }
        let screen = conversation.screen.clone().unwrap_or_default();
        let size = self.apps[app]
            .app
            .screens
            .get(&screen)
            .map_or((1080, 1920), |s| (s.width.max(1), s.height.max(1)));
        let update = self.apps[app].update.as_ref();
        let action = ideal_action(task, &screen, size, &mut conversation.progress, update);
        // As AutoGLM-Phone's server writes its answers (the reasoning, then the action, the
        // model's tags being special tokens a server leaves out): what phone-agent reads.
        let reply = format!(
            "The task's next step on this screen.\n{}",
            action.to_grammar()
        );
        tracing::debug!(task = %task.name, recognised = ?seen, messages = messages.len(), %reply, "ideal answer");
        Ok(reply)
    }
}

fn image_of(message: &Value) -> Option<Vec<u8>> {
    message["content"].as_array()?.iter().find_map(|part| {
        let url = part["image_url"]["url"].as_str()?;
        let data = url.strip_prefix("data:image/png;base64,")?;
        base64::engine::general_purpose::STANDARD.decode(data).ok()
    })
}

async fn models() -> Json<Value> {
    Json(
        json!({"object": "list", "data": [{"id": "droidtask-ideal", "object": "model", "owned_by": "atlas"}]}),
    )
}

/// How many requests `GET /requests` keeps: a fleet's day sends thousands, each with a screenshot.
const REQUESTS_KEPT: usize = 1000;

/// `GET /requests`: the latest requests, oldest first, each screenshot as its size.
async fn requests(State(server): State<Arc<IdealServer>>) -> Json<Value> {
    let kept = server.requests.lock().unwrap_or_else(|e| e.into_inner());
    Json(Value::Array(kept.iter().cloned().collect()))
}

/// `request` with each image's data replaced by a note of its size.
fn without_images(request: &Value) -> Value {
    match request {
        Value::String(s) if s.starts_with("data:image/") => Value::String(format!(
            "data:image/… ({} bytes of base64 left out)",
            s.len()
        )),
        Value::Array(items) => Value::Array(items.iter().map(without_images).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), without_images(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

async fn complete(State(server): State<Arc<IdealServer>>, Json(request): Json<Value>) -> Response {
    {
        let mut kept = server.requests.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == REQUESTS_KEPT {
            kept.pop_front();
        }
        kept.push_back(without_images(&request));
    }
    tokio::time::sleep(server.delay).await;
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let answered = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || server.answer(&messages)).await
    };
    let content = match answered {
        Ok(Ok(content)) => content,
        Ok(Err(message)) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
            )
                .into_response();
        }
        Err(e) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"error": {"message": e.to_string(), "type": "server_error"}})),
            )
                .into_response();
        }
    };
    let n = server
        .calls
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let model = request["model"].as_str().unwrap_or("droidtask-ideal");
    if request["stream"].as_bool() == Some(true) {
        let chunk = json!({"id": format!("ideal-{n}"), "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": null}]});
        let end = json!({"id": format!("ideal-{n}"), "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
        let body = format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n");
        return (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            body,
        )
            .into_response();
    }
    Json(json!({"id": format!("ideal-{n}"), "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}))
    .into_response()
}

/// A suite (for `atlas test run`) of every demonstrated task of `dir`: each starts on its
/// recorded first screen and passes when the model finishes on its recorded last screen; its
/// app is the recording's folder name (what `simulate:` phones know it by).
pub fn droidtask_suite(dir: &Path, name: &str) -> Result<Value, String> {
    let mut tests = Vec::new();
    for folder in atlas_device_sim::app::recording_folders(dir)? {
        let app = folder
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for task in read_ground_truth(&folder)?.0 {
            let (Some(first), Some(last)) = (task.steps.first(), task.steps.last()) else {
                continue;
            };
            tests.push(json!({
                "name": format!("{app}/{}", task.name),
                "task": task.instruction,
                "app": app,
                "start": first.0.first(),
                "expect": {"page": last.0, "finish": true},
                "max_steps": task.steps.len() * 3 + 5,
                "tags": [app],
            }));
        }
    }
    Ok(json!({"name": name, "tests": tests}))
}
