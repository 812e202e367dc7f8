//! The server against hostile pages and clients: the pages' security
//! headers, a screenshot that is a symbolic link, a dataset's records without its key on every
//! face, and sizes past every limit.

use serde_json::{Value, json};

use crate::common::{Served, Server, agent};

/// Status, headers (lower-case names) and body of a GET, with an optional bearer key.
fn get(server: &Server, path: &str, key: Option<&str>) -> (u16, Vec<(String, String)>, String) {
    let mut request = agent().get(&format!("{}{path}", server.url));
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut r = request.call().unwrap();
    let headers = r
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                v.to_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let body = r
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_string()
        .unwrap_or_default();
    (r.status().as_u16(), headers, body)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

const DEMO_DATASET: &str = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001";
const DEMO_KEY: &str = "dataset-demo-key";

#[test]
fn every_page_and_asset_forbids_framing_inline_code_sniffing_and_referrers() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &["--demo"]);
    for path in [
        "/",
        "/chat",
        "/viewer/viewer.js",
        "/viewer/viewer.css",
        "/viewer/graph-lib.js",
        "/chat/chat.js",
        "/chat/chat.css",
        "/api/v1/openapi.json",
        "/healthz",
        "/v1/datasets",
        "/no/such/route",
    ] {
        let (_, headers, body) = get(&server, path, None);
        let csp = header(&headers, "content-security-policy").unwrap_or_default();
        for part in [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
        ] {
            assert!(csp.contains(part), "{path}: {part} missing in {csp:?}");
        }
        assert!(!csp.contains("unsafe"), "{path}: {csp}");
        assert_eq!(header(&headers, "x-frame-options"), Some("DENY"), "{path}");
        assert_eq!(
            header(&headers, "x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            header(&headers, "referrer-policy"),
            Some("no-referrer"),
            "{path}"
        );
        // The policy holds because the pages need nothing it forbids: no inline script or style.
        if path == "/" || path == "/chat" {
            assert!(!body.contains("style="), "{path}: an inline style");
            assert!(!body.contains("<style"), "{path}: a style element");
            for script in body.split("<script").skip(1) {
                let tag = script.split('>').next().unwrap_or_default();
                assert!(tag.contains("src="), "{path}: an inline script");
                assert!(
                    script
                        .split('>')
                        .nth(1)
                        .unwrap_or_default()
                        .starts_with("</script"),
                    "{path}: a script with a body"
                );
            }
        }
        // The token is kept for the browser session only.
        if path.ends_with(".js") && body.contains("atlas-token") {
            assert!(
                !body.contains("localStorage.setItem(\"atlas-token\""),
                "{path}"
            );
            assert!(
                body.contains("sessionStorage.setItem(\"atlas-token\""),
                "{path}"
            );
        }
    }
    server.stop();
}

#[cfg(unix)]
#[test]
fn a_screenshot_is_a_png_file_inside_the_data_folder_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &[]);
    let (status, body) = server.call(
        "add_page",
        json!({"app_id": "com.example.shots", "page_name": "首页"}),
    );
    assert_eq!(status, 200, "{body}");
    let page = body["page_id"].as_str().unwrap().to_string();
    let (_, details) = server.call(
        "get_page_details",
        json!({"app_id": "com.example.shots", "page_id": page}),
    );
    let folder = std::path::PathBuf::from(details["folder"].as_str().unwrap());
    std::fs::create_dir_all(&folder).unwrap();
    let shot = folder.join("screenshot.png");
    let route = format!("/api/v1/apps/com.example.shots/pages/{page}/screenshot");
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "root:x:0:0:secret\n").unwrap();
    let png_elsewhere = tmp.path().join("elsewhere.png");
    std::fs::write(
        &png_elsewhere,
        b"\x89PNG\r\n\x1a\nfrom outside the data folder",
    )
    .unwrap();
    // A link to a file outside, to a PNG outside, to a folder; a file that is not a PNG.
    let cases: [(&str, &dyn Fn()); 4] = [
        ("a link to a secret", &|| {
            std::os::unix::fs::symlink(&secret, &shot).unwrap()
        }),
        ("a link to a PNG elsewhere", &|| {
            std::os::unix::fs::symlink(&png_elsewhere, &shot).unwrap()
        }),
        ("a link to a folder", &|| {
            std::os::unix::fs::symlink(tmp.path(), &shot).unwrap()
        }),
        ("a text file", &|| {
            std::fs::write(&shot, "not a png").unwrap()
        }),
    ];
    for (what, make) in cases {
        let _ = std::fs::remove_file(&shot);
        make();
        let (status, _, body) = get(&server, &route, None);
        assert_eq!(status, 404, "{what}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], "NOT_FOUND", "{what}: {body}");
        assert!(!body.contains("secret") && !body.contains(tmp.path().to_str().unwrap()));
        let (_, details) = server.call(
            "get_page_details",
            json!({"app_id": "com.example.shots", "page_id": page}),
        );
        assert!(details["screenshot"].is_null(), "{what}: {details}");
    }
    // A real PNG in its place is served.
    std::fs::remove_file(&shot).unwrap();
    std::fs::write(&shot, b"\x89PNG\r\n\x1a\nbytes").unwrap();
    let (status, headers, _) = get(&server, &route, None);
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("image/png"));
    // Larger than 5 MB: refused, naming no path.
    std::fs::write(
        &shot,
        [b"\x89PNG\r\n\x1a\n".as_slice(), &vec![0u8; 6 << 20]].concat(),
    )
    .unwrap();
    let (status, _, body) = get(&server, &route, None);
    assert_eq!(status, 500, "{body}");
    assert!(!body.contains(data.to_str().unwrap()), "{body}");
    server.stop();
}

fn retrieve(server: &Server, key: Option<&str>) -> (u16, Value) {
    let mut body = json!({"dataset_id": DEMO_DATASET, "query": "退货运费谁出"});
    if let Some(key) = key {
        body["api_key"] = json!(key);
    }
    server.call("retrieve_knowledge", body)
}

/// A tools/call of retrieve_knowledge over /mcp (2025-03-26, no session needed for a single
/// call after initialize in the same era: this server answers it statelessly).
fn mcp_retrieve(server: &Server, token: Option<&str>, key: Option<&str>) -> Value {
    let post = |body: Value, session: Option<&str>| {
        let mut r = agent()
            .post(&format!("{}/mcp", server.url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if let Some(t) = token {
            r = r.header("Authorization", &format!("Bearer {t}"));
        }
        if let Some(s) = session {
            r = r.header("Mcp-Session-Id", s);
        }
        let mut resp = r.send(body.to_string().as_bytes()).unwrap();
        let session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let text = resp.body_mut().read_to_string().unwrap();
        let text = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .map(String::from)
            .unwrap_or(text);
        (
            session,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        )
    };
    let (session, _) = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        None,
    );
    let mut arguments = json!({"dataset_id": DEMO_DATASET, "query": "退货运费谁出"});
    if let Some(key) = key {
        arguments["api_key"] = json!(key);
    }
    post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "retrieve_knowledge", "arguments": arguments}}),
        session.as_deref(),
    )
    .1
}

fn mcp_found_records(answer: &Value) -> bool {
    answer["result"]["isError"] != true
        && answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\"records\""))
}

#[test]
fn a_dataset_s_records_need_its_key_or_the_server_token_on_every_face() {
    let tmp = tempfile::tempdir().unwrap();
    // Without --token: the dataset's key opens it, over HTTP and MCP alike.
    let open = Server::start(&tmp.path().join("open"), &["--demo"]);
    assert_eq!(retrieve(&open, None).0, 401);
    assert_eq!(retrieve(&open, Some("wrong")).0, 401);
    let (status, records) = retrieve(&open, Some(DEMO_KEY));
    assert_eq!(status, 200, "{records}");
    assert!(!records["records"].as_array().unwrap().is_empty());
    assert!(!mcp_found_records(&mcp_retrieve(&open, None, None)));
    assert!(mcp_found_records(&mcp_retrieve(
        &open,
        None,
        Some(DEMO_KEY)
    )));
    // Names and counts stay listable (the viewer shows them); documents need the key.
    let (status, _, list) = get(&open, "/v1/datasets", None);
    assert_eq!(status, 200, "{list}");
    assert!(!list.contains(DEMO_KEY), "a key listed: {list}");
    let documents = format!("/v1/datasets/{DEMO_DATASET}/documents");
    assert_eq!(get(&open, &documents, None).0, 401);
    assert_eq!(get(&open, &documents, Some(DEMO_KEY)).0, 200);
    open.stop();

    // With --token: the token opens every dataset; the dataset's own key still opens its own,
    // and lists the tags.
    let token = "server-token-1";
    let guarded = Server::start(&tmp.path().join("guarded"), &["--demo", "--token", token]);
    let (status, _, _) = get(&guarded, "/v1/datasets", None);
    assert_eq!(status, 401);
    assert_eq!(get(&guarded, "/v1/datasets", Some(token)).0, 200);
    assert_eq!(get(&guarded, &documents, Some(DEMO_KEY)).0, 200);
    let (status, _, tags) = get(&guarded, "/v1/datasets/tags", Some(DEMO_KEY));
    assert_eq!(status, 200, "a dataset's key lists the tags: {tags}");
    assert_eq!(get(&guarded, "/v1/datasets/tags", Some("wrong")).0, 401);
    assert!(mcp_found_records(&mcp_retrieve(
        &guarded,
        Some(token),
        None
    )));
    let mut r = agent()
        .post(&format!("{}/api/v1/retrieve_knowledge", guarded.url))
        .header("Authorization", &format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(
            json!({"dataset_id": DEMO_DATASET, "query": "退货"})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        200,
        "{}",
        r.body_mut().read_to_string().unwrap()
    );
    guarded.stop();
}

/// Sends a body of `size` bytes, chunked (no length announced), and returns status and body.
fn chunked_send(server: &Server, method: &str, path: &str, size: usize) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut sent = 0;
    while sent < size {
        let n = chunk.len().min(size - sent);
        if stream
            .write_all(format!("{n:x}\r\n").as_bytes())
            .and_then(|()| stream.write_all(&chunk[..n]))
            .and_then(|()| stream.write_all(b"\r\n"))
            .is_err()
        {
            break; // the server answered and closed: read what it said
        }
        sent += n;
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).to_string();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    // The body may itself be chunked: keep the JSON part.
    let json = body
        .find('{')
        .map(|i| body[i..].trim_end_matches(|c: char| c != '}').to_string())
        .unwrap_or_default();
    (status, json)
}

#[test]
fn bodies_past_the_limit_get_each_face_s_own_error() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &[]);
    let (status, body) = chunked_send(&server, "POST", "/mcp", 11 << 20);
    assert_eq!(status, 413, "{body}");
    let rpc: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    assert_eq!(rpc["jsonrpc"], "2.0", "a JSON-RPC error on /mcp: {body}");
    assert!(rpc["error"]["code"].is_i64(), "{body}");
    let (status, body) = chunked_send(&server, "PUT", "/api/v1/business-graph", 11 << 20);
    assert_eq!(status, 413, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    assert_eq!(error["error"]["code"], "PAYLOAD_TOO_LARGE", "{body}");
    server.stop();
}

/// Thousands of connections that send half a request head (slowloris) or nothing: past the
/// server's cap each is answered 503 at once and closed, `/healthz` still answers within a
/// second, and the held ones are closed once the head timeout passes.
#[test]
fn slow_and_idle_connections_are_capped_answered_and_timed_out() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    // This process holds the clients' ends: its descriptors, raised to the hard limit, bound how
    // many (other tests of this binary run beside it and need some too).
    let descriptors = {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write the struct passed, which lives here.
        unsafe {
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        }
        limit.rlim_cur as usize
    };
    let clients = 6000.min(descriptors.saturating_sub(2000)) / 2 * 2;
    assert!(clients >= 400, "only {descriptors} file descriptors");
    let cap = (clients / 2).to_string();
    let tmp = tempfile::tempdir().unwrap();
    let server =
        crate::common::Server::start(&tmp.path().join("data"), &["--max-connections", &cap]);
    let addr = server.url.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for i in 0..clients {
        if i % 500 == 499 {
            // Held, not a SYN flood: the kernel's queue of connections not yet accepted is
            // the system's to size.
            std::thread::sleep(Duration::from_millis(100));
        }
        let mut tcp = TcpStream::connect(&addr).unwrap();
        if i % 2 == 0 {
            tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
        }
        held.push(tcp);
    }
    let started = Instant::now();
    let (status, _, body) = server.get_bytes("/healthz");
    let took = started.elapsed();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    // A server out of descriptors never answers; one within its cap answers in milliseconds,
    // and within seconds on two cores other work keeps busy.
    assert!(took < Duration::from_secs(10), "/healthz took {took:?}");
    // Past the cap: an answer (503, or the health for a half-sent `/healthz`), then closed.
    let (mut answered, mut busy) = (0, 0);
    for tcp in held.iter_mut().rev().take(200) {
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut answer = Vec::new();
        let _ = tcp.read_to_end(&mut answer);
        answered += usize::from(answer.starts_with(b"HTTP/1.1 "));
        busy += usize::from(answer.starts_with(b"HTTP/1.1 503"));
    }
    assert!(
        answered >= 190 && busy >= 90,
        "of the last 200 connections {answered} answered, {busy} with 503"
    );
    // The held ones: closed by the server after the head timeout.
    std::thread::sleep(Duration::from_secs(11));
    let mut closed = 0;
    for tcp in held.iter_mut().take(200) {
        tcp.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut rest = Vec::new();
        if tcp.read_to_end(&mut rest).is_ok() {
            closed += 1;
        }
    }
    assert_eq!(
        closed, 200,
        "held connections still open after the head timeout"
    );
    drop(held);
    let (status, _, _) = server.get_bytes("/healthz");
    assert_eq!(status, 200);
    server.stop();
}
