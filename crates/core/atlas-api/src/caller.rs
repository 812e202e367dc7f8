//! A tool run by name over any transport, and the typed call over it.

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One tool of the interface: its name (the route's last segment, the MCP tool's and the
/// function's name), what it takes and what it answers.
pub trait Interface {
    /// Its name.
    const NAME: &'static str;
    /// What it takes.
    type Request: Serialize + DeserializeOwned + JsonSchema;
    /// What it answers.
    type Answer: Serialize + DeserializeOwned + JsonSchema;
}

/// A tool's refusal, as seed 000's error body gives it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    /// Seed 000's error code (`PAGE_NOT_FOUND`, …), or `TRANSPORT` when Atlas was not reached.
    pub code: String,
    /// What went wrong, in words.
    pub message: String,
}

/// Anything that runs Atlas's tools by name: over HTTP (`atlas-client`), or the registry in
/// this process (`atlas-registry`).
pub trait ToolCaller {
    /// Runs `tool` with `input`: its answer, or its refusal.
    fn call(&self, tool: &str, input: Value) -> Result<Value, CallError>;
}

/// Runs the tool `I` with a typed request and reads its typed answer.
pub fn ask<I: Interface>(
    caller: &(impl ToolCaller + ?Sized),
    request: &I::Request,
) -> Result<I::Answer, CallError> {
    let input = serde_json::to_value(request).map_err(|e| CallError {
        code: "INVALID_PARAMETER".into(),
        message: format!("{}: the request cannot be written as JSON: {e}", I::NAME),
    })?;
    let answer = caller.call(I::NAME, input)?;
    serde_json::from_value(answer).map_err(|e| CallError {
        code: "BAD_ANSWER".into(),
        message: format!(
            "{}: the answer is not what the interface defines: {e}",
            I::NAME
        ),
    })
}
