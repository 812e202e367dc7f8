//! `atlas model-sim`: an OpenAI-compatible chat server that plays back a script.
//!
//! A script is JSON: conversations, each chosen when its `match` text occurs in the latest user
//! message (the first without `match` is the fallback), each a list of turns. The k-th model call
//! after that user message gets turn k: text (`content`), tool calls (`tool_calls` of
//! `{name, arguments}`), or both. In a turn's strings, `{{last.PATH}}` is replaced by the value at
//! PATH (dot-separated, numbers index arrays) in the latest tool result, so a scripted model can
//! search, then open what it found:
//!
//! ```json
//! {"conversations": [{"match": "user_profile", "turns": [
//!   {"tool_calls": [{"name": "search_data_resources", "arguments": {"query": "user_profile"}}]},
//!   {"tool_calls": [{"name": "get_resource_context_for_chat",
//!                    "arguments": {"resource_id": "{{last.candidates.0.resource_id}}"}}]},
//!   {"content": "写入 user_profile 的接口：{{last.impl_resource_links.0.impl_id}}"}]}]}
//! ```
//!
//! A conversation with `"session": true` plays an agent's session instead: it is chosen by the
//! first user message (the task), and the k-th model call of the whole session gets turn k.
//!
//! A turn may set `"quirk": "object_arguments"` or `"no_ids"` to answer as some providers do
//! (arguments as an object, tool calls without ids). Streaming (`"stream": true`) answers
//! server-sent events with the text and arguments in fragments, as real endpoints do. Every
//! request is appended to `requests` for a test to inspect (`GET /requests`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// A loaded script.
pub struct Script {
    conversations: Vec<Value>,
    requests: Mutex<Vec<Value>>,
}

/// Why a script cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// It is not JSON.
    #[error("not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    /// It has no `conversations` array.
    #[error("a script has a conversations array")]
    NoConversations,
    /// A conversation has no `turns` array.
    #[error("conversation {0} has no turns array")]
    NoTurns(usize),
}

impl Script {
    /// Reads a script (`{"conversations": [...]}`), or says why it cannot.
    pub fn parse(text: &str) -> Result<Script, ScriptError> {
        let value: Value = serde_json::from_str(text)?;
        let conversations = value
            .get("conversations")
            .and_then(Value::as_array)
            .cloned()
            .ok_or(ScriptError::NoConversations)?;
        for (i, c) in conversations.iter().enumerate() {
            if c.get("turns").and_then(Value::as_array).is_none() {
                return Err(ScriptError::NoTurns(i));
            }
        }
        Ok(Script {
            conversations,
            requests: Mutex::new(Vec::new()),
        })
    }
}

/// The router of the simulated model: `POST /v1/chat/completions` (and without `/v1`),
/// `GET /v1/models`, `GET /requests`.
pub fn router(script: Script) -> Router {
    let state = Arc::new(script);
    Router::new()
        .route("/v1/chat/completions", post(complete))
        .route("/chat/completions", post(complete))
        .route("/v1/models", get(models))
        .route("/requests", get(requests))
        .with_state(state)
}

async fn models() -> Json<Value> {
    Json(
        json!({ "object": "list", "data": [{ "id": "atlas-sim", "object": "model", "owned_by": "atlas" }] }),
    )
}

async fn requests(State(script): State<Arc<Script>>) -> Json<Value> {
    Json(Value::Array(script.requests.lock().await.clone()))
}

fn lookup<'a>(mut at: &'a Value, path: &str) -> Option<&'a Value> {
    for key in path.split('.') {
        at = match key.parse::<usize>() {
            Ok(i) if at.is_array() => at.get(i)?,
            _ => at.get(key)?,
        };
    }
    Some(at)
}

/// Replaces `{{last.PATH}}` in every string of `value`.
fn fill(value: &Value, last: &Value) -> Value {
    match value {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{last.") {
                out.push_str(&rest[..start]);
                let Some(end) = rest[start..].find("}}") else {
                    break;
                };
                let path = &rest[start + 7..start + end];
                match lookup(last, path) {
                    Some(Value::String(v)) => out.push_str(v),
                    Some(v) => out.push_str(&v.to_string()),
                    None => {}
                }
                rest = &rest[start + end + 2..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| fill(v, last)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), fill(v, last)))
                .collect(),
        ),
        other => other.clone(),
    }
}

async fn complete(State(script): State<Arc<Script>>, Json(request): Json<Value>) -> Response {
    script.requests.lock().await.push(request.clone());
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(user_at) = messages
        .iter()
        .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": { "message": "no user message", "type": "invalid_request_error" } })),
        )
            .into_response();
    };
    let (step, turn) = scripted_step(&script, &messages, user_at);
    let content = step
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let calls = tool_calls(&step, turn);
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let model = request.get("model").cloned().unwrap_or(json!("atlas-sim"));
    if request.get("stream").and_then(Value::as_bool) != Some(true) {
        let mut message = json!({ "role": "assistant", "content": if content.is_empty() { Value::Null } else { json!(content) } });
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        return Json(json!({
            "id": "chatcmpl-sim",
            "object": "chat.completion",
            "model": model,
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        }))
        .into_response();
    }
    let body = streamed(&model, &content, &calls, finish);
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

/// The script's step for this request (its tool results filled in) and the turn it is.
fn scripted_step(script: &Script, messages: &[Value], user_at: usize) -> (Value, usize) {
    // A session conversation is chosen by the first user message (an agent's task) and counts
    // its turns over the whole session; others by the latest user message.
    let first_user = messages
        .iter()
        .position(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .unwrap_or(user_at);
    let anchor = |c: &Value| {
        if c.get("session").and_then(Value::as_bool) == Some(true) {
            first_user
        } else {
            user_at
        }
    };
    let last_tool = messages[user_at..]
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
        .map(|m| serde_json::from_str(&atlas_llm::message_text(m)).unwrap_or(Value::Null))
        .unwrap_or(Value::Null);
    let conversation = script
        .conversations
        .iter()
        .find(|c| {
            c.get("match")
                .and_then(Value::as_str)
                .is_some_and(|m| atlas_llm::message_text(&messages[anchor(c)]).contains(m))
        })
        .or_else(|| {
            script
                .conversations
                .iter()
                .find(|c| c.get("match").is_none())
        });
    let turn = messages[conversation.map_or(user_at, anchor)..]
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("assistant"))
        .count();
    let turns = conversation
        .and_then(|c| c.get("turns"))
        .and_then(Value::as_array);
    let step = match turns.and_then(|t| t.get(turn)) {
        Some(step) => fill(step, &last_tool),
        None => json!({ "content": "（脚本没有更多回复 / the script has no more turns）" }),
    };
    (step, turn)
}

/// The step's tool calls as the API gives them (with the step's quirks: arguments as an object,
/// no ids).
fn tool_calls(step: &Value, turn: usize) -> Vec<Value> {
    let quirk = step.get("quirk").and_then(Value::as_str).unwrap_or("");
    step
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let arguments = c.get("arguments").cloned().unwrap_or(json!({}));
            let mut call = json!({
                "type": "function",
                "function": {
                    "name": c.get("name").cloned().unwrap_or_default(),
                    "arguments": if quirk == "object_arguments" { arguments } else { Value::String(arguments.to_string()) },
                },
            });
            if quirk != "no_ids" {
                call["id"] = json!(format!("call_sim_{turn}_{i}"));
            }
            call
        })
        .collect()
}

/// A streamed answer: the content four characters a chunk, each tool call's arguments in two
/// halves, then the finish and `[DONE]`.
fn streamed(model: &Value, content: &str, calls: &[Value], finish: &str) -> String {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({ "id": "chatcmpl-sim", "object": "chat.completion.chunk", "model": model,
                    "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] })
        )
    };
    let mut body = chunk(json!({ "role": "assistant" }), Value::Null);
    let chars: Vec<char> = content.chars().collect();
    for piece in chars.chunks(4) {
        body += &chunk(
            json!({ "content": piece.iter().collect::<String>() }),
            Value::Null,
        );
    }
    for (i, call) in calls.iter().enumerate() {
        let mut head = json!({ "index": i, "type": "function", "function": { "name": call["function"]["name"], "arguments": "" } });
        if let Some(id) = call.get("id") {
            head["id"] = id.clone();
        }
        match &call["function"]["arguments"] {
            Value::String(text) => {
                body += &chunk(json!({ "tool_calls": [head] }), Value::Null);
                let mut middle = text.len() / 2;
                while !text.is_char_boundary(middle) {
                    middle -= 1;
                }
                let (a, b) = text.split_at(middle);
                for part in [a, b] {
                    body += &chunk(
                        json!({ "tool_calls": [{ "index": i, "function": { "arguments": part } }] }),
                        Value::Null,
                    );
                }
            }
            object => {
                head["function"]["arguments"] = object.clone();
                body += &chunk(json!({ "tool_calls": [head] }), Value::Null);
            }
        }
    }
    body += &chunk(json!({}), json!(finish));
    body += "data: [DONE]\n\n";
    body
}
