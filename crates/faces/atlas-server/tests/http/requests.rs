//! What requests the server takes: not a web page's; probes, tokens and the External Knowledge
//! API as clients send them.

use serde_json::json;

use crate::common::*;

/// One request written by hand, headers exactly as given (`Host` included): status and body.
fn raw_request(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn web_pages_cannot_drive_a_local_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--allow-origin", "https://dash.example.com"]);
    let host = server.url.trim_start_matches("http://").to_string();
    let port = host.rsplit_once(':').unwrap().1.to_string();
    let page = json!({"app_id": "app", "page_name": "首页"}).to_string();
    let pages = |server: &Server| server.call("get_graph_stats", json!({})).1["pages"].as_u64();

    // A "simple" request a page may send anywhere: text/plain, or no type at all.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut headers = vec![("Host", host.as_str()), ("Origin", "http://evil.example")];
        headers.extend(content_type.map(|t| ("Content-Type", t)));
        let (status, _) = raw_request(&server, "POST", "/api/v1/add_page", &headers, &page);
        assert!(status == 403 || status == 415, "{content_type:?}: {status}");
        let (status, body) = raw_request(
            &server,
            "POST",
            "/api/v1/add_page",
            &headers[..1]
                .iter()
                .copied()
                .chain(content_type.map(|t| ("Content-Type", t)))
                .collect::<Vec<_>>(),
            &page,
        );
        assert_eq!(status, 415, "{content_type:?}: {body}");
        assert!(body.contains("UNSUPPORTED_MEDIA_TYPE"), "{body}");
    }
    // JSON from a page of another origin: refused in the route family's own error format.
    let json_from = |origin: &str, path: &str| {
        raw_request(
            &server,
            "POST",
            path,
            &[
                ("Host", host.as_str()),
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            &page,
        )
    };
    let (status, body) = json_from("http://evil.example", "/api/v1/add_page");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("FORBIDDEN"), "{body}");
    let (status, body) = json_from("null", "/v1/datasets");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"code\":\"forbidden\""), "{body}");
    assert_eq!(pages(&server), Some(0), "nothing was written");
    // The operator's dashboard and a page of this machine may.
    let (status, body) = json_from("https://dash.example.com", "/api/v1/add_page");
    assert_eq!(status, 200, "{body}");
    let (status, body) = json_from(&format!("http://localhost:{port}"), "/api/v1/add_page");
    assert_eq!(status, 200, "{body}");

    // DNS rebinding: a name that resolves here, Origin and Host agreeing.
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let (status, body) = raw_request(
        &server,
        "POST",
        "/mcp",
        &[
            ("Host", &evil_host),
            ("Origin", &evil_origin),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &initialize,
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("jsonrpc"), "{body}");
    let (status, _) = raw_request(
        &server,
        "GET",
        "/api/v1/business-graph",
        &[("Host", &evil_host)],
        "",
    );
    assert_eq!(status, 403, "reading is refused too under a foreign name");
    let (status, body) = raw_request(
        &server,
        "POST",
        "/mcp",
        &[
            ("Host", &format!("localhost:{port}")),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &initialize,
    );
    assert_eq!(status, 200, "{body}");
    server.stop();
}

#[test]
fn probes_tokens_and_the_external_retrieval_take_what_clients_send() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo", "--token", "s3cret"]);
    let host = server.url.trim_start_matches("http://").to_string();
    // A health probe needs no token, and learns nothing but that the process answers.
    let (status, body) = raw_request(&server, "GET", "/healthz", &[("Host", &host)], "");
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    // The scheme is case-insensitive (RFC 9110).
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let auth = format!("{scheme} s3cret");
        let (status, body) = raw_request(
            &server,
            "POST",
            "/api/v1/get_graph_stats",
            &[
                ("Host", &host),
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            "{}",
        );
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    // The server token opens every dataset, on the External Knowledge API too.
    let query = json!({"knowledge_id": DEMO_DATASET, "query": "退货运费谁出", "retrieval_setting": {"top_k": 2}}).to_string();
    let (status, body) = raw_request(
        &server,
        "POST",
        "/retrieval",
        &[
            ("Host", &host),
            ("Authorization", "Bearer s3cret"),
            ("Content-Type", "application/json"),
        ],
        &query,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("records"), "{body}");
    server.stop();
}
