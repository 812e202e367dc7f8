//! What keeps the web pages a person has open from driving the Atlas on their machine.
//!
//! A page of any site can make the browser send requests to `127.0.0.1:7700`. Three checks, on
//! every route, close the ways it can:
//!
//! - **Host** (DNS rebinding): a page at `evil.example` whose name is made to resolve to
//!   127.0.0.1 talks to Atlas as a same-origin page, but its requests say `Host: evil.example`.
//!   Atlas answers only to host names it was given (`--allow-host`), `localhost`, and IP
//!   addresses: a rebinding needs a name, and a browser sends an IP as Host only when the page
//!   itself was loaded from that IP.
//! - **Origin**: a request that changes something (any method but GET, HEAD, OPTIONS) sent by a
//!   page is refused unless the page comes from this server, from this machine (`localhost`,
//!   loopback addresses: local tools such as an MCP inspector), or from an origin the operator
//!   allowed (`--allow-origin`). Programs that are not browsers send no Origin and pass.
//! - **Content type**: a body must be `application/json` (multipart on the upload routes; each
//!   route's type says which, and what is no route reads no body and gets the router's 404). A
//!   page can send `text/plain`, form or multipart bodies to anyone without asking first (a
//!   "simple" request); a JSON body makes the browser ask the server (a CORS preflight), which
//!   Atlas does not grant.
//!
//! Refusals are 403 and 415 in the error format of the route's family (seed 000's, Dify's, the
//! External Knowledge API's, JSON-RPC for `/mcp`), so each client reads them as it reads any.

use atlas_api::routes::BodyKind;
use atlas_model::AtlasError;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// Who may send requests besides this machine's own programs.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Origins (`https://dash.example.com`) whose pages may change things; `*` allows any.
    pub allowed_origins: Vec<String>,
    /// Host names (`atlas.internal`) the server answers to besides `localhost` and addresses.
    pub allowed_hosts: Vec<String>,
}

/// Why a request was refused.
enum Refusal {
    Forbidden(String),
    UnsupportedMediaType(String),
}

impl Access {
    fn check(&self, method: &Method, path: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = header(headers, header::HOST.as_str()).unwrap_or("");
        if !host.is_empty() && !self.host_allowed(host) {
            return Err(Refusal::Forbidden(format!(
                "this server does not answer to the host name {host:?} (start it with --allow-host to add one)"
            )));
        }
        let changes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if !changes {
            return Ok(());
        }
        if let Some(origin) = header(headers, header::ORIGIN.as_str())
            && !self.origin_allowed(origin, host)
        {
            return Err(Refusal::Forbidden(format!(
                "requests from pages of {origin} are not allowed (start the server with --allow-origin to allow them)"
            )));
        }
        // A request with no body has no content type to check (and a method the route does not
        // take then gets the router's 405, not a 415).
        let has_body = headers.contains_key(header::TRANSFER_ENCODING)
            || header(headers, header::CONTENT_LENGTH.as_str()).is_some_and(|n| n.trim() != "0");
        if has_body && matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
            let given = header(headers, header::CONTENT_TYPE.as_str()).unwrap_or("");
            let essence = essence_of(headers);
            // What is not a route reads no body: the router answers it (404, 405).
            let Some(body) = body_of(method, path) else {
                return Ok(());
            };
            let upload = body == BodyKind::Multipart;
            let accepted = if upload {
                essence == "multipart/form-data"
            } else {
                is_json(&essence)
            };
            if !accepted {
                let wanted = if upload {
                    "multipart/form-data"
                } else {
                    "application/json"
                };
                let given = if given.is_empty() { "none" } else { given };
                return Err(Refusal::UnsupportedMediaType(format!(
                    "the body must be {wanted} (Content-Type: {given})"
                )));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = hostname(host);
        is_ip(name)
            || name.eq_ignore_ascii_case("localhost")
            || name.to_ascii_lowercase().ends_with(".localhost")
            || self
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name) || h.eq_ignore_ascii_case(host))
    }

    fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        if self
            .allowed_origins
            .iter()
            .any(|o| o == "*" || o.trim_end_matches('/').eq_ignore_ascii_case(origin))
        {
            return true;
        }
        // "null" (a sandboxed frame, a file) has no host and is refused here.
        let Some((_, origin_host)) = origin.split_once("://") else {
            return false;
        };
        let origin_host = origin_host.split('/').next().unwrap_or("");
        let name = hostname(origin_host);
        origin_host.eq_ignore_ascii_case(host)
            || name.eq_ignore_ascii_case("localhost")
            || name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
            || name
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The content type's essence (`application/json; charset=utf-8` → `application/json`).
fn essence_of(headers: &HeaderMap) -> String {
    header(headers, header::CONTENT_TYPE.as_str())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// How route `method path` takes its body, by the route types (a tool's is JSON); `None` when
/// no route answers it.
fn body_of(method: &Method, path: &str) -> Option<BodyKind> {
    let fits = |template: &str| {
        let (mut want, mut got) = (template.split('/'), path.split('/'));
        loop {
            match (want.next(), got.next()) {
                (None, None) => return true,
                (Some(w), Some(g)) if w.starts_with('{') && !g.is_empty() => {}
                (Some(w), Some(g)) if w == g => {}
                _ => return false,
            }
        }
    };
    let typed = atlas_api::server::ROUTE_SHAPES
        .iter()
        .chain(atlas_api::dify::ROUTE_SHAPES)
        .filter(|route| method.as_str().eq_ignore_ascii_case(route.method.as_str()))
        .find(|route| route.paths().any(fits));
    // The typed routes first where both fit (`/api/v1/business-graph`), then the tools.
    typed
        .map(|route| route.body)
        .or_else(|| (method == Method::POST && fits("/api/v1/{name}")).then_some(BodyKind::Json))
}

/// Whether the body is JSON lines (`application/x-ndjson` and its other names).
pub(crate) fn is_ndjson(headers: &HeaderMap) -> bool {
    is_lines(&essence_of(headers))
}

/// The names of JSON lines.
fn is_lines(essence: &str) -> bool {
    matches!(
        essence,
        "application/x-ndjson" | "application/ndjson" | "application/jsonl"
    )
}

/// JSON and its line-delimited forms (the business graph takes Neo4j's export lines): none is a
/// type a page may send without asking first.
fn is_json(essence: &str) -> bool {
    essence == "application/json"
        || is_lines(essence)
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The name of `host[:port]` (`[::1]:7700` → `[::1]`).
fn hostname(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split_once(']')
            .map_or(host, |(h, _)| &host[..h.len() + 1]);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

fn is_ip(name: &str) -> bool {
    name.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok()
}

/// The middleware: refuses what [`Access`] does not allow, before any handler reads the body.
pub(crate) async fn refuse_cross_site(
    State(access): State<Arc<Access>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    match access.check(request.method(), &path, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refuse(&path, refusal),
    }
}

/// The refusal in the error format of the route's family.
fn refuse(path: &str, refusal: Refusal) -> Response {
    let (status, message) = match &refusal {
        Refusal::Forbidden(m) => (StatusCode::FORBIDDEN, m.clone()),
        Refusal::UnsupportedMediaType(m) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, m.clone()),
    };
    if path == <atlas_api::server::Mcp as atlas_api::routes::Route>::PATH {
        return (
            status,
            Json(atlas_mcp::error(
                serde_json::Value::Null,
                atlas_mcp::INVALID_REQUEST,
                &message,
                None,
            )),
        )
            .into_response();
    }
    if path == "/retrieval" {
        let body = serde_json::json!({ "error_code": status.as_u16(), "error_msg": message });
        return (status, Json(body)).into_response();
    }
    if path.starts_with("/v1/") {
        return crate::dify::refusal(match refusal {
            Refusal::Forbidden(m) => atlas_api::dify::DifyError::forbidden(m),
            Refusal::UnsupportedMediaType(m) => {
                atlas_api::dify::DifyError::unsupported_media_type(m)
            }
        });
    }
    let error = match refusal {
        Refusal::Forbidden(m) => AtlasError::Forbidden(m),
        Refusal::UnsupportedMediaType(m) => AtlasError::UnsupportedMediaType(m),
    };
    crate::ApiError(error).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    fn allowed(
        access: &Access,
        method: Method,
        path: &str,
        pairs: &[(&'static str, &str)],
    ) -> bool {
        access.check(&method, path, &headers(pairs)).is_ok()
    }

    const JSON: (&str, &str) = ("content-type", "application/json");
    const LENGTH: (&str, &str) = ("content-length", "2");

    #[test]
    fn host_names_other_than_localhost_are_refused_unless_allowed() {
        let open = Access::default();
        for host in [
            "127.0.0.1:7700",
            "localhost:7700",
            "[::1]:7700",
            "10.0.0.5:7700",
            "app.localhost",
        ] {
            assert!(
                allowed(&open, Method::GET, "/healthz", &[("host", host)]),
                "{host}"
            );
        }
        assert!(!allowed(
            &open,
            Method::GET,
            "/api/v1/openapi.json",
            &[("host", "evil.example:7700")]
        ));
        let named = Access {
            allowed_hosts: vec!["atlas.internal".into()],
            ..Access::default()
        };
        assert!(allowed(
            &named,
            Method::GET,
            "/healthz",
            &[("host", "ATLAS.internal:7700")]
        ));
    }

    #[test]
    fn pages_of_other_origins_cannot_change_anything() {
        let open = Access::default();
        let host = ("host", "127.0.0.1:7700");
        let evil = ("origin", "http://evil.example");
        assert!(!allowed(
            &open,
            Method::POST,
            "/api/v1/add_page",
            &[host, evil, JSON]
        ));
        assert!(!allowed(
            &open,
            Method::DELETE,
            "/v1/datasets/x",
            &[host, evil]
        ));
        assert!(!allowed(
            &open,
            Method::POST,
            "/mcp",
            &[host, ("origin", "null"), JSON]
        ));
        // Reading is left to the browser's same-origin rule.
        assert!(allowed(
            &open,
            Method::GET,
            "/api/v1/business-graph",
            &[host, evil]
        ));
        // The chat page of this server, and tools on this machine.
        for origin in [
            "http://127.0.0.1:7700",
            "http://localhost:6274",
            "http://[::1]:3000",
        ] {
            assert!(
                allowed(
                    &open,
                    Method::POST,
                    "/api/v1/chat",
                    &[host, ("origin", origin), JSON]
                ),
                "{origin}"
            );
        }
        let dashboard = Access {
            allowed_origins: vec!["https://dash.example.com/".into()],
            ..Access::default()
        };
        assert!(allowed(
            &dashboard,
            Method::POST,
            "/api/v1/add_page",
            &[host, ("origin", "https://dash.example.com"), JSON]
        ));
        assert!(!allowed(
            &dashboard,
            Method::POST,
            "/api/v1/add_page",
            &[host, evil, JSON]
        ));
    }

    #[test]
    fn bodies_must_say_they_are_json_or_uploads() {
        let open = Access::default();
        let host = ("host", "127.0.0.1:7700");
        assert!(allowed(
            &open,
            Method::POST,
            "/api/v1/add_page",
            &[
                host,
                LENGTH,
                ("content-type", "application/json; charset=utf-8")
            ]
        ));
        assert!(!allowed(
            &open,
            Method::POST,
            "/api/v1/add_page",
            &[host, LENGTH, ("content-type", "text/plain")]
        ));
        assert!(!allowed(
            &open,
            Method::POST,
            "/api/v1/add_page",
            &[host, LENGTH]
        ));
        assert!(!allowed(
            &open,
            Method::PUT,
            "/api/v1/business-graph",
            &[
                host,
                LENGTH,
                ("content-type", "application/x-www-form-urlencoded")
            ]
        ));
        let upload = "/v1/datasets/x/document/create-by-file";
        assert!(allowed(
            &open,
            Method::POST,
            upload,
            &[
                host,
                LENGTH,
                ("content-type", "multipart/form-data; boundary=x")
            ]
        ));
        assert!(!allowed(&open, Method::POST, upload, &[host, LENGTH, JSON]));
        // Dify's other spelling of it.
        let alias = "/v1/datasets/x/document/create_by_file";
        assert!(!allowed(&open, Method::POST, alias, &[host, LENGTH, JSON]));
        let form = ("content-type", "multipart/form-data; boundary=x");
        // The MCP route reads JSON-RPC.
        assert!(!allowed(&open, Method::POST, "/mcp", &[host, LENGTH, form]));
        // DELETE carries no body to check.
        assert!(allowed(&open, Method::DELETE, "/mcp", &[host]));
        // What is no route reads no body: the router answers it (Dify's pipeline upload, 404).
        let pipeline = "/v1/datasets/pipeline/file-upload";
        assert!(allowed(
            &open,
            Method::POST,
            pipeline,
            &[host, LENGTH, form]
        ));
    }
}
