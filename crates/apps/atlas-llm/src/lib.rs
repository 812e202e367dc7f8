//! One client for OpenAI-compatible chat endpoints (OpenAI, LiteLLM, vLLM, `atlas model-sim`),
//! shared by the business-graph chat and the phone agent.
//!
//! A call streams when the endpoint streams (server-sent events) and reads a whole answer when
//! it does not; either way it records the time to the first token and the tokens used, as the
//! endpoint reports them. Transient failures — no connection, 429, 5xx — are retried with
//! exponential backoff; a wrong key (401/403) or a wrong model or address (404) fails at once
//! with an error that says which, since retrying cannot fix them.
//!
//! Key design decision: **blocking, on a plain HTTP client (ureq).** The chat runs it on a
//! blocking thread, the agent between device commands that block anyway; a blocking client keeps
//! the streaming reader a simple loop over lines.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Where the model is, and how patient to be.
#[derive(Debug, Clone)]
pub struct ModelConfig {
    /// The OpenAI-compatible base URL, e.g. http://127.0.0.1:4000/v1.
    pub base_url: String,
    /// The model to ask.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when given.
    pub api_key: Option<String>,
    /// The whole call, first byte to last.
    pub timeout: Duration,
    /// Attempts after the first, on transient failures.
    pub retries: u32,
    /// The wait before the first retry; doubled for each next one.
    pub backoff: Duration,
}

impl ModelConfig {
    /// A model at `base_url` with the usual patience: 120 s a call, 3 retries from 0.5 s.
    pub fn new(base_url: &str, model: &str, api_key: Option<String>) -> ModelConfig {
        ModelConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
            timeout: Duration::from_secs(120),
            retries: 3,
            backoff: Duration::from_millis(500),
        }
    }
}

/// One tool call of a reply: its id when the endpoint gave one, its name, its arguments as sent
/// (a JSON string from OpenAI, an object from some providers).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id, when the endpoint gave one.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Its arguments as sent.
    pub arguments: Value,
}

/// A model's reply and what it cost.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    /// The reply's text.
    pub content: String,
    /// The tools it calls, in order.
    pub calls: Vec<ToolCall>,
    /// From sending the request to the first piece of the answer.
    pub first_token_ms: f64,
    /// From sending the request to the last piece.
    pub total_ms: f64,
    /// Tokens of the request, when the endpoint says.
    pub prompt_tokens: Option<u64>,
    /// Tokens of the reply, when the endpoint says.
    pub completion_tokens: Option<u64>,
    /// Calls made, retries included.
    pub attempts: u32,
}

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// 401 or 403: the key is wrong or missing.
    #[error("the model at {url} refused the key ({status}): {message}. Check --model-key")]
    Unauthorized {
        /// The endpoint.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// What it said.
        message: String,
    },
    /// 404: the model's name or the address is wrong.
    #[error(
        "the model at {url} does not know the model or the address ({status}): {message}. Check --model and --model-url"
    )]
    NotFound {
        /// The endpoint.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// What it said.
        message: String,
    },
    /// Another answer that retrying would not change.
    #[error("the model at {url} answered {status}: {message}")]
    Rejected {
        /// The endpoint.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// What it said.
        message: String,
    },
    /// No answer after every retry (no connection, 429, 5xx, a timeout).
    #[error("the model at {url} failed {attempts} times, last: {message}")]
    Unavailable {
        /// The endpoint.
        url: String,
        /// Calls made.
        attempts: u32,
        /// The last failure.
        message: String,
    },
    /// An answer that is not what an OpenAI-compatible endpoint sends.
    #[error("the model's answer could not be read: {0}")]
    Unreadable(String),
}

/// Anything that answers a chat-completions body: an endpoint ([`ModelConfig`]), or a model in
/// the same process (a scripted one for evaluations).
pub trait Model: Send + Sync {
    /// The model's name, for reports.
    fn name(&self) -> String;
    /// Sends a chat-completions `body`, streaming pieces of the answer to `on_delta`.
    fn complete(
        &self,
        body: &Value,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, ModelError>;
}

impl Model for ModelConfig {
    fn name(&self) -> String {
        self.model.clone()
    }

    fn complete(
        &self,
        body: &Value,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, ModelError> {
        complete(self, body, on_delta)
    }
}

/// A chat message's text: its `content` string, or its text parts joined (an image part has
/// none), as a server reads what it was sent.
pub fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Calls the model with a chat-completions body (`model` filled in when missing); `on_delta`
/// sees each piece of text as it arrives.
pub fn complete(
    config: &ModelConfig,
    body: &Value,
    on_delta: &mut dyn FnMut(&str),
) -> Result<Completion, ModelError> {
    let url = format!("{}/chat/completions", config.base_url);
    let mut body = body.clone();
    if body.get("model").is_none() {
        body["model"] = json!(config.model);
    }
    if body.get("stream") == Some(&Value::Bool(true)) && body.get("stream_options").is_none() {
        body["stream_options"] = json!({"include_usage": true});
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(config.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    let started = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let failure = match attempt(&agent, config, &url, &body, started, on_delta) {
            Ok(mut completion) => {
                completion.attempts = attempts;
                return Ok(completion);
            }
            Err(Attempt::Final(e)) => return Err(e),
            Err(Attempt::Transient(message)) => message,
        };
        if attempts > config.retries {
            return Err(ModelError::Unavailable {
                url,
                attempts,
                message: failure,
            });
        }
        tracing::warn!("model call {attempts} failed ({failure}); retrying");
        std::thread::sleep(config.backoff * 2u32.saturating_pow(attempts - 1));
    }
}

enum Attempt {
    /// Worth another try: no connection, rate limited, a server error.
    Transient(String),
    Final(ModelError),
}

fn attempt(
    agent: &ureq::Agent,
    config: &ModelConfig,
    url: &str,
    body: &Value,
    started: Instant,
    on_delta: &mut dyn FnMut(&str),
) -> Result<Completion, Attempt> {
    let mut request = agent.post(url).header("Content-Type", "application/json");
    if let Some(key) = &config.api_key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut response = request
        .send(body.to_string())
        .map_err(|e| Attempt::Transient(format!("no answer: {e}")))?;
    let status = response.status().as_u16();
    let streamed = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("text/event-stream"));
    let reader = response.body_mut().as_reader();
    if !(200..300).contains(&status) {
        let mut text = String::new();
        let _ = BufReader::new(reader).read_line(&mut text);
        let message = text.trim().chars().take(300).collect::<String>();
        let url = url.to_string();
        return Err(match status {
            429 | 500 | 502 | 503 | 504 => Attempt::Transient(format!("{status}: {message}")),
            401 | 403 => Attempt::Final(ModelError::Unauthorized {
                url,
                status,
                message,
            }),
            404 => Attempt::Final(ModelError::NotFound {
                url,
                status,
                message,
            }),
            _ => Attempt::Final(ModelError::Rejected {
                url,
                status,
                message,
            }),
        });
    }
    let mut completion = Completion::default();
    let mut first = None;
    let since = |started: Instant| started.elapsed().as_secs_f64() * 1000.0;
    if !streamed {
        let whole: Value = serde_json::from_reader(reader)
            .map_err(|e| Attempt::Final(ModelError::Unreadable(e.to_string())))?;
        let message = whole
            .pointer("/choices/0/message")
            .cloned()
            .unwrap_or_default();
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            first = Some(since(started));
            on_delta(text);
            completion.content.push_str(text);
        }
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            completion.calls.push(ToolCall {
                id: call.get("id").and_then(Value::as_str).map(String::from),
                name: call
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments: call
                    .pointer("/function/arguments")
                    .cloned()
                    .unwrap_or_default(),
            });
        }
        read_usage(&whole, &mut completion);
    } else {
        // Streamed tool calls arrive in fragments keyed by index: accumulate them.
        let mut fragments: Vec<(Option<String>, String, String, Option<Value>)> = Vec::new();
        for line in BufReader::new(reader).lines() {
            let line = line.map_err(|e| Attempt::Transient(format!("the stream broke: {e}")))?;
            let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                continue;
            };
            if data == "[DONE]" {
                break;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            read_usage(&chunk, &mut completion);
            let Some(d) = chunk.pointer("/choices/0/delta") else {
                continue;
            };
            if let Some(text) = d.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                first.get_or_insert_with(|| since(started));
                on_delta(text);
                completion.content.push_str(text);
            }
            for call in d
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                first.get_or_insert_with(|| since(started));
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                if index > 64 {
                    continue; // no model makes that many calls in one reply
                }
                if fragments.len() <= index {
                    fragments.resize(index + 1, (None, String::new(), String::new(), None));
                }
                let slot = &mut fragments[index];
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    slot.0 = Some(id.to_string());
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    slot.1.push_str(name);
                }
                match call.pointer("/function/arguments") {
                    Some(Value::String(part)) => slot.2.push_str(part),
                    Some(object @ Value::Object(_)) => slot.3 = Some(object.clone()),
                    _ => {}
                }
            }
        }
        for (id, name, text, object) in fragments {
            if name.is_empty() && text.is_empty() && object.is_none() {
                continue;
            }
            completion.calls.push(ToolCall {
                id,
                name,
                arguments: object.unwrap_or(Value::String(text)),
            });
        }
    }
    completion.total_ms = since(started);
    completion.first_token_ms = first.unwrap_or(completion.total_ms);
    Ok(completion)
}

fn read_usage(value: &Value, completion: &mut Completion) {
    if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
        completion.prompt_tokens = usage.get("prompt_tokens").and_then(Value::as_u64);
        completion.completion_tokens = usage.get("completion_tokens").and_then(Value::as_u64);
    }
}
