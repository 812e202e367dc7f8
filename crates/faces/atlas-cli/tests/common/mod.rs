//! Helpers the end-to-end test binaries share.
#![allow(dead_code)] // each test binary uses its own share of them

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

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
            .stderr(Stdio::null())
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
