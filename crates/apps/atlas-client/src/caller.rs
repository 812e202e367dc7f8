//! Calling Atlas's tools by name, over HTTP or in-process: one trait, so everything the agent side
//! does runs unchanged against a remote server or an embedded service.

use std::sync::Arc;
use std::time::Duration;

use atlas_registry::ToolRegistry;
use atlas_service::Atlas;
use serde_json::Value;

/// A tool's refusal, as seed 000's error body gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallError {
    /// Seed 000's error code (`PAGE_NOT_FOUND`, …), or `TRANSPORT` when Atlas was not reached.
    pub code: String,
    /// What went wrong, in words.
    pub message: String,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CallError {}

/// Anything that runs Atlas's tools by name.
pub trait ToolCaller {
    /// Runs `tool` with `input`: its answer, or its refusal.
    fn call(&self, tool: &str, input: Value) -> Result<Value, CallError>;
}

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

/// The service in this process, through the same tool registry the server serves. Call it from
/// a thread that may block (not from inside the async runtime).
pub struct ServiceCaller {
    atlas: Arc<Atlas>,
    tools: ToolRegistry,
    runtime: tokio::runtime::Handle,
}

impl ServiceCaller {
    /// The service `atlas`, its futures run on `runtime`.
    pub fn new(atlas: Arc<Atlas>, runtime: tokio::runtime::Handle) -> ServiceCaller {
        ServiceCaller {
            atlas,
            tools: atlas_registry::registry(),
            runtime,
        }
    }
}

impl ToolCaller for ServiceCaller {
    fn call(&self, tool: &str, input: Value) -> Result<Value, CallError> {
        let Some(t) = self.tools.get(tool) else {
            return Err(CallError {
                code: "NOT_FOUND".into(),
                message: format!("no tool {tool}"),
            });
        };
        self.runtime
            .block_on(t.call(self.atlas.clone(), input))
            .map_err(|e| CallError {
                code: e.code().as_str().to_string(),
                message: e.to_string(),
            })
    }
}
