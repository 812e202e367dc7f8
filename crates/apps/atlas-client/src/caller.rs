//! Calling Atlas's tools over HTTP: `POST {base}/api/v1/{tool}` with the server's token.
//!
//! A refusal for now — 503 with `Retry-After`: the server's disk is full, its database away, or
//! it is busy — is tried again after the time it asks, twice at most and never longer than
//! [`MAX_RETRY_WAIT`] in all: nothing was written by a refused call, so trying again counts it
//! once, and a client bounded so still answers (an agent then goes on with its model).

use std::time::Duration;

use atlas_api::{CallError, ToolCaller};
use serde_json::Value;

/// How many times a call refused for now is tried again.
pub const RETRIES: usize = 2;
/// The longest a call waits in all for the server to take it again.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

/// The HTTP API: `POST {base}/api/v1/{tool}`.
pub struct HttpCaller {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl HttpCaller {
    /// The API at `base` (`http://127.0.0.1:7700`), with `token` when the server wants one.
    pub fn new(base: &str, token: Option<String>) -> HttpCaller {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        HttpCaller {
            base: base.trim_end_matches('/').to_string(),
            token,
            agent,
        }
    }
}

impl ToolCaller for HttpCaller {
    fn call(&self, tool: &str, input: Value) -> Result<Value, CallError> {
        let body = input.to_string();
        let mut waited = Duration::ZERO;
        let mut tries = 0;
        loop {
            match self.call_once(tool, body.as_bytes())? {
                Answer::Done(result) => return result,
                Answer::Later(wait, refusal) => {
                    tries += 1;
                    if tries > RETRIES || waited + wait > MAX_RETRY_WAIT {
                        return Err(refusal);
                    }
                    std::thread::sleep(wait);
                    waited += wait;
                }
            }
        }
    }
}

/// One call's answer: its result, or a refusal for now and how long it asks to wait.
enum Answer {
    Done(Result<Value, CallError>),
    Later(Duration, CallError),
}

impl HttpCaller {
    fn call_once(&self, tool: &str, body: &[u8]) -> Result<Answer, CallError> {
        let transport = |e: &dyn std::fmt::Display| CallError {
            code: "TRANSPORT".into(),
            message: e.to_string(),
        };
        let mut request = self
            .agent
            .post(&format!("{}/api/v1/{tool}", self.base))
            .header("content-type", "application/json");
        if let Some(token) = &self.token {
            request = request.header("authorization", &format!("Bearer {token}"));
        }
        let mut response = request.send(body).map_err(|e| transport(&e))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body: Value = response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_json()
            .map_err(|e| transport(&e))?;
        if status == 200 {
            return Ok(Answer::Done(Ok(body)));
        }
        let refusal = CallError {
            code: body["error"]["code"].as_str().unwrap_or("HTTP").to_string(),
            message: body["error"]["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("status {status}")),
        };
        Ok(match (status, retry_after) {
            (503, Some(wait)) => Answer::Later(wait, refusal),
            _ => Answer::Done(Err(refusal)),
        })
    }
}
