//! The registry as a [`ToolCaller`] in this process: what the agent, the explorer and the
//! evaluations call when the graph is embedded rather than behind HTTP, through the same tools
//! (and the same checks) the server serves.

use std::sync::Arc;

use atlas_api::{CallError, ToolCaller};
use atlas_service::Atlas;
use serde_json::Value;

use crate::ToolRegistry;

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
            tools: crate::registry(),
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
