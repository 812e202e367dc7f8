//! The one tool registry: every interface as a name, a description, a JSON Schema derived from
//! its request type, and a handler from JSON to JSON. HTTP routes, MCP tools and the chat page
//! are all generated from this list.
//!
//! Three domains share it: the GUI graph's seed-000 interfaces, the business graph's seed-003
//! tools and knowledge-base retrieval. A handler receives a [`ToolContext`] holding all three, so
//! a face (HTTP, MCP, the chat loop) serves every tool the same way. Every call has a time
//! limit: a tool that could walk or embed for long answers an error instead of holding a
//! connection or a model's turn.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use atlas_biz::{BizError, BizSnapshot, BizStore};
use atlas_kb::{KbError, KnowledgeBase};
use atlas_model::{AtlasError, Result};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Atlas;

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;
pub type JsonFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>>> + Send>>;
/// A request body as it arrived (bytes of any owner).
pub type Body = Box<dyn AsRef<[u8]> + Send>;
type Handler = Arc<dyn Fn(ToolContext, Value) -> ToolFuture + Send + Sync>;
type JsonHandler = Arc<dyn Fn(ToolContext, Body) -> JsonFuture + Send + Sync>;

/// How long any tool call may take before it answers an error.
pub const TOOL_TIME_LIMIT: Duration = Duration::from_secs(20);

/// What the tools work on: the GUI graph, and the business graph and knowledge bases when this
/// process serves them.
#[derive(Clone)]
pub struct ToolContext {
    pub atlas: Arc<Atlas>,
    pub biz: Option<Arc<BizStore>>,
    pub kb: Option<Arc<KnowledgeBase>>,
    /// The caller proved the server token (a server started with `--token` lets no other caller
    /// reach a tool). It opens every knowledge base; any other caller opens one with its key.
    pub holds_server_token: bool,
}

impl From<Arc<Atlas>> for ToolContext {
    fn from(atlas: Arc<Atlas>) -> ToolContext {
        ToolContext {
            atlas,
            biz: None,
            kb: None,
            holds_server_token: false,
        }
    }
}

/// Which domain a tool belongs to. The chat page offers the business and knowledge tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolGroup {
    /// Seed 000: the GUI graph of apps and websites.
    Navigation,
    /// Seed 003: the business graph.
    Business,
    /// The knowledge bases (seed 002's GET_KNOWLEDGE_DATA).
    Knowledge,
}

/// One named interface.
#[derive(Clone)]
pub struct Tool {
    pub name: &'static str,
    pub group: ToolGroup,
    pub description: &'static str,
    /// JSON Schema of the input object.
    pub input_schema: Value,
    /// JSON Schema of the answer, from the same Rust type the handler returns.
    pub output_schema: Value,
    /// Whether the tool changes the graph (and so waits for durability).
    pub writes: bool,
    handler: Handler,
    json_handler: JsonHandler,
}

impl Tool {
    /// Runs the tool on a JSON input.
    pub fn call(&self, context: impl Into<ToolContext>, input: Value) -> ToolFuture {
        (self.handler)(context.into(), input)
    }

    /// Runs the tool on a JSON body and answers serialized JSON: the HTTP path, which goes from
    /// bytes to the typed request and back without building a `Value` tree on either side.
    pub fn call_json(&self, context: impl Into<ToolContext>, body: Body) -> JsonFuture {
        (self.json_handler)(context.into(), body)
    }

    /// The OpenAI function-calling definition of this tool.
    pub fn openai_function(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": { "name": self.name, "description": self.description, "parameters": self.input_schema }
        })
    }
}

/// Parses a tool input, turning serde's message into seed 000's INVALID_PARAMETER.
pub fn parse_input<T: DeserializeOwned>(input: Value) -> Result<T> {
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if !input.is_object() {
        return Err(AtlasError::invalid(
            "body",
            "the request body must be a JSON object",
        ));
    }
    serde_json::from_value(input).map_err(|e| AtlasError::InvalidParameter {
        message: format!("invalid parameters: {e}"),
        details: serde_json::json!({ "reason": e.to_string() }),
    })
}

/// Parses a raw JSON body: empty or `null` means `{}`, anything but an object is refused, and
/// malformed JSON is told apart from well-formed JSON with the wrong fields.
pub fn parse_json_input<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    let text = body.trim_ascii();
    let text: &[u8] = if text.is_empty() { b"{}" } else { text };
    let malformed = |e: serde_json::Error| AtlasError::InvalidParameter {
        message: format!("malformed JSON: {e}"),
        details: serde_json::json!({ "line": e.line(), "column": e.column() }),
    };
    if text[0] != b'{' {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => Err(AtlasError::invalid(
                "body",
                "the request body must be a JSON object",
            )),
            Err(e) => Err(malformed(e)),
        };
    }
    let invalid = |e: serde_json::Error| AtlasError::InvalidParameter {
        message: format!("invalid parameters: {e}"),
        details: serde_json::json!({ "reason": e.to_string() }),
    };
    match serde_json::from_slice(text) {
        Ok(value) => Ok(value),
        Err(e)
            if matches!(
                e.classify(),
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof
            ) =>
        {
            Err(malformed(e))
        }
        // `3.0` where a count is wanted: JSON has one number type, and Python and JavaScript
        // clients send whole floats. Read again with every whole float as an integer.
        Err(e) if e.to_string().contains("invalid type: floating point") => {
            let mut value: Value = serde_json::from_slice(text).map_err(malformed)?;
            whole_floats_as_integers(&mut value);
            serde_json::from_value(value).map_err(invalid)
        }
        Err(e) => Err(invalid(e)),
    }
}

/// The largest integer every JSON implementation reads exactly (2^53 − 1, RFC 7493's I-JSON).
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// The first integer literal (outside strings) beyond ±[`MAX_SAFE_INTEGER`], if any.
fn unsafe_integer(json: &[u8]) -> Option<String> {
    let mut i = 0;
    let mut in_string = false;
    while i < json.len() {
        let b = json[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'-' || b.is_ascii_digit() {
            let start = i;
            while i < json.len()
                && matches!(json[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
            {
                i += 1;
            }
            let literal = std::str::from_utf8(&json[start..i]).unwrap_or("");
            let integer = !literal.contains(['.', 'e', 'E']);
            let digits = literal.trim_start_matches('-');
            if integer && digits.parse::<u64>().map_or(true, |n| n > MAX_SAFE_INTEGER) {
                return Some(literal.to_string());
            }
            continue;
        }
        i += 1;
    }
    None
}

/// Turns every float with no fraction (`3.0`) into the integer it is.
fn whole_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_as_integers),
        Value::Object(map) => map.values_mut().for_each(whole_floats_as_integers),
        _ => {}
    }
}

/// Refuses a control character (other than tab and newline) in any text of the request that
/// the schema names: no label, intent or query means one, and they break logs, terminals and
/// files. Fields the schema does not name are ignored, as serde ignores them. The raw scan is a
/// byte loop; the walk over the parsed body runs only when it finds something.
fn refuse_control_characters(body: &[u8], schema: &Value) -> Result<()> {
    if control_character(body).is_none() && unsafe_integer(body).is_none() {
        return Ok(());
    }
    let Ok(value) = serde_json::from_slice::<Value>(body.trim_ascii()) else {
        return Ok(());
    };
    control_free(&value, schema)
}

/// [`refuse_control_characters`] over a parsed body.
fn control_free(value: &Value, schema: &Value) -> Result<()> {
    match control_in_named(value, schema, schema, "") {
        Some((field, Refused::Control(c))) => Err(AtlasError::invalid(
            if field.is_empty() { "body" } else { &field },
            format!(
                "{field} holds the control character U+{c:04X}: only tab and newline are taken"
            ),
        )),
        Some((field, Refused::Integer(n))) => Err(AtlasError::invalid(
            &field,
            format!(
                "{field}: {n} is beyond ±{MAX_SAFE_INTEGER}, the integers JSON carries exactly"
            ),
        )),
        None => Ok(()),
    }
}

/// What a named field may not hold.
enum Refused {
    Control(u32),
    Integer(f64),
}

fn is_integer_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer"),
        _ => false,
    }
}

/// The first refused control character in `value`'s texts at places `schema` names.
fn control_in_named(
    value: &Value,
    schema: &Value,
    root: &Value,
    at: &str,
) -> Option<(String, Refused)> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root.get("$defs")?.get(name))
            .unwrap_or(schema),
        None => schema,
    };
    let alternatives = ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten();
    for alternative in alternatives {
        if let Some(found) = control_in_named(value, alternative, root, at) {
            return Some(found);
        }
    }
    match value {
        Value::String(text) => text
            .chars()
            .find(|c| atlas_text::is_refused_control(*c))
            .map(|c| (at.to_string(), Refused::Control(u32::from(c)))),
        Value::Number(n) if is_integer_schema(schema) => {
            let x = n.as_f64().unwrap_or(0.0);
            (x.abs() > MAX_SAFE_INTEGER as f64).then(|| (at.to_string(), Refused::Integer(x)))
        }
        Value::Array(items) => {
            let item_schema = schema.get("items")?;
            items.iter().enumerate().find_map(|(i, item)| {
                control_in_named(item, item_schema, root, &format!("{at}[{i}]"))
            })
        }
        Value::Object(map) => {
            let properties = schema.get("properties")?.as_object()?;
            map.iter().find_map(|(key, item)| {
                let name = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                control_in_named(item, properties.get(key)?, root, &name)
            })
        }
        _ => None,
    }
}

/// Whether a JSON text may hold a refused control character in a string: escaped (`\u0000`,
/// `\b`, `\f`, `\r`) or raw (DEL, the C1 range).
fn control_character(json: &[u8]) -> Option<u32> {
    let refused = |c: u32| char::from_u32(c).is_some_and(atlas_text::is_refused_control);
    let mut i = 0;
    while i < json.len() {
        match json[i] {
            b'\\' => {
                match json.get(i + 1) {
                    Some(b'b') => return Some(0x08),
                    Some(b'f') => return Some(0x0C),
                    Some(b'r') => return Some(0x0D),
                    Some(b'u') => {
                        let code = json
                            .get(i + 2..i + 6)
                            .and_then(|h| std::str::from_utf8(h).ok())
                            .and_then(|h| u32::from_str_radix(h, 16).ok());
                        if let Some(c) = code.filter(|c| refused(*c)) {
                            return Some(c);
                        }
                        i += 6;
                        continue;
                    }
                    _ => {}
                }
                i += 2;
                continue;
            }
            0x7F => return Some(0x7F),
            0xC2 if json.get(i + 1).is_some_and(|b| (0x80..=0x9F).contains(b)) => {
                return Some(u32::from(json[i + 1]));
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    schema
}

/// No control character but tab and newline (see [`control_character`]).
const TEXT_PATTERN: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";
/// An optional text that, when given, must not be empty or blank.
pub(crate) const NON_BLANK_TEXT: &str = REQUIRED_TEXT_PATTERN;
/// The same, and something besides white space: what a required text must hold.
pub(crate) const REQUIRED_TEXT_PATTERN: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";

/// An input schema that says what the server checks of texts: no control characters, and a
/// required text not empty or blank (the checks every request goes through).
fn input_schema_of<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    constrain_texts(&mut schema);
    schema
}

fn constrain_texts(schema: &mut Value) {
    let Value::Object(map) = schema else {
        if let Value::Array(items) = schema {
            items.iter_mut().for_each(constrain_texts);
        }
        return;
    };
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    // An object whose items are checked one by one (a batch answers each item's error) keeps
    // its texts unconstrained here: an empty one is that item's error, not the request's.
    let per_item = map.get("x-checked-per-item") == Some(&Value::Bool(true));
    if let Some(Value::Object(properties)) = map.get_mut("properties").filter(|_| !per_item) {
        for (name, property) in properties.iter_mut() {
            let is_text = property.get("type") == Some(&Value::String("string".into()));
            if is_text && required.contains(name) && property.get("enum").is_none() {
                property["minLength"] = Value::from(1);
                property["pattern"] = Value::from(REQUIRED_TEXT_PATTERN);
            }
        }
    }
    let has_type = |name: &str| match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => false,
    };
    let is_text = has_type("string");
    if has_type("integer") {
        // What the integer's Rust type holds, and never beyond what JSON carries exactly.
        let (low, high): (i64, i64) = match map.get("format").and_then(Value::as_str) {
            Some("uint8") => (0, u8::MAX.into()),
            Some("uint16") => (0, u16::MAX.into()),
            Some("uint32") => (0, u32::MAX.into()),
            Some("int32") => (i32::MIN.into(), i32::MAX.into()),
            Some(f) if f.starts_with("uint") => (0, MAX_SAFE_INTEGER as i64),
            _ => (-(MAX_SAFE_INTEGER as i64), MAX_SAFE_INTEGER as i64),
        };
        let tighter = |key: &str, bound: i64, keep_smaller: bool| -> i64 {
            match map.get(key).and_then(Value::as_f64) {
                Some(v) if (v < bound as f64) == keep_smaller => v as i64,
                _ => bound,
            }
        };
        let (low, high) = (
            tighter("minimum", low, false),
            tighter("maximum", high, true),
        );
        map.insert("minimum".into(), Value::from(low));
        map.insert("maximum".into(), Value::from(high));
    }
    if is_text
        && !map.contains_key("pattern")
        && !map.contains_key("enum")
        && !map.contains_key("const")
    {
        map.insert("pattern".into(), Value::from(TEXT_PATTERN));
    }
    map.values_mut().for_each(constrain_texts);
}

/// Runs a tool's future within [`TOOL_TIME_LIMIT`].
async fn limited<T>(name: &str, future: impl Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(TOOL_TIME_LIMIT, future).await {
        Ok(answer) => answer,
        Err(_) => Err(AtlasError::Graph(format!(
            "{name} did not answer within {} s",
            TOOL_TIME_LIMIT.as_secs()
        ))),
    }
}

fn tool<Req, Resp, F, Fut>(
    group: ToolGroup,
    name: &'static str,
    description: &'static str,
    writes: bool,
    f: F,
) -> Tool
where
    Req: DeserializeOwned + JsonSchema + Send + 'static,
    Resp: Serialize + JsonSchema + 'static,
    F: Fn(ToolContext, Req) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resp>> + Send + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    let input_schema = input_schema_of::<Req>();
    let schema = Arc::new(input_schema.clone());
    let schema_too = schema.clone();
    Tool {
        name,
        group,
        description,
        input_schema,
        output_schema: schema_of::<Resp>(),
        writes,
        handler: Arc::new(move |context, input| {
            let f = f.clone();
            let schema = schema_too.clone();
            Box::pin(async move {
                control_free(&input, &schema)?;
                let req: Req = parse_input(input)?;
                let resp = limited(name, f(context, req)).await?;
                serde_json::to_value(resp).map_err(|e| AtlasError::Graph(e.to_string()))
            })
        }),
        json_handler: Arc::new(move |context, body| {
            let g = g.clone();
            let schema = schema.clone();
            Box::pin(async move {
                let req: Req = parse_json_input((*body).as_ref())?;
                refuse_control_characters((*body).as_ref(), &schema)?;
                drop(body);
                let resp = limited(name, g(context, req)).await?;
                serde_json::to_vec(&resp).map_err(|e| AtlasError::Graph(e.to_string()))
            })
        }),
    }
}

/// Runs a synchronous interface. With a remote embedder it may wait on the network, so it runs on
/// tokio's blocking pool instead of stalling a worker that serves other connections; with a local
/// one it takes microseconds and runs in place, where a hop to another thread would cost more.
fn sync_call<R: Send + 'static>(
    atlas: Arc<Atlas>,
    f: impl FnOnce(&Atlas) -> Result<R> + Send + 'static,
) -> impl Future<Output = Result<R>> + Send {
    async move {
        if atlas.embedder().is_remote() {
            tokio::task::spawn_blocking(move || f(&atlas))
                .await
                .map_err(|e| AtlasError::Graph(format!("interface failed: {e}")))?
        } else {
            f(&atlas)
        }
    }
}

/// Every tool, by name.
pub struct ToolRegistry {
    tools: Vec<Tool>,
}

impl ToolRegistry {
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }
}

/// Every interface: seed 000's, seed 003's and knowledge retrieval.
pub fn registry() -> ToolRegistry {
    use crate::*;
    let mut tools = vec![
        tool(
            ToolGroup::Navigation,
            "query_path",
            "根据用户意图查询从当前页面到目标页面的完整操作路径（主路径与备选路径）。Plan the path from the current page to the page that serves an intent.",
            false,
            |c: ToolContext, r: QueryPathRequest| sync_call(c.atlas, move |a| a.query_path(r)),
        ),
        tool(
            ToolGroup::Navigation,
            "get_next_action",
            "返回为完成意图当前需要执行的下一个操作。The next action to take from the current page for an intent.",
            false,
            |c: ToolContext, r: NextActionRequest| {
                sync_call(c.atlas, move |a| a.get_next_action(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "match_current_page",
            "根据页面标题和UI结构匹配图谱中的页面，并记住该页面这次显示的控件。Recognise the current page from its title and widgets, and remember what this screen of it shows.",
            true,
            |c: ToolContext, r: MatchPageRequest| async move {
                let atlas = c.atlas.clone();
                let (response, screen) = sync_call(c.atlas, move |a| a.recognise_page(r)).await?;
                if let (Some(page), Some(widgets)) = (&response.page, screen) {
                    atlas.remember_screen(&page.page_id, widgets).await?;
                }
                Ok(response)
            },
        ),
        tool(
            ToolGroup::Navigation,
            "get_rag_context",
            "为LLM决策生成结构化上下文与提示词。Prompt and structured context (pages, paths, past cases, tips) for an LLM.",
            false,
            |c: ToolContext, r: RagContextRequest| {
                sync_call(c.atlas, move |a| a.get_rag_context(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "report_transition",
            "上报一次操作的结果，更新转换统计。Report what an action did; updates the edge's statistics.",
            true,
            |c: ToolContext, r: ReportTransitionRequest| async move {
                c.atlas.report_transition(r).await
            },
        ),
        tool(
            ToolGroup::Navigation,
            "end_session",
            "上报一次会话的结局（完成任务或放弃）；只有未失败的会话会被当作任务记忆重放。Say how an agent session for an intent ended; sessions said to have failed are not replayed.",
            true,
            |c: ToolContext, r: EndSessionRequest| async move { c.atlas.end_session(r).await },
        ),
        tool(
            ToolGroup::Navigation,
            "add_page",
            "添加新发现的页面（重复添加会更新该页面）。Add (or update) a page.",
            true,
            |c: ToolContext, r: AddPageRequest| async move { c.atlas.add_page(r).await },
        ),
        tool(
            ToolGroup::Navigation,
            "register_intent",
            "注册用户意图及其目标页面与关键词。Register an intent with its target page and keywords.",
            true,
            |c: ToolContext, r: RegisterIntentRequest| async move { c.atlas.register_intent(r).await },
        ),
        tool(
            ToolGroup::Navigation,
            "get_available_actions",
            "获取页面的所有可用操作，按成功率排序。A page's outgoing actions by success rate.",
            false,
            |c: ToolContext, r: AvailableActionsRequest| {
                sync_call(c.atlas, move |a| a.get_available_actions(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "find_similar_intents",
            "查找相似的已注册意图（可跨App）。Registered intents similar to a query, across apps unless app_id is given.",
            false,
            |c: ToolContext, r: SimilarIntentsRequest| {
                sync_call(c.atlas, move |a| a.find_similar_intents(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "get_graph_stats",
            "获取图谱统计信息（可按App）。Counts and averages of the graph, overall or for one app.",
            false,
            |c: ToolContext, r: GraphStatsRequest| {
                sync_call(c.atlas, move |a| a.get_graph_stats(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "get_app_graph",
            "获取App的页面与转换（用于绘图；大图取某页面的邻域）。An app's pages (with their depth from the home page) and transitions (with their statistics), whole or around one page, for drawing.",
            false,
            |c: ToolContext, r: AppGraphRequest| sync_call(c.atlas, move |a| a.get_app_graph(r)),
        ),
        tool(
            ToolGroup::Navigation,
            "get_page_details",
            "获取页面详情：控件、可用操作及其统计、服务的意图、最近上报、截图与文件夹。A page as a viewer shows it: widgets, actions both ways with their statistics, the intents it serves, recent reports, its screenshot and seed 001 folder.",
            false,
            |c: ToolContext, r: PageDetailsRequest| {
                sync_call(c.atlas, move |a| a.get_page_details(r))
            },
        ),
        tool(
            ToolGroup::Navigation,
            "batch_add_transitions",
            "批量添加页面转换关系。Add many transitions at once.",
            true,
            |c: ToolContext, r: BatchAddTransitionsRequest| async move {
                c.atlas.batch_add_transitions(r).await
            },
        ),
    ];
    tools.push(tool(
        ToolGroup::Navigation,
        "parse_agent_reply",
        "从模型回复中解析出第一个完整的 do(...) 或 finish(...) 动作（AutoGLM 语法），返回种子的字典形式。The first well-formed do(...)/finish(...) of a phone model's reply, in the seed's dict form.",
        false,
        |_: ToolContext, r: ParseReplyRequest| async move { parse_agent_reply(r) },
    ));
    tools.extend(business_tools());
    tools.push(knowledge_tool());
    ToolRegistry { tools }
}

/// A phone model's reply to read.
#[derive(Debug, serde::Deserialize, JsonSchema)]
pub struct ParseReplyRequest {
    pub reply: String,
}

/// The action, as `atlas agent parse` prints it, or why there is none: a reply without an
/// action is an answer to tell the model, not a bad request.
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct ParseReplyResponse {
    /// `{"_metadata": "do", "action": "Tap", "element": [500, 300]}` or
    /// `{"_metadata": "finish", "message": "…"}`, argument names as in the grammar; `null` when
    /// nothing in the reply is well-formed.
    pub action: Option<serde_json::Value>,
    /// Why nothing parsed, when nothing did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The agent's parser behind one interface, so a client in any language (Open-AutoGLM's Python
/// loop among them) reads replies exactly as `atlas agent` does.
fn parse_agent_reply(req: ParseReplyRequest) -> Result<ParseReplyResponse> {
    atlas_model::validate_text("reply", &req.reply, true)?;
    Ok(match atlas_action::parse_reply(&req.reply) {
        Ok(action) => ParseReplyResponse {
            action: Some(action.to_dict()),
            error: None,
        },
        Err(e) => ParseReplyResponse {
            action: None,
            error: Some(e.0),
        },
    })
}

/// Seed 003's business-graph errors in seed 000's format.
pub fn biz_error(e: BizError) -> AtlasError {
    match e {
        BizError::Invalid(message) => AtlasError::InvalidParameter {
            message,
            details: serde_json::json!({}),
        },
        BizError::NotFound { .. } => AtlasError::NotFound(e.to_string()),
        BizError::Embed(m) => AtlasError::VectorStore(m),
        BizError::Locked { .. } | BizError::Io(_) => AtlasError::Graph(e.to_string()),
    }
}

/// Knowledge-base errors in seed 000's format (the Dify routes keep Dify's own).
pub fn kb_error(e: KbError) -> AtlasError {
    match e.code().1 {
        400 | 413 => AtlasError::InvalidParameter {
            message: e.to_string(),
            details: serde_json::json!({}),
        },
        404 => AtlasError::NotFound(e.to_string()),
        401 => AtlasError::Unauthorized,
        _ => AtlasError::Graph(e.to_string()),
    }
}

/// Runs `f` on tokio's blocking pool: searches embed their query (milliseconds with a neural
/// embedder), and off the worker threads the time limit can answer while `f` still runs.
async fn blocking<R: Send + 'static>(f: impl FnOnce() -> Result<R> + Send + 'static) -> Result<R> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AtlasError::Graph(format!("tool failed: {e}")))?
}

/// A seed-003 tool: one function of the business graph's snapshot.
fn business<Req, Resp>(
    name: &'static str,
    description: &'static str,
    f: fn(&BizSnapshot, &Req) -> std::result::Result<Resp, BizError>,
) -> Tool
where
    Req: DeserializeOwned + JsonSchema + Send + 'static,
    Resp: Serialize + JsonSchema + Send + 'static,
{
    tool(
        ToolGroup::Business,
        name,
        description,
        false,
        move |c: ToolContext, r: Req| {
            blocking(move || {
                let biz = c.biz.ok_or_else(|| {
                    AtlasError::NotFound("this server has no business graph".into())
                })?;
                f(&biz.current(), &r).map_err(biz_error)
            })
        },
    )
}

fn business_tools() -> Vec<Tool> {
    vec![
        business(
            "search_businesses",
            "根据自然语言描述查找可能相关的业务流程。用于当用户提到“某个业务/流程/活动”但没有给出 process_id 时。Find business processes by a description.",
            BizSnapshot::search_businesses,
        ),
        business(
            "search_implementations",
            "根据自然语言描述或 URI 片段查找实现/接口，例如“订单详情接口”、“/api/order/detail 报 500”。Find implementations (APIs, jobs) by a description or a URI fragment.",
            BizSnapshot::search_implementations,
        ),
        business(
            "search_data_resources",
            "根据自然语言描述查找数据资源（库表或其他数据节点），如“用户资料表”、“月卡记录表”。Find data resources (tables) by a description or a table name.",
            BizSnapshot::search_data_resources,
        ),
        business(
            "summarize_business",
            "给出某个业务流程的简要说明和关键要素，用于快速回答“这个流程大概是干什么的”。A process's summary, key steps and systems.",
            BizSnapshot::summarize_business,
        ),
        business(
            "get_business_context_for_chat",
            "返回指定业务流程的详细图结构信息，供 LLM 深入回答路径/依赖等问题。A process's steps, implementations and resources in detail.",
            BizSnapshot::get_business_context_for_chat,
        ),
        business(
            "summarize_implementation",
            "给出某个实现/接口的简要说明，包括它的用途、URI、所在系统以及主要使用场景。An implementation's summary and the processes that use it.",
            BizSnapshot::summarize_implementation,
        ),
        business(
            "get_implementation_context_for_chat",
            "返回某个实现的业务使用情况、资源依赖及实现间调用关系。Where an implementation is used, what it calls and what data it touches.",
            BizSnapshot::get_implementation_context_for_chat,
        ),
        business(
            "summarize_data_resource",
            "给出某个数据资源（库表等）的简要说明，包括所在库表、用途及典型读写方。A table's summary, main fields and typical readers and writers.",
            BizSnapshot::summarize_data_resource,
        ),
        business(
            "get_resource_context_for_chat",
            "返回某个数据资源在业务中的使用上下文，包括哪些流程/步骤/实现在读写它。Which processes, steps and implementations use a table.",
            BizSnapshot::get_resource_context_for_chat,
        ),
        business(
            "get_neighbors",
            "获取某个节点周围一跳或多跳的邻居节点，用于回答“这个东西周围还有什么”的问题。Neighbours within 1..3 hops, grouped by type, with the edges among them.",
            BizSnapshot::get_neighbors,
        ),
        business(
            "get_path_between_entities",
            "查找两个实体（流程/实现/数据资源）之间的路径，用于回答“从 A 到 B 之间经过了什么”的问题。A shortest path between two entities.",
            BizSnapshot::get_path_between_entities,
        ),
    ]
}

/// retrieve_knowledge's input.
#[derive(Debug, Clone, serde::Deserialize, JsonSchema)]
pub struct RetrieveKnowledgeRequest {
    /// 知识库 ID（Dify 的 dataset_id）
    pub dataset_id: String,
    /// 要检索的问题或关键词
    pub query: String,
    /// 最多返回多少条，默认 4
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub top_k: Option<u32>,
    /// 低于此分数（0~1）的结果不返回
    #[serde(default)]
    pub score_threshold: Option<f64>,
    /// 该知识库的 API 密钥（Dify 的 dataset key）；持有服务器令牌的调用方不需要。The dataset's
    /// own key; a caller holding the server token needs none.
    #[serde(default)]
    pub api_key: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KnowledgeRecord {
    pub content: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    pub score: f64,
    pub document_id: String,
    pub document_name: String,
    pub segment_id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KnowledgeRecords {
    pub records: Vec<KnowledgeRecord>,
}

fn knowledge_tool() -> Tool {
    tool(
        ToolGroup::Knowledge,
        "retrieve_knowledge",
        "在知识库中检索与问题最相关的片段（混合检索），即 Dify 的 retrieve。Search a knowledge base (Dify dataset) for the segments that answer a question.",
        false,
        |c: ToolContext, r: RetrieveKnowledgeRequest| {
            blocking(move || {
                let kb = c.kb.ok_or_else(|| {
                    AtlasError::NotFound("this server has no knowledge bases".into())
                })?;
                // One rule on every face: a dataset's records need its key or the server token.
                if !c.holds_server_token {
                    let key = r.api_key.as_deref().ok_or(AtlasError::Unauthorized)?;
                    kb.authorize(&r.dataset_id, key).map_err(kb_error)?;
                }
                let top_k = r.top_k.unwrap_or(4);
                if !(1..=20).contains(&top_k) {
                    return Err(AtlasError::invalid(
                        "top_k",
                        format!("top_k must be between 1 and 20, got {top_k}"),
                    ));
                }
                let options = atlas_kb::SearchOptions {
                    top_k: top_k as usize,
                    score_threshold: r.score_threshold,
                    ..Default::default()
                };
                let hits = kb
                    .search(&r.dataset_id, &r.query, &options)
                    .map_err(kb_error)?;
                Ok(KnowledgeRecords {
                    records: hits
                        .into_iter()
                        .map(|h| KnowledgeRecord {
                            content: h.segment.content,
                            question: h.segment.question,
                            score: h.score,
                            document_id: h.document_id,
                            document_name: h.document_name,
                            segment_id: h.segment.id,
                        })
                        .collect(),
                })
            })
        },
    )
}
