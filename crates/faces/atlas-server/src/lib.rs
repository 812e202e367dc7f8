//! The HTTP server: every tool of the registry at `POST /api/v1/{name}`, plus `/healthz`, the
//! OpenAPI document, the OpenAI function list, Dify's routes, MCP, the live events, and two
//! pages that use them: the chat (`/chat`) and the viewer (`/`).
//!
//! Key design decision: **the server owns no interface logic.** It reads bytes, hands JSON to the
//! registry and maps [`AtlasError`] to a status through `ErrorCode::http_status`, so a new tool is
//! served here (and in the OpenAPI document) the moment it is registered. Bodies are read as raw
//! bytes so that malformed JSON and oversize bodies get seed 000's error format too, not axum's
//! plain-text rejections.

mod business_graph;
mod chat;
mod cross_site;
mod dify;
mod extract;
mod listen;
mod loopback;
mod mcp;
mod openapi;
mod routing;
mod viewer;

use std::sync::Arc;

pub use cross_site::Access;
pub use extract::ApiError;
pub use listen::{HEADER_TIMEOUT, Limits, bind, serve_within};
pub use loopback::Loopback;

use atlas_api::server::{self as own, FunctionDefinition, HealthAnswer};
use atlas_model::AtlasError;
use atlas_registry::{ToolContext, ToolRegistry};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use extract::{Answer, RawBody, RouteQuery};
use routing::route;

/// What every answer says of itself to a browser: its pages and their assets run only their own
/// scripts and styles (no inline code, nothing from elsewhere), are framed by no other page
/// (clickjacking), are never sniffed into another type, and send no referrer.
const SECURITY_HEADERS: [(&str, &str); 5] = [
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'",
    ),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
];

/// Seed 001 §9.2's 10 MB, applied to request bodies.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// What every route works on.
#[derive(Clone)]
pub struct AppState {
    /// The domains, as the registry serves them: the GUI graph, the business graph, the
    /// knowledge bases.
    pub services: ToolContext,
    /// The tools the routes, `/mcp` and the chat serve.
    pub tools: Arc<ToolRegistry>,
    /// The bearer token every API route wants, when the server was given one.
    pub token: Option<Arc<str>>,
    /// The model the chat calls, when one is configured.
    pub chat: Option<Arc<atlas_chat::ChatConfig>>,
    /// Which pages and host names besides this machine's may use the server (see [`Access`]).
    pub access: Arc<Access>,
}

impl AppState {
    /// A server for this machine's own programs (an evaluation, a benchmark, a test runner's
    /// graph): no token, no chat, the default access rules.
    pub fn local(services: ToolContext, tools: Arc<ToolRegistry>) -> AppState {
        AppState {
            services,
            tools,
            token: None,
            chat: None,
            access: Default::default(),
        }
    }

    /// What the tools work on.
    pub fn context(&self) -> ToolContext {
        ToolContext {
            // With a token, no request reaches a tool without it.
            holds_server_token: self.token.is_some(),
            ..self.services.clone()
        }
    }
}

/// The router with every route.
pub fn router(state: AppState) -> Router {
    // Dify's routes check each dataset's own key (or the server token) themselves.
    let dify = state
        .services
        .datasets(state.token.clone())
        .map(dify::routes)
        .unwrap_or_default();
    let mcp = mcp::routes(atlas_mcp::McpServer::new(
        state.tools.clone(),
        state.context(),
    ));
    let access = state.access.clone();
    let services = state.services.clone();
    let router = Router::new();
    let router = route::<own::OpenApi, _, _, _>(router, openapi_document);
    let router = route::<own::OpenApiAtRoot, _, _, _>(router, openapi_document);
    let router = route::<own::Tools, _, _, _>(router, tool_list);
    let router = route::<own::Chat, _, _, _>(router, chat::chat);
    let router = route::<own::Events, _, _, _>(router, events);
    let router = route::<own::BusinessGraph, _, _, _>(router, business_graph::export);
    let router = route::<own::ReplaceBusinessGraph, _, _, _>(router, business_graph::import);
    let router = route::<own::Screenshot, _, _, _>(router, viewer::screenshot);
    let router = router
        .route("/api/v1/{name}", post(call_tool))
        .merge(mcp)
        .fallback(|| async {
            ApiError(AtlasError::NotFound("no such route".into())).into_response()
        })
        .layer(middleware::from_fn(refuse_oversize))
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            ApiError(AtlasError::Graph("internal error".into())).into_response()
        }))
        .with_state(state)
        .merge(dify);
    // Open even with a token, for health probes: it says the process answers, whether its
    // store takes writes (503 while its database is away, for a load balancer to send writers
    // to another replica) and whether its checkpoints fail (200 and "degraded": it serves and
    // keeps every write, in its journal), nothing more.
    let router = route::<own::Health, _, _, _>(router, move || async move { health(&services) });
    // The pages themselves hold no data: they ask for the token when the API wants one.
    chat::PAGE_FILES
        .iter()
        .chain(&viewer::PAGE_FILES)
        .chain(&SHARED_PAGE_FILES)
        .fold(router, |router, &(path, content_type, body)| {
            router.route(
                path,
                get(move || async move { ([(header::CONTENT_TYPE, content_type)], body) }),
            )
        })
        .layer(middleware::from_fn_with_state(
            access,
            cross_site::refuse_cross_site,
        ))
        .layer(middleware::from_fn(security_headers))
}

/// `GET /healthz`'s answer (see [`router`]).
fn health(services: &ToolContext) -> (StatusCode, Json<HealthAnswer>) {
    let (status, body) = services.health().answer();
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
        Json(body),
    )
}

/// What the viewer and the chat page share (the token, the element builder, the event reader),
/// loaded by both before their own scripts.
const SHARED_PAGE_FILES: [(&str, &str, &str); 1] = [(
    "/shared/atlas.js",
    "text/javascript; charset=utf-8",
    include_str!("shared_page/atlas.js"),
)];

async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, header::HeaderValue::from_static(value));
    }
    response
}

/// The credentials of `Authorization: Bearer …` (the scheme in any case, as RFC 9110 says).
pub(crate) fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, credentials) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// The body's length as its `Content-Length` announces it.
pub(crate) fn announced_length(headers: &axum::http::HeaderMap) -> Option<usize> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// Refuses a body announced as too large before reading any of it.
async fn refuse_oversize(request: Request, next: Next) -> Response {
    if announced_length(request.headers()).is_some_and(|n| n > MAX_BODY_BYTES) {
        if request.uri().path() == <own::Mcp as atlas_api::routes::Route>::PATH {
            return mcp::too_large();
        }
        return ApiError(AtlasError::PayloadTooLarge {
            limit: MAX_BODY_BYTES,
        })
        .into_response();
    }
    next.run(request).await
}

async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if let Some(token) = &state.token
        && bearer(request.headers()) != Some(token.as_ref())
    {
        return ApiError(AtlasError::Unauthorized).into_response();
    }
    next.run(request).await
}

/// `GET /api/v1/events[?app_id=A]`: what the graph learns, as server-sent events (`event:` the
/// type, `data:` its JSON). A client that falls more than the service's buffer behind is
/// disconnected (it reconnects and reloads), so a slow viewer never slows a write.
async fn events(
    State(state): State<AppState>,
    RouteQuery(query): RouteQuery<own::Events>,
) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    let receiver = state.services.events();
    let app = query.app_id.filter(|a| !a.is_empty());
    let stream = futures_util::stream::unfold(receiver, move |mut receiver| {
        let app = app.clone();
        async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => {
                        if app.as_deref().is_some_and(|a| event["app_id"] != a) {
                            continue;
                        }
                        let kind = event["type"].as_str().unwrap_or("event").to_string();
                        let sse = Event::default().event(kind).data(event.to_string());
                        return Some((Ok::<_, std::convert::Infallible>(sse), receiver));
                    }
                    // Lagged (too slow) or closed: end the stream.
                    Err(_) => return None,
                }
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn openapi_document(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(openapi::document(&state.tools))
}

async fn tool_list(State(state): State<AppState>) -> Json<Vec<FunctionDefinition>> {
    Json(state.tools.iter().map(|t| t.openai_function()).collect())
}

/// `POST /api/v1/{name}`: the tool `name`, its body read and checked by the registry.
async fn call_tool(
    State(state): State<AppState>,
    Path(name): Path<String>,
    RawBody(body): RawBody,
) -> Answer<Response> {
    let tool = state
        .tools
        .get(&name)
        .ok_or_else(|| AtlasError::NotFound(format!("no interface named {name}")))?;
    let json = tool.call_json(state.context(), Box::new(body)).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

/// Serves until `shutdown` resolves, then returns (the caller checkpoints).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = Limits::for_process(DEFAULT_MAX_CONNECTIONS);
    serve_within(listener, state, limits, shutdown).await
}

/// Connections `atlas serve` holds at once unless told otherwise (`--max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
