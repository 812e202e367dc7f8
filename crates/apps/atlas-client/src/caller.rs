//! Calling Atlas's tools over HTTP: `POST {base}/api/v1/{tool}` with the server's token.

use std::time::Duration;

use atlas_api::{CallError, ToolCaller};
use serde_json::Value;

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
        let mut response = request
            .send(input.to_string().as_bytes())
            .map_err(|e| transport(&e))?;
        let status = response.status().as_u16();
        let body: Value = response
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_json()
            .map_err(|e| transport(&e))?;
        if status == 200 {
            Ok(body)
        } else {
            Err(CallError {
                code: body["error"]["code"].as_str().unwrap_or("HTTP").to_string(),
                message: body["error"]["message"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("status {status}")),
            })
        }
    }
}
