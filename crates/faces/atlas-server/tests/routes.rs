//! Every route the OpenAPI document describes is one the server serves: the server's own routes
//! and Dify's are declared once as types (`atlas_api::server`, `atlas_api::dify`) and routed one
//! by one, so a route declared and not routed would be documented yet answered only by the "not a
//! route" fallback.

use atlas_api::routes::{Answered, BodyKind};

use atlas_wiring::{Config, Serve};

/// The path with each `{parameter}` filled in (an action with one its route takes).
fn filled(path: &str) -> String {
    path.split('/')
        .map(|part| match part {
            "{action}" if path.contains("/documents/status/") => "archive",
            "{action}" => "enable",
            p if p.starts_with('{') => "no-such-id",
            p => p,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_documented_route_is_routed_with_its_method() {
    let scratch = tempfile::tempdir().unwrap();
    let services = atlas_wiring::open(&Config::folder(&scratch.path().join("data")))
        .await
        .unwrap();
    let served = atlas_server::Loopback
        .serve(&services, "127.0.0.1:0")
        .await
        .unwrap();
    let base = served.base_url();
    let dify = atlas_api::dify::route_docs();
    let own = atlas_api::server::route_docs();
    assert!(dify.len() >= 35, "{} routes", dify.len());
    assert!(own.len() >= 11, "{} routes", own.len());
    let routes: Vec<_> = own.into_iter().chain(dify).collect();
    let answers = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        routes
            .iter()
            .map(|route| {
                let url = format!("{base}{}", filled(route.shape.path));
                let method = route.shape.method.as_str().to_uppercase();
                // A body only where the route takes one, as its clients send them (a body
                // the route leaves unread ends the connection, and with it the next request
                // on it).
                let body = if route.shape.body == BodyKind::None {
                    ""
                } else {
                    "{}"
                };
                let request = ureq::http::Request::builder()
                    .method(method.as_str())
                    .uri(&url)
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .unwrap();
                let mut answer = agent
                    .run(request)
                    .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
                let status = answer.status().as_u16();
                let body = if route.answered == Answered::EventStream && status == 200 {
                    // A stream lasts as long as it is read: its type says it is the route's.
                    let kind = answer.headers().get("content-type").unwrap();
                    format!("a stream of {}", kind.to_str().unwrap())
                } else {
                    answer.body_mut().read_to_string().unwrap_or_default()
                };
                (format!("{method} {}", route.shape.path), status, body)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (route, status, body) in answers {
        assert_ne!(status, 405, "{route}: the method is not routed: {body}");
        assert!(
            !body.contains("is not a route of this server's Dify API")
                && !body.contains("no such route"),
            "{route} is documented but not routed: {status} {body}"
        );
        // Answered by the route itself, in its own error shape or its answer.
        assert!(
            body.contains("\"code\"")
                || body.contains("error_code")
                || body.starts_with("a stream of text/event-stream")
                || status < 300,
            "{route}: {status} {body}"
        );
    }
    served.stop().await.unwrap();
}
