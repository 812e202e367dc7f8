//! MCP's streamable HTTP transport at `/mcp`, for both eras (see atlas-mcp).
//!
//! - A POST whose message is `initialize` opens a session: the answer carries `Mcp-Session-Id`,
//!   and later POSTs with that header are answered in the negotiated revision. DELETE ends it.
//!   GET (a stream for server-initiated messages) is 405: Atlas sends none.
//! - A POST without a session is the stateless 2026-07-28 revision: its `_meta` names the version,
//!   and the `MCP-Protocol-Version` header, when sent, must agree.
//! - Answers are JSON, or one SSE event for a client that accepts only `text/event-stream`.
//!   Notifications get 202. A browser page of another origin, or a request to a host name the
//!   server does not answer to, is refused (403) by the server's cross-site checks (`cross_site.rs`), so a web
//!   page cannot drive the tools of a server on loopback.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use atlas_mcp::{
    Era, INVALID_REQUEST, McpServer, PARSE_ERROR, error, handshake_version, meta_version,
};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use parking_lot::Mutex;
use serde_json::Value;

use crate::routing::route;
use atlas_api::server::{EndMcpSession, Mcp};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
/// Sessions kept; the least recently used is dropped beyond this.
const MAX_SESSIONS: usize = 1024;

pub(crate) struct McpHttp {
    server: McpServer,
    sessions: Mutex<HashMap<String, (String, Instant)>>,
}

pub(crate) fn routes<S: Clone + Send + Sync + 'static>(server: McpServer) -> Router<S> {
    let state = Arc::new(McpHttp {
        server,
        sessions: Mutex::new(HashMap::new()),
    });
    // GET (a stream for server-initiated messages) is the router's 405: Atlas sends none.
    let router = route::<Mcp, _, _, _>(Router::new(), handle_post);
    route::<EndMcpSession, _, _, _>(router, end_session).with_state(state)
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    (status, Json(error(Value::Null, code, message, None))).into_response()
}

/// A body over the server's limit, answered as JSON-RPC (an MCP client reads no other shape).
pub(crate) fn too_large() -> Response {
    rpc_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        INVALID_REQUEST,
        &format!("the message is over {} bytes", crate::MAX_BODY_BYTES),
    )
}

async fn end_session(State(state): State<Arc<McpHttp>>, headers: HeaderMap) -> Response {
    match header(&headers, SESSION_HEADER) {
        Some(id) if state.sessions.lock().remove(id).is_some() => {
            StatusCode::NO_CONTENT.into_response()
        }
        Some(_) => rpc_error(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "unknown or ended session",
        ),
        None => rpc_error(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "no Mcp-Session-Id to end",
        ),
    }
}

async fn handle_post(
    State(state): State<Arc<McpHttp>>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let Ok(body) = body else {
        return too_large();
    };
    let message: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                PARSE_ERROR,
                &format!("not JSON: {e}"),
            );
        }
    };
    // 2025-03-26 allowed batches; each message of one is answered in the same era.
    let (messages, batch) = match message {
        Value::Array(list) if !list.is_empty() => (list, true),
        Value::Array(_) => {
            return rpc_error(StatusCode::BAD_REQUEST, INVALID_REQUEST, "an empty batch");
        }
        Value::Object(_) => (vec![message], false),
        _ => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "a message is a JSON object, or a batch a list of them",
            );
        }
    };
    let mut new_session = None;
    let era = match (
        header(&headers, SESSION_HEADER),
        handshake_version(&messages[0]),
    ) {
        (Some(id), _) => {
            let mut sessions = state.sessions.lock();
            match sessions.get_mut(id) {
                Some((version, used)) => {
                    *used = Instant::now();
                    Era::Handshake(version.clone())
                }
                None => {
                    return rpc_error(
                        StatusCode::NOT_FOUND,
                        INVALID_REQUEST,
                        "unknown or ended session: initialize again",
                    );
                }
            }
        }
        (None, Some(version)) => {
            let id = uuid::Uuid::new_v4().simple().to_string();
            let mut sessions = state.sessions.lock();
            if sessions.len() >= MAX_SESSIONS {
                let oldest = sessions
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    sessions.remove(&oldest);
                }
            }
            sessions.insert(id.clone(), (version.to_string(), Instant::now()));
            new_session = Some(id);
            Era::Handshake(version.to_string())
        }
        (None, None) => {
            if let (Some(sent), Some(named)) =
                (header(&headers, VERSION_HEADER), meta_version(&messages[0]))
                && sent != named
            {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    INVALID_REQUEST,
                    "MCP-Protocol-Version and the request's _meta protocol version differ",
                );
            }
            Era::Modern
        }
    };
    let mut answers = Vec::new();
    for message in &messages {
        if let Some(answer) = state.server.handle(message, &era).await {
            answers.push(answer);
        }
    }
    if answers.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let body = if batch {
        Value::Array(answers)
    } else {
        answers.remove(0)
    };
    let accept = header(&headers, "accept").unwrap_or("application/json");
    let mut response = if accept.contains("application/json")
        || accept.contains("*/*")
        || !accept.contains("text/event-stream")
    {
        Json(body).into_response()
    } else {
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            format!("event: message\ndata: {body}\n\n"),
        )
            .into_response()
    };
    if let Some(id) = new_session
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}
