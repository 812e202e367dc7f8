//! Helpers the tests of the binary share: a server on loopback, requests to it, `atlas
//! model-sim`, fsck.

use std::path::Path;
use std::process::{Child, Command, Stdio};
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

/// `atlas fsck` on a folder: whether it is clean, and what it said.
pub fn fsck(data: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["fsck", "--data"])
        .arg(data)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

pub struct Server {
    pub child: Child,
    pub url: String,
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .new_agent()
}

impl Server {
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Server::start_logging(data, extra, Stdio::null())
    }

    /// [`Server::start`], its standard error (its log) going to `log`.
    pub fn start_logging(data: &Path, extra: &[&str], log: impl Into<Stdio>) -> Server {
        let port = free_port();
        let mut args = vec!["serve", "--data", data.to_str().unwrap(), "--addr"];
        let addr = format!("127.0.0.1:{port}");
        args.push(&addr);
        // The graph on the built-in embedder unless a test says otherwise: these tests are about
        // the routes, and the knowledge bases still take e5 when it is installed (`auto`).
        if !extra.contains(&"--embedder") {
            args.extend_from_slice(&["--embedder", "hash"]);
        }
        args.extend_from_slice(extra);
        let child = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let server = Server {
            child,
            url: format!("http://{addr}"),
        };
        // Generous: with e5 installed the demo embeds its knowledge base and business graph at
        // start-up, 15 s on two idle cores and more on busy ones.
        let deadline = Instant::now() + Duration::from_secs(90);
        while Instant::now() < deadline {
            if agent()
                .get(&format!("{}/healthz", server.url))
                .call()
                .is_ok_and(|r| r.status() == 200 || r.status() == 401)
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not become healthy");
    }

    pub fn post(&self, name: &str, body: &[u8]) -> (u16, Value) {
        let mut r = agent()
            .post(&format!("{}/api/v1/{name}", self.url))
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

    pub fn call(&self, name: &str, body: Value) -> (u16, Value) {
        self.post(name, body.to_string().as_bytes())
    }

    /// GET `path`: the status, the content type and the body.
    pub fn get_bytes(&self, path: &str) -> (u16, String, Vec<u8>) {
        let mut r = agent().get(&format!("{}{path}", self.url)).call().unwrap();
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

    pub fn stop(mut self) {
        unsafe_terminate(&self.child);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "server did not stop cleanly: {status}");
    }

    pub fn kill9(self) {
        drop(self); // SIGKILL
    }
}

/// A server a failed test leaves is killed with it.
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn unsafe_terminate(child: &Child) {
    Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status()
        .unwrap();
}

impl Server {
    /// Announces an 11 MB body and reads the answer without sending it: the server must refuse
    /// from the header alone (a client streaming the body could see the connection closed first).
    pub fn oversize_post(&self, name: &str) -> (u16, Value) {
        self.announce_oversize(&format!("/api/v1/{name}"), "application/json", None)
    }

    /// Sends only the head of a POST announcing 11 MB (and one byte of it) and reads the answer.
    pub fn announce_oversize(
        &self,
        path: &str,
        content_type: &str,
        key: Option<&str>,
    ) -> (u16, Value) {
        use std::io::{Read, Write};
        let addr = self.url.trim_start_matches("http://");
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

pub const DEMO_DATASET: &str = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001";

pub fn dify_post(server: &Server, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
    let mut request = agent()
        .post(&format!("{}{path}", server.url))
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
    server: &Server,
    method: &str,
    path: &str,
    key: Option<&str>,
    content_type: &str,
    body: &[u8],
) -> (u16, Value) {
    let url = format!("{}{path}", server.url);
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

/// `atlas model-sim` on a free port with the demo script.
pub fn model_sim() -> (Child, String) {
    model_sim_playing(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atlas-chat/demo/business.json"
    )))
}

/// `atlas model-sim` on a free port with a script.
pub fn model_sim_playing(script: &Path) -> (Child, String) {
    model_sim_with(&[script.to_str().unwrap()])
}

/// `atlas model-sim ARGS…` on a free port: the process and its base URL once it answers.
pub fn model_sim_with(args: &[&str]) -> (Child, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("model-sim")
        .args(args)
        .args(["--addr", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if agent()
            .get(&format!("{url}/v1/models"))
            .call()
            .is_ok_and(|r| r.status() == 200)
        {
            return (child, url);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("model-sim did not start");
}

/// Runs `command`, which writes a JSON report to `report`, and reads the report once the
/// command succeeded (else fails with what it printed).
pub fn report_of(command: &mut Command, report: &Path) -> Value {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap()
}

/// Says a test is skipped for want of `what`; under CI, where scripts/test.sh installs it, fails.
pub fn skipped_without(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is not installed, and scripts/test.sh installs it"
    );
    eprintln!("skipped: no {what}");
}

/// Whether `command` runs and succeeds (a tool, a Python module, is here); see
/// [`skipped_without`].
pub fn required(command: &mut Command, what: &str) -> bool {
    let here = command.output().is_ok_and(|o| o.status.success());
    if !here {
        skipped_without(what);
    }
    here
}

/// What the variable `var` names, which scripts/test.sh sets once it has installed `what`;
/// none (see [`skipped_without`]) when it is not set.
pub fn installed_at(var: &str, what: &str) -> Option<std::ffi::OsString> {
    let found = std::env::var_os(var);
    if found.is_none() {
        skipped_without(&format!("{what} (set {var})"));
    }
    found
}

/// Whether Debian's `adb` is here (see [`required`]).
pub fn adb_installed() -> bool {
    required(Command::new("adb").arg("version"), "adb")
}

/// Debian's Chromium, or none (see [`skipped_without`]).
pub fn chromium() -> Option<std::path::PathBuf> {
    let found = atlas_browser::find_chromium();
    if found.is_none() {
        skipped_without("chromium");
    }
    found
}

/// The PostgreSQL tests of this binary share one test server, which one of them restarts: each
/// holds the server shared while it runs, the restart holds it alone (without this, a restart cut
/// the connections of whichever test ran beside it).
static TEST_SERVER: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that uses the test server as it is.
pub fn sharing_the_test_server() -> std::sync::RwLockReadGuard<'static, ()> {
    TEST_SERVER.read().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that stops or restarts the test server.
pub fn alone_on_the_test_server() -> std::sync::RwLockWriteGuard<'static, ()> {
    TEST_SERVER.write().unwrap_or_else(|e| e.into_inner())
}

/// A JSON-RPC request to the server's `/mcp`: the status, the session it opened, the answer.
pub fn mcp_post(
    server: &Server,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Option<String>, Value) {
    let mut request = agent()
        .post(&format!("{}/mcp", server.url))
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
