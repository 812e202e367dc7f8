//! Every route the OpenAPI document describes is one the server serves: the Dify routes are
//! declared once as types (`atlas_api::dify`) and routed one by one, so a route declared and not
//! routed would be documented yet answered only by the "not a route" fallback.

use atlas_config::{Config, Serve};

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
async fn every_documented_dify_route_is_routed_with_its_method() {
    let scratch = tempfile::tempdir().unwrap();
    let services = atlas_config::open(&Config::folder(&scratch.path().join("data")))
        .await
        .unwrap();
    let served = atlas_server::Loopback
        .serve(&services, "127.0.0.1:0")
        .await
        .unwrap();
    let base = served.base_url();
    let routes = atlas_api::dify::route_docs();
    assert!(routes.len() >= 35, "{} routes", routes.len());
    let answers = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        routes
            .iter()
            .map(|route| {
                let url = format!("{base}{}", filled(route.path));
                let method = route.method.as_str().to_uppercase();
                let request = ureq::http::Request::builder()
                    .method(method.as_str())
                    .uri(&url)
                    .header("content-type", "application/json")
                    .body("{}".to_string())
                    .unwrap();
                let mut answer = agent.run(request).unwrap();
                let status = answer.status().as_u16();
                let body = answer.body_mut().read_to_string().unwrap_or_default();
                (format!("{method} {}", route.path), status, body)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (route, status, body) in answers {
        assert_ne!(status, 405, "{route}: the method is not routed: {body}");
        assert!(
            !body.contains("is not a route of this server's Dify API"),
            "{route} is documented but not routed: {status} {body}"
        );
        // Answered by the route itself, in its own error shape or its answer.
        assert!(
            body.contains("\"code\"") || body.contains("error_code") || status < 300,
            "{route}: {status} {body}"
        );
    }
    served.stop().await.unwrap();
}
