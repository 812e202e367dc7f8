//! The tool-calling loop. It runs on a blocking thread (the model is called with a blocking
//! HTTP client and read as a stream of server-sent events) and reports through a channel.

use std::sync::Arc;

pub use atlas_api::chat::ChatEvent;
use atlas_registry::{ToolContext, ToolGroup, ToolRegistry};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

/// Seed 003 §6's orchestration rules.
pub const SYSTEM_PROMPT: &str = "你是业务图谱助手，通过调用工具回答关于业务流程（Business）、实现/接口（Implementation）和数据资源（DataResource，库表）的问题。You answer questions about business processes, their implementations (APIs, jobs) and data resources (tables) by calling tools.

规则 Rules:
1. 不要假设用户会提供任何技术 ID（process_id / impl_id / resource_id）。Never expect ids from the user.
2. 用户提到某个业务/流程/活动 → 先调用 search_businesses；提到接口/服务/API → search_implementations；提到表/数据/库 → search_data_resources。Search first.
3. 拿到候选后：只有一个高分候选 → 直接用其 ID 调用后续工具；多个候选分数接近（相差小于 0.05）→ 先问用户“你说的是 A 还是 B？”。When candidates are close, ask back.
4. 概览性问题 → summarize_*；路径、上下游、依赖范围 → get_*_context_for_chat、get_neighbors 或 get_path_between_entities。
5. 维护“当前焦点实体”（最近一次确认的流程/接口/表）：用户说“它 / 这个接口 / 这个表”时指向它，有歧义再搜索或澄清。Keep the focus entity for 'it / this API / this table'.
6. 工具返回错误时，读错误信息并修正参数再试；不要编造图中没有的信息。Read tool errors and correct your arguments; never invent what the graph does not say.
7. 用用户的语言回答，简洁，列出相关的 ID。Answer in the user's language, briefly, naming the ids.";

/// Where the model is.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// The OpenAI-compatible base URL, e.g. http://127.0.0.1:4000/v1 (LiteLLM).
    pub base_url: String,
    /// The model to ask.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when given.
    pub api_key: Option<String>,
    /// Model calls per question before the loop gives up.
    pub max_rounds: usize,
}

const ID_FIELDS: [&str; 3] = ["process_id", "impl_id", "resource_id"];

/// The entity the conversation last worked on: the last id argument a tool call carried.
pub fn focus_of(messages: &[Value]) -> Option<Value> {
    for message in messages.iter().rev() {
        for call in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .rev()
        {
            let arguments = parse_arguments(call.pointer("/function/arguments")).ok()?;
            for field in ID_FIELDS {
                if let Some(id) = arguments.get(field).and_then(Value::as_str) {
                    return Some(json!({ field: id }));
                }
            }
            if let (Some(t), Some(id)) = (
                arguments.get("node_type").and_then(Value::as_str),
                arguments.get("node_id").and_then(Value::as_str),
            ) {
                return Some(json!({ "type": t, "id": id }));
            }
        }
    }
    None
}

/// A call's arguments that are not JSON, as the model wrote them.
#[derive(Debug, thiserror::Error)]
#[error("the arguments are not valid JSON ({source}): {text}")]
struct BadArguments {
    text: String,
    source: serde_json::Error,
}

/// A call's arguments: a JSON string (OpenAI), an object (some providers), or nothing.
fn parse_arguments(raw: Option<&Value>) -> Result<Value, BadArguments> {
    match raw {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|source| BadArguments {
            text: text.clone(),
            source,
        }),
        Some(other) => Ok(other.clone()),
    }
}

/// The tools a chat offers: the business graph's and the knowledge bases'.
pub fn chat_tools(tools: &ToolRegistry) -> Vec<Value> {
    tools
        .iter()
        .filter(|t| matches!(t.group, ToolGroup::Business | ToolGroup::Knowledge))
        .map(|t| serde_json::to_value(t.openai_function()).unwrap_or_default())
        .collect()
}

/// Answers the last user message of `messages` (the conversation so far, without the system
/// prompt), calling tools as the model asks. Call from a thread that may block.
pub fn run_chat(
    config: &ChatConfig,
    tools: Arc<ToolRegistry>,
    context: ToolContext,
    runtime: tokio::runtime::Handle,
    mut messages: Vec<Value>,
    events: UnboundedSender<ChatEvent>,
) {
    let send = |e: ChatEvent| {
        let _ = events.send(e);
    };
    let offered = chat_tools(&tools);
    for _ in 0..config.max_rounds.max(1) {
        let mut system = SYSTEM_PROMPT.to_string();
        if let Some(focus) = focus_of(&messages) {
            system += &format!("\n\n当前焦点实体 Focus entity: {focus}");
        }
        let mut all = vec![json!({ "role": "system", "content": system })];
        all.extend(messages.iter().cloned());
        let body = json!({
            "model": config.model,
            "messages": all,
            "tools": offered,
            "tool_choice": "auto",
            "stream": true,
        });
        let model =
            atlas_llm::ModelConfig::new(&config.base_url, &config.model, config.api_key.clone());
        let reply = match atlas_llm::complete(&model, &body, &mut |text| {
            send(ChatEvent::Delta {
                content: text.to_string(),
            })
        }) {
            Ok(reply) => reply,
            Err(e) => {
                send(ChatEvent::Error {
                    message: e.to_string(),
                });
                return;
            }
        };
        if reply.calls.is_empty() {
            messages.push(json!({ "role": "assistant", "content": reply.content }));
            let focus = focus_of(&messages);
            send(ChatEvent::Done {
                content: reply.content,
                messages,
                focus,
            });
            return;
        }
        let calls: Vec<(String, String, Value)> = reply
            .calls
            .into_iter()
            .map(|call| {
                let id = call
                    .id
                    .filter(|i| !i.is_empty())
                    .unwrap_or_else(|| format!("call_{}", uuid::Uuid::new_v4().simple()));
                (id, call.name, call.arguments)
            })
            .collect();
        messages.push(json!({
            "role": "assistant",
            "content": if reply.content.is_empty() { Value::Null } else { Value::String(reply.content) },
            "tool_calls": calls.iter().map(|(id, name, raw)| json!({
                "id": id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": match raw { Value::String(s) => s.clone(), other => other.to_string() },
                },
            })).collect::<Vec<_>>(),
        }));
        for (id, name, raw) in calls {
            let arguments = parse_arguments(Some(&raw));
            send(ChatEvent::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: arguments.as_ref().cloned().unwrap_or(raw),
            });
            let tool = tools.get(&name).filter(|_| offered_name(&offered, &name));
            let outcome = match (arguments, tool) {
                (_, None) => Err(json!({ "error": {
                    "code": "NOT_FOUND",
                    "message": format!(
                        "no tool named {name:?}; the tools are: {}",
                        offered
                            .iter()
                            .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                } })),
                (Err(bad), _) => Err(
                    json!({ "error": { "code": "INVALID_PARAMETER", "message": bad.to_string() } }),
                ),
                (Ok(arguments), Some(tool)) => runtime
                    .block_on(tool.call(context.clone(), arguments))
                    .map_err(|e| e.to_body()),
            };
            let (result, is_error) = match outcome {
                Ok(v) => (v, false),
                Err(v) => (v, true),
            };
            messages
                .push(json!({ "role": "tool", "tool_call_id": id, "content": result.to_string() }));
            send(ChatEvent::ToolResult {
                id,
                name,
                result,
                is_error,
            });
        }
    }
    send(ChatEvent::Error {
        message: format!(
            "no answer after {} model calls; ask more narrowly",
            config.max_rounds
        ),
    });
}

fn offered_name(offered: &[Value], name: &str) -> bool {
    offered
        .iter()
        .any(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(name))
}
