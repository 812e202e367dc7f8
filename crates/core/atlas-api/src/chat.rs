//! The chat of seed 003 over HTTP (`POST /api/v1/chat`): the conversation a client sends, and
//! what the tool-calling loop reports back, as a stream of events or whole.
//!
//! The conversation travels whole with each question, tool calls and results included, so the
//! server keeps no session: a message is OpenAI's chat message, its other fields passed on as
//! they come.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Messages a conversation may carry.
pub const MAX_MESSAGES: usize = 200;

/// A chat turn: the conversation so far, the user's question last.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChatRequest {
    /// The conversation, 1 to 200 messages, the last the user's question (checked when read).
    #[schemars(length(min = 1, max = 200))]
    pub messages: Vec<ChatMessage>,
    /// Server-sent events as the loop goes (the default), or one JSON answer at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

/// One message of the conversation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: ChatRole,
    /// The rest of OpenAI's message (`content`, `tool_calls`, `tool_call_id`), passed on.
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// Who wrote a message: the system prompt is the server's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum ChatRole {
    User,
    Assistant,
    Tool,
}

impl ChatMessage {
    /// The message as OpenAI's API takes it.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// A turn answered whole (`"stream": false`): every event, the answer or the error last.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChatAnswer {
    /// What the loop reported, in order.
    pub events: Vec<ChatEvent>,
}

/// What the loop reports, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChatEvent {
    /// The model calls a tool.
    ToolCall {
        /// The call's id, to pair it with its result.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments, as the model wrote them.
        arguments: Value,
    },
    /// A tool's answer, or its error, as the model is told.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// What it answered.
        result: Value,
        /// Whether it refused.
        is_error: bool,
    },
    /// A piece of the answer as it streams.
    Delta {
        /// The text added.
        content: String,
    },
    /// The answer, the whole conversation to send back with the next question, and the
    /// entity in focus.
    Done {
        /// The whole answer.
        content: String,
        /// The conversation so far.
        messages: Vec<Value>,
        /// The entity the answer is about, when one is.
        #[serde(skip_serializing_if = "Option::is_none")]
        focus: Option<Value>,
    },
    /// The loop stopped: the model could not be reached, or it went round too often.
    Error {
        /// Why.
        message: String,
    },
}
