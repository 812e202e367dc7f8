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
//! It keeps no conversations: where it is in the task goes into its own reasoning (`Progress:
//! step 3, field -, screen …`), which the agent keeps in the conversation as it keeps any
//! model's, and is read back from the latest such reply. So runs of one task one after another,
//! or at once on several phones, each go on from their own last answer, and a client that keeps
//! no history gets the task from its start, as from a real model.

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

use crate::agent::{Shown, ideal_action};
use crate::look::Look;
use crate::mistakes::{Mistakes, Then};
use crate::truth::{GroundTruth, IdealProgress, read_ground_truth, step_at};

/// One recorded app and its demonstrated tasks (and the update it was given, if any).
struct AppTasks {
    /// The recording's folder name.
    name: String,
    app: RecordedApp,
    tasks: Vec<GroundTruth>,
    update: Option<Update>,
}

/// Where a conversation stands: the ideal model's progress and the last screen recognised, as
/// its latest reply wrote them.
#[derive(Debug, Default, PartialEq)]
struct Standing {
    progress: IdealProgress,
    screen: Option<String>,
}

/// What opens the note of where the model stands, in its reasoning.
const PROGRESS: &str = "Progress: step ";

impl Standing {
    /// The note in a reply's reasoning (`Progress: step 3, field -, screen s1`), and where the
    /// model errs, the steps it erred on and what it does next because of it (`, erred 4, then
    /// -`; see [`Then::note`]).
    fn note(&self) -> String {
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let erred = match (self.progress.erred, self.progress.then) {
            (0, None) => String::new(),
            (erred, then) => format!(", erred {erred}, then {}", or_dash(then.map(|t| t.note()))),
        };
        format!(
            "{PROGRESS}{}, field {}, screen {}{erred}.",
            self.progress.from,
            or_dash(self.progress.tapped.map(|t| t.to_string())),
            or_dash(self.screen.clone())
        )
    }

    /// The standing the latest of `messages`' replies noted (none noted: the task's start).
    fn of(messages: &[Value]) -> Standing {
        messages
            .iter()
            .rev()
            .filter(|m| m["role"] == "assistant")
            .find_map(|m| Standing::read(&atlas_llm::message_text(m)))
            .unwrap_or_default()
    }

    fn read(reply: &str) -> Option<Standing> {
        let note = &reply[reply.rfind(PROGRESS)? + PROGRESS.len()..];
        // The note ends its line, or its tag where a client keeps the reasoning in one.
        let note = note.split(['\n', '<']).next()?.trim_end();
        let note = note.strip_suffix('.').unwrap_or(note);
        let mut parts = note.split(", ");
        let from = parts.next()?.trim().parse().ok()?;
        let tapped = parts.next()?.strip_prefix("field ")?;
        let screen = parts.next()?.strip_prefix("screen ")?;
        let given = |v: &str| (v != "-").then(|| v.to_string());
        let erred = match parts.next() {
            Some(erred) => erred.strip_prefix("erred ")?.parse().ok()?,
            None => 0,
        };
        let then = match parts.next().map(|u| u.strip_prefix("then ")) {
            Some(Some(t)) => match given(t) {
                Some(t) => Some(Then::read(&t)?),
                None => None,
            },
            Some(None) => return None,
            None => None,
        };
        Some(Standing {
            progress: IdealProgress {
                from,
                tapped: match given(tapped) {
                    Some(t) => Some(t.parse().ok()?),
                    None => None,
                },
                calls: 0,
                erred,
                then,
            },
            screen: given(screen),
        })
    }
}

/// The ideal model of every recorded app of a DroidTask folder.
pub struct IdealServer {
    apps: Vec<AppTasks>,
    glyphs: Option<Glyphs>,
    /// What each recorded screen shows, by app and screen (filled as tasks are asked).
    renderings: Mutex<HashMap<(usize, String), Option<Look>>>,
    /// The latest requests, screenshots left out ([`REQUESTS_KEPT`] of them).
    requests: Mutex<std::collections::VecDeque<Value>>,
    delay: Duration,
    calls: std::sync::atomic::AtomicUsize,
    mistakes: Option<Mistakes>,
}

/// A request the ideal model cannot answer, and why (answered as OpenAI's invalid request).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(&'static str);

impl IdealServer {
    /// Reads `dir` (DroidTask's layout: `user_tasks/<app>/` with `states/`, `events/` and
    /// `taskN.yaml`; or that `user_tasks` folder itself); each answer waits `delay` first, as a
    /// hosted model would.
    pub fn read(dir: &Path, delay: Duration) -> anyhow::Result<IdealServer> {
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
            .collect::<anyhow::Result<Vec<_>>>()?;
        if apps.iter().all(|a| a.tasks.is_empty()) {
            anyhow::bail!("{}: no demonstrated tasks", dir.display());
        }
        Ok(IdealServer {
            apps,
            glyphs: Glyphs::find(),
            renderings: Mutex::default(),
            requests: Mutex::default(),
            delay,
            calls: Default::default(),
            mistakes: None,
        })
    }

    /// The same model erring on a share of its steps, as `atlas eval agent --mistakes` makes it
    /// ([`crate::mistakes`]: the same seed, the same mistakes on the same screens).
    pub fn with_mistakes(mut self, mistakes: Mistakes) -> IdealServer {
        self.mistakes = Some(mistakes);
        self
    }

    /// The same model on every app's seeded update, as `atlas device sim --update SEED` plays
    /// it (made from the recording's steps): it reads the new screens as a person would, taking
    /// the way on through a screen the update put in the way.
    pub fn updated(mut self, seed: u64) -> anyhow::Result<IdealServer> {
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

    /// Whether `reply` tapped a switch of the recorded `screen` (a checkable view under its
    /// point).
    fn tapped_switch(&self, app: usize, screen: Option<&str>, reply: &str) -> bool {
        let Some(recorded) = screen.and_then(|s| self.apps[app].app.screens.get(s)) else {
            return false;
        };
        let Ok(atlas_action::Action::Tap { element, .. }) = atlas_action::parse_reply(reply) else {
            return false;
        };
        let Some(at) = atlas_device::Point::from_relative(
            element[0].into(),
            element[1].into(),
            recorded.width.max(1),
            recorded.height.max(1),
        ) else {
            return false;
        };
        let (x, y) = (i64::from(at.x), i64::from(at.y));
        recorded
            .views
            .iter()
            .any(|v| v.checkable && v.is_shown() && v.contains(x, y))
    }

    fn answer(&self, messages: &[Value]) -> Result<String, Refused> {
        let first = messages
            .iter()
            .find(|m| m["role"] == "user")
            .map(atlas_llm::message_text)
            .ok_or(Refused("no user message"))?;
        let (app, task) = self.task_of(&first).ok_or(Refused(
            "the first user message opens with no DroidTask task this server knows",
        ))?;
        let png = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(image_of)
            .ok_or(Refused(
                "the last user message has no PNG screenshot (data:image/png;base64,…)",
            ))?;
        let seen = self.recognise(app, task, &png);
        let mut standing = Standing::of(messages);
        // Screens that look the same are told apart as a model would: by where the task is.
        let from = standing.progress.from;
        let seen = seen
            .into_iter()
            .min_by_key(|s| step_at(task, s, from).unwrap_or(usize::MAX));
        // A picture it does not know is the last screen with text typed in, right after typing;
        // otherwise a screen off the task, where it answers Back as the in-process model does.
        let last = messages
            .iter()
            .rev()
            .find(|m| m["role"] == "assistant")
            .map(atlas_llm::message_text)
            .unwrap_or_default();
        let typed_last = last.contains("action=\"Type\"");
        // So is a picture right after a tap on a switch the recording never saw flipped there
        // (the screen with the switch in its other state), and one right after a switch it
        // flipped by mistake, which it flips back.
        let flipped = self.tapped_switch(app, standing.screen.as_deref(), &last);
        let unflips = matches!(standing.progress.then, Some(Then::Unflip(_)));
        if seen.is_some() || !(typed_last || flipped || unflips) {
            standing.screen = seen.clone();
        }
        let screen = standing.screen.clone().unwrap_or_default();
        let recorded = self.apps[app].app.screens.get(&screen);
        let shown = Shown {
            id: &screen,
            size: recorded.map_or((1080, 1920), |s| (s.width.max(1), s.height.max(1))),
            views: recorded.map_or(&[], |s| &s.views),
        };
        let update = self.apps[app].update.as_ref();
        let action = ideal_action(
            task,
            shown,
            &mut standing.progress,
            update,
            self.mistakes.as_ref(),
        );
        // As AutoGLM-Phone's server writes its answers (the reasoning, then the action, the
        // model's tags being special tokens a server leaves out): what phone-agent reads.
        let reply = format!(
            "The task's next step on this screen. {}\n{}",
            standing.note(),
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
        Ok(Err(Refused(message))) => {
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
pub fn droidtask_suite(dir: &Path, name: &str) -> anyhow::Result<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_notes_where_the_model_stands_and_the_next_request_reads_it_back() {
        let standing = Standing {
            progress: IdealProgress {
                from: 3,
                tapped: Some(2),
                calls: 0,
                erred: 0,
                then: None,
            },
            screen: Some("state_2023-07-03_215039".into()),
        };
        let reply = format!(
            "The task's next step. {}\ndo(action=\"Back\")",
            standing.note()
        );
        // As phone-agent keeps a reply: its reasoning and action in tags.
        let kept = format!(
            "<think>{}</think><answer>do(action=\"Back\")</answer>",
            reply.lines().next().unwrap()
        );
        let messages = vec![
            json!({"role": "user", "content": "task"}),
            json!({"role": "assistant", "content": "do(action=\"Tap\", element=[1,1])"}),
            json!({"role": "assistant", "content": kept}),
            json!({"role": "user", "content": "screen"}),
        ];
        assert_eq!(Standing::of(&messages), standing);
        let none = Standing {
            screen: None,
            ..Standing::default()
        };
        assert_eq!(
            Standing::read(&none.note()),
            Some(none),
            "nothing tapped, no screen"
        );
        // No note anywhere (a client that keeps no history): the task's start.
        assert_eq!(Standing::of(&messages[..2]), Standing::default());
        assert_eq!(Standing::read("Progress: step x, field -, screen -"), None);
        // A model that errs notes the steps it erred on and the switch to flip back.
        let erring = Standing {
            progress: IdealProgress {
                erred: 0b1010,
                then: Some(Then::Unflip(3)),
                ..IdealProgress::default()
            },
            screen: Some("s".into()),
        };
        assert!(
            erring.note().ends_with(", erred 10, then unflip 3."),
            "{}",
            erring.note()
        );
        assert_eq!(Standing::read(&erring.note()), Some(erring));
        for then in [
            Then::Detour(2),
            Then::Repeat([500, 250]),
            Then::Retype(1),
            Then::Finish,
        ] {
            let standing = Standing {
                progress: IdealProgress {
                    erred: 1,
                    then: Some(then),
                    ..IdealProgress::default()
                },
                screen: None,
            };
            assert_eq!(Standing::read(&standing.note()), Some(standing));
        }
    }
}
