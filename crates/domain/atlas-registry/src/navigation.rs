//! Seed 000's interfaces over the GUI graph, and the agent's reply parser.

use atlas_model::Result;
use atlas_service::*;
use schemars::JsonSchema;

use crate::calls::{match_page, sync_call};
use crate::{Tool, ToolContext, ToolGroup, tool};
use atlas_api::screen::{EndRunRequest, ObserveScreenRequest};

/// Seed 000's interfaces and the phone agent's, in the order the faces list them.
pub(crate) fn tools() -> Vec<Tool> {
    let mut tools = seed_tools();
    tools.extend(agent_tools());
    tools
}

/// Seed 000's interfaces.
fn seed_tools() -> Vec<Tool> {
    vec![
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
            |c: ToolContext, r: MatchPageRequest| match_page(c.atlas, r),
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
            |c: ToolContext, r: EndRunRequest| async move {
                crate::screen::end_session(c.atlas, r).await
            },
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
    ]
}

/// A phone agent's loop in any language: its model's reply read, its actions under the guard's
/// rules, and a step of it whole (`observe_screen`).
fn agent_tools() -> Vec<Tool> {
    vec![
        tool(
            ToolGroup::Navigation,
            "parse_agent_reply",
            "从模型回复中解析出第一个完整的 do(...) 或 finish(...) 动作（AutoGLM 语法），返回种子的字典形式。The first well-formed do(...)/finish(...) of a phone model's reply, in the seed's dict form.",
            false,
            |_: ToolContext, r: ParseReplyRequest| async move { parse_agent_reply(r) },
        ),
        tool(
            ToolGroup::Navigation,
            "review_action",
            "执行前按守卫规则审查模型提出的动作（内置 QQ 智能客服闸门及随请求发送的规则文件），返回要执行的动作、给模型的观察和守卫记忆。Review a model's proposed action under the guard's rules (the shipped QQ customer-service gate and the rule files sent) before it runs: the action to run, what to tell the model, and the guard's memory to send back next time.",
            false,
            |_: ToolContext, r: crate::guard::ReviewActionRequest| async move {
                crate::guard::review_action(r)
            },
        ),
        tool(
            ToolGroup::Navigation,
            "record_outcome",
            "动作执行后把结果交给守卫规则（例如知识库查询成功后才允许结束），返回给模型的观察和守卫记忆。Tell the guard's rules how an action went (a knowledge lookup's success opens the QQ gate's finish): what to tell the model, and the guard's memory to send back next time.",
            false,
            |_: ToolContext, r: crate::guard::RecordOutcomeRequest| async move {
                crate::guard::record_outcome(r)
            },
        ),
        tool(
            ToolGroup::Navigation,
            "observe_screen",
            "手机智能体的一步：发送当前屏幕（dump 或控件）、任务、会话和上一步执行的动作；Atlas 识别页面（新页面则添加）、上报上一步，并给出在本屏解析好的下一步动作、置信度和给模型的提示。A phone agent's step: the screen, the task, the session and what was executed on the last screen; answers the screen's page (added when new), reports the last step, and gives the graph's next action resolved on this screen with its confidence and a hint for the model. Send the answer's `carry` back with the next screen.",
            true,
            |c: ToolContext, r: ObserveScreenRequest| crate::screen::observe_screen(c.atlas, r),
        ),
    ]
}

/// A phone model's reply to read.
#[derive(Debug, serde::Deserialize, JsonSchema)]
pub struct ParseReplyRequest {
    /// The model's reply, whole.
    pub reply: String,
}

/// The action, as `atlas agent parse` prints it, or why there is none: a reply without an
/// action is an answer to tell the model, not a bad request.
#[derive(Debug, serde::Serialize, JsonSchema)]
pub struct ParseReplyResponse {
    /// `{"_metadata": "do", "action": "Tap", "element": [500, 300]}` or
    /// `{"_metadata": "finish", "message": "…"}`, argument names as in the grammar; `null` when
    /// nothing in the reply is well-formed.
    pub action: Option<atlas_action::Action>,
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
            action: Some(action),
            error: None,
        },
        Err(e) => ParseReplyResponse {
            action: None,
            error: Some(e.0),
        },
    })
}
