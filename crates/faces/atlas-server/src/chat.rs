//! The chat of seed 003 over HTTP: `POST /api/v1/chat` runs the tool-calling loop (atlas-chat)
//! and streams its events as server-sent events; `/chat` is the page that uses it.
//!
//! The page keeps the conversation and sends it whole with each question, tool calls and results
//! included, so the model keeps the ids it found ("它", "这个接口") without server-side sessions.

use std::convert::Infallible;

use atlas_api::chat::{ChatAnswer, ChatMessage, ChatRole, MAX_MESSAGES};
use atlas_api::server as own;
use atlas_chat::{ChatEvent, run_chat};
use atlas_model::AtlasError;
use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::AppState;
use crate::extract::{Answer, RouteBody};

/// `POST /api/v1/chat`: one turn, as server-sent events or (with `"stream": false`) whole.
pub(crate) async fn chat(
    State(state): State<AppState>,
    RouteBody(request): RouteBody<own::Chat>,
) -> Answer<Response> {
    let Some(config) = state.chat.clone() else {
        return Err(AtlasError::NotFound(
            "no model is configured: start atlas serve with --llm-url (and --llm-model, --llm-key)"
                .into(),
        )
        .into());
    };
    let count = request.messages.len();
    if count == 0
        || count > MAX_MESSAGES
        || request.messages.last().map(|m| m.role) != Some(ChatRole::User)
    {
        return Err(AtlasError::invalid(
            "messages",
            format!(
                "messages must be a list of 1 to {MAX_MESSAGES} chat messages, the last the user's question"
            ),
        )
        .into());
    }
    let stream = request.stream.unwrap_or(true);
    let messages: Vec<Value> = request.messages.iter().map(ChatMessage::to_value).collect();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let (tools, context, runtime) = (
        state.tools.clone(),
        state.context(),
        tokio::runtime::Handle::current(),
    );
    tokio::task::spawn_blocking(move || {
        run_chat(&config, tools, context, runtime, messages, sender)
    });
    if stream {
        let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
            let event = receiver.recv().await?;
            let json = serde_json::to_string(&event).unwrap_or_default();
            Some((Ok::<_, Infallible>(Event::default().data(json)), receiver))
        });
        return Ok(Sse::new(events).into_response());
    }
    // Whole: every event, the answer last.
    let mut all = Vec::new();
    while let Some(event) = receiver.recv().await {
        let failed = matches!(event, ChatEvent::Error { .. });
        all.push(event);
        if failed {
            break;
        }
    }
    Ok(Json(ChatAnswer { events: all }).into_response())
}

/// The page's three files, served as they ship: (path, content type, body).
pub(crate) const PAGE_FILES: [(&str, &str, &str); 3] = [
    (
        "/chat",
        "text/html; charset=utf-8",
        include_str!("chat_page/index.html"),
    ),
    (
        "/chat/chat.js",
        "text/javascript; charset=utf-8",
        include_str!("chat_page/chat.js"),
    ),
    (
        "/chat/chat.css",
        "text/css; charset=utf-8",
        include_str!("chat_page/chat.css"),
    ),
];
