//! The viewer and its live events.

use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

/// Opens `GET /api/v1/events` on a raw connection; the reader gets the stream after the head.
fn event_stream(server: &Server, query: &str) -> std::io::BufReader<std::net::TcpStream> {
    use std::io::{BufRead, Write};
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET /api/v1/events{query} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("200"), "{line}");
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            return reader;
        }
    }
}

#[test]
fn learning_is_streamed_live_and_a_slow_viewer_is_dropped_not_waited_for() {
    use std::io::{BufRead, Read};
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &[]);
    let page = |name: &str| {
        let (status, body) = server.call(
            "add_page",
            json!({ "app_id": "com.example.live", "page_name": name }),
        );
        assert_eq!(status, 200, "{body}");
        body["page_id"].as_str().unwrap().to_string()
    };
    let mut live = event_stream(&server, "?app_id=com.example.live");
    let slow = event_stream(&server, "");
    let (from, to) = (page("首页"), page("设置"));
    let report = json!({ "from_page": from, "to_page": to, "action": { "type": "click", "widget_text": "设置" }, "success": true });
    assert_eq!(server.call("report_transition", report.clone()).0, 200);
    // The viewer sees the app, both pages and the report, in order, as events with JSON data.
    let mut seen: Vec<(String, Value)> = Vec::new();
    let mut kind = String::new();
    while seen.iter().all(|(k, _)| k != "report") {
        let mut line = String::new();
        live.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if let Some(k) = line.strip_prefix("event: ") {
            kind = k.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            seen.push((kind.clone(), serde_json::from_str(data).unwrap()));
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["app", "page", "page", "report"], "{seen:?}");
    let (_, reported) = &seen[3];
    assert_eq!(
        (
            reported["from_page"].as_str(),
            reported["success"].as_bool(),
            reported["success_count"].as_u64()
        ),
        (Some(from.as_str()), Some(true), Some(1)),
        "{reported}"
    );
    // A burst of 5,000 new edges (one batch) is more than a viewer's buffer: the write does not
    // wait for the viewer that reads nothing, and that viewer's stream is ended, not kept growing.
    let burst: Vec<Value> = (0..5000)
        .map(|i| json!({ "from_page": from, "to_page": to, "action_type": "click", "widget_text": format!("按钮{i}") }))
        .collect();
    let (status, body) = server.call("batch_add_transitions", json!({ "transitions": burst }));
    assert_eq!(
        (status, body["created"].as_u64()),
        (200, Some(5000)),
        "{body}"
    );
    // The response ends with its last chunk (the connection itself may be kept for reuse).
    let mut rest = Vec::new();
    let mut slow = slow;
    let mut chunk = [0u8; 65536];
    while !rest.ends_with(b"\r\n0\r\n\r\n") {
        match slow.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => rest.extend_from_slice(&chunk[..n]),
            Err(e) => panic!("the stalled viewer's stream did not end: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&rest);
    assert!(
        text.matches("event: transition").count() < 5000,
        "every event was kept for it"
    );
    server.stop();
}

#[test]
fn the_viewer_is_served_from_the_binary_and_its_tools_tell_pages_screenshots_and_recent_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &[]);
    // The page, its script, styles and the bundled drawing library, all from this origin.
    let (status, content_type, html) = server.get_bytes("/");
    let html = String::from_utf8(html).unwrap();
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(html.contains("Atlas 图谱浏览器"), "a Chinese page");
    assert!(!html.contains("http"), "nothing named on another origin");
    for (path, needle) in [
        ("/viewer/viewer.js", "get_page_details"),
        ("/viewer/graph-lib.js", "AtlasGraphLib"),
        ("/viewer/viewer.css", "#graph"),
    ] {
        let (status, _, body) = server.get_bytes(path);
        assert_eq!(status, 200, "{path}");
        assert!(String::from_utf8_lossy(&body).contains(needle), "{path}");
    }

    let page = |app: &str, name: &str| {
        let (status, body) = server.call("add_page", json!({ "app_id": app, "page_name": name }));
        assert_eq!(status, 200, "{body}");
        body["page_id"].as_str().unwrap().to_string()
    };
    let (home, settings) = (
        page("com.example.view", "首页"),
        page("com.example.view", "设置"),
    );
    let elsewhere = page("com.example.other", "首页");
    for success in [true, false] {
        let report = json!({ "from_page": home, "to_page": settings, "action": { "type": "click", "widget_text": "设置" }, "success": success, "latency_ms": 400 });
        assert_eq!(server.call("report_transition", report).0, 200);
    }
    // Statistics given in a batch are not reports an agent made.
    let batch = json!({ "transitions": [{ "from_page": settings, "to_page": home, "action_type": "back", "success_count": 7 }] });
    assert_eq!(server.call("batch_add_transitions", batch).0, 200);
    let (_, stats) = server.call("get_graph_stats", json!({ "app_id": "com.example.view" }));
    let app = &stats["by_app"][0];
    assert_eq!(
        (app["reports"].as_u64(), app["reports_last_hour"].as_u64()),
        (Some(9), Some(2)),
        "{stats}"
    );

    let (status, details) = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": home }),
    );
    assert_eq!(status, 200, "{details}");
    let action = &details["actions"][0];
    assert_eq!(
        (
            action["other_page_name"].as_str(),
            action["success_count"].as_u64(),
            action["fail_count"].as_u64()
        ),
        (Some("设置"), Some(1), Some(1)),
        "{details}"
    );
    assert_eq!(details["incoming"][0]["success_count"], 7, "{details}");
    assert_eq!(details["depth"], 0);
    let reports = details["recent_reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{details}");
    assert_eq!(
        (
            reports[0]["failed"].as_u64(),
            reports[1]["succeeded"].as_u64()
        ),
        (Some(1), Some(1)),
        "newest first: {details}"
    );
    assert_eq!(reports[0]["latency_ms"], 400.0);
    assert!(details["screenshot"].is_null());
    // Its seed 001 folder, inside the data folder; a screenshot put there (as the explorer
    // does) is pointed to and served.
    let folder = std::path::PathBuf::from(details["folder"].as_str().unwrap());
    assert!(folder.starts_with(tmp.path().join("data")), "{folder:?}");
    std::fs::create_dir_all(&folder).unwrap();
    let png = b"\x89PNG\r\n\x1a\n not really an image, but bytes to serve back".to_vec();
    std::fs::write(folder.join("screenshot.png"), &png).unwrap();
    let (_, details) = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": home }),
    );
    let url = details["screenshot"].as_str().unwrap().to_string();
    let (status, content_type, body) = server.get_bytes(&url);
    assert_eq!((status, content_type.as_str()), (200, "image/png"));
    assert_eq!(body, png);
    let (_, graph) = server.call("get_app_graph", json!({ "app_id": "com.example.view" }));
    let drawn: Vec<&Value> = graph["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["screenshot"].is_string())
        .collect();
    assert_eq!(drawn.len(), 1, "{graph}");
    assert_eq!(drawn[0]["page_id"], json!(home));

    // No screenshot, an unknown page, a page of another app: the seed's 404s.
    let (status, _, body) = server.get_bytes(&format!(
        "/api/v1/apps/com.example.view/pages/{settings}/screenshot"
    ));
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_error(&(status, body), 404, "NOT_FOUND");
    let (status, _, _) =
        server.get_bytes("/api/v1/apps/com.example.view/pages/nosuchpage/screenshot");
    assert_eq!(status, 404);
    let resp = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": elsewhere }),
    );
    assert_error(&resp, 404, "PAGE_NOT_FOUND");
    let resp = server.call("get_page_details", json!({ "app_id": "com.example.view" }));
    assert_error(&resp, 400, "INVALID_PARAMETER");
    server.stop();
}
