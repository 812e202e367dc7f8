//! Requests to a served Atlas, for the test suites of the server and of the binary alike: the
//! server's own tests start it in process, the binary's start `atlas serve`; both then ask it
//! the same way ([`Served`]).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Serves `router` (a fixture: a website, a scripted model) on a free loopback port, from a
/// thread and runtime of its own, until the test process ends: its base URL.
pub fn serve_in_background(router: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, router).await;
        });
    });
    url
}

/// An HTTP client that reads every status as an answer, not an error.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .new_agent()
}

/// A server on loopback, however it was started: requests to it.
pub trait Served {
    /// `http://ADDR`.
    fn url(&self) -> &str;

    /// POSTs `body` to the tool `name`: the status and the answer (JSON, else its text).
    fn post(&self, name: &str, body: &[u8]) -> (u16, Value) {
        let mut r = agent()
            .post(&format!("{}/api/v1/{name}", self.url()))
            .header("Content-Type", "application/json")
            .send(body)
            .unwrap();
        let status = r.status().as_u16();
        let text = r
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// [`Served::post`] of a JSON value.
    fn call(&self, name: &str, body: Value) -> (u16, Value) {
        self.post(name, body.to_string().as_bytes())
    }

    /// GET `path`: the status, the content type and the body.
    fn get_bytes(&self, path: &str) -> (u16, String, Vec<u8>) {
        let mut r = agent()
            .get(&format!("{}{path}", self.url()))
            .call()
            .unwrap();
        let content_type = r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = r
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_to_vec()
            .unwrap();
        (r.status().as_u16(), content_type, body)
    }

    /// Announces an 11 MB body and reads the answer without sending it: the server must refuse
    /// from the header alone (a client streaming the body could see the connection closed first).
    fn oversize_post(&self, name: &str) -> (u16, Value) {
        self.announce_oversize(&format!("/api/v1/{name}"), "application/json", None)
    }

    /// Sends only the head of a POST announcing 11 MB (and one byte of it) and reads the answer.
    fn announce_oversize(&self, path: &str, content_type: &str, key: Option<&str>) -> (u16, Value) {
        use std::io::{Read, Write};
        let addr = self.url().trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{{",
            key.map(|k| format!("Authorization: Bearer {k}\r\n"))
                .unwrap_or_default(),
            11 * 1024 * 1024
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer).to_string();
        let status: u16 = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        (
            status,
            serde_json::from_str(body).unwrap_or(Value::String(answer.clone())),
        )
    }
}

/// Asserts that `resp` is seed 000's error `code` with `status`, its message and details there.
pub fn assert_error(resp: &(u16, Value), status: u16, code: &str) {
    assert_eq!(resp.0, status, "{resp:?}");
    assert_eq!(resp.1["success"], json!(false), "{resp:?}");
    assert_eq!(resp.1["error"]["code"], json!(code), "{resp:?}");
    assert!(
        resp.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(resp.1["error"]["details"].is_object());
}

/// Asserts that `resp` is Dify's error `code` with `status` (its `status` field the same).
pub fn assert_dify_error(resp: &(u16, Value), status: u16, code: &str) {
    assert_eq!(
        (resp.0, resp.1["status"].as_u64(), resp.1["code"].as_str()),
        (status, Some(status as u64), Some(code)),
        "{resp:?}"
    );
    assert!(
        resp.1["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{resp:?}"
    );
}

/// The demo knowledge base's dataset id (`--demo`).
pub const DEMO_DATASET: &str = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001";

/// A JSON POST on Dify's routes, with a dataset's key or the server token: the status and JSON.
pub fn dify_post(server: &impl Served, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
    let mut request = agent()
        .post(&format!("{}{path}", server.url()))
        .header("Content-Type", "application/json");
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut r = request.send(body).unwrap();
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A request on Dify's routes with any method and body type; the answer's status and JSON.
pub fn dify_request(
    server: &impl Served,
    method: &str,
    path: &str,
    key: Option<&str>,
    content_type: &str,
    body: &[u8],
) -> (u16, Value) {
    let url = format!("{}{path}", server.url());
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut r = match method {
        "GET" | "DELETE" => {
            let mut request = if method == "GET" {
                agent().get(&url)
            } else {
                agent().delete(&url)
            };
            if let Some(a) = &auth {
                request = request.header("Authorization", a);
            }
            request.call().unwrap()
        }
        _ => {
            let mut request = if method == "PUT" {
                agent().put(&url)
            } else {
                agent().post(&url)
            }
            .header("Content-Type", content_type);
            if let Some(a) = &auth {
                request = request.header("Authorization", a);
            }
            request.send(body).unwrap()
        }
    };
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// A JSON-RPC request to the server's `/mcp`: the status, the session it opened, the answer.
pub fn mcp_post(
    server: &impl Served,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Option<String>, Value) {
    let mut request = agent()
        .post(&format!("{}/mcp", server.url()))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut r = request.send(body.to_string()).unwrap();
    let session = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        session,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Waits until `url` answers a GET (any status), failing the test naming `what` past `within`.
pub fn until_answers(url: &str, what: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while ureq::get(url).call().is_err() {
        assert!(Instant::now() < deadline, "{what} did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
}
