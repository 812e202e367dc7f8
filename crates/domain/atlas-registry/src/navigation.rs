//! Seed 000's interfaces over the GUI graph, and the agent's reply parser.

use atlas_model::Result;
use atlas_service::*;

use crate::calls::{match_page, sync_call};
use crate::{Tool, ToolContext, ToolGroup, interface};
use atlas_api::agent::{
    ParseReplyRequest, ParseReplyResponse, RecordOutcomeRequest, ReviewActionRequest,
};
use atlas_api::screen::{EndRunRequest, ObserveScreenRequest};
use atlas_api::tools;

/// Seed 000's interfaces and the phone agent's, in the order the faces list them.
pub(crate) fn tools() -> Vec<Tool> {
    let mut tools = seed_tools();
    tools.extend(agent_tools());
    tools
}

/// Seed 000's interfaces.
fn seed_tools() -> Vec<Tool> {
    vec![
        interface::<tools::QueryPath, _, _>(
            ToolGroup::Navigation,
            "根据用户意图查询从当前页面到目标页面的完整操作路径（主路径与备选路径）。Plan the path from the current page to the page that serves an intent.",
            false,
            |c: ToolContext, r: QueryPathRequest| sync_call(c.atlas, move |a| a.query_path(r)),
        ),
        interface::<tools::GetNextAction, _, _>(
            ToolGroup::Navigation,
            "返回为完成意图当前需要执行的下一个操作。The next action to take from the current page for an intent.",
            false,
            |c: ToolContext, r: NextActionRequest| {
                sync_call(c.atlas, move |a| a.get_next_action(r))
            },
        ),
        interface::<tools::MatchCurrentPage, _, _>(
            ToolGroup::Navigation,
            "根据页面标题和UI结构匹配图谱中的页面，并记住该页面这次显示的控件。Recognise the current page from its title and widgets, and remember what this screen of it shows.",
            true,
            |c: ToolContext, r: MatchPageRequest| match_page(c.atlas, r),
        ),
        interface::<tools::GetRagContext, _, _>(
            ToolGroup::Navigation,
            "为LLM决策生成结构化上下文与提示词。Prompt and structured context (pages, paths, past cases, tips) for an LLM.",
            false,
            |c: ToolContext, r: RagContextRequest| {
                sync_call(c.atlas, move |a| a.get_rag_context(r))
            },
        ),
        interface::<tools::ReportTransition, _, _>(
            ToolGroup::Navigation,
            "上报一次操作的结果，更新转换统计。Report what an action did; updates the edge's statistics.",
            true,
            |c: ToolContext, r: ReportTransitionRequest| async move {
                c.atlas.report_transition(r).await
            },
        ),
        interface::<tools::EndSession, _, _>(
            ToolGroup::Navigation,
            "上报一次会话的结局（完成任务或放弃）；只有未失败的会话会被当作任务记忆重放。Say how an agent session for an intent ended; sessions said to have failed are not replayed.",
            true,
            |c: ToolContext, r: EndRunRequest| async move {
                crate::screen::end_session(c.atlas, r).await
            },
        ),
        interface::<tools::ReportVerdict, _, _>(
            ToolGroup::Navigation,
            "上报会话的判定（由测试断言、评测裁判或人给出，而非智能体自己）：通过或失败及原因；判定优先于智能体的说法，失败的会话不会被当作任务记忆，其重放过的路径从偏离处起被怀疑。Report a session's verdict, as someone other than its agent judged it (a test's expectations, an evaluation's judge, a person): passed or failed, and why. It outranks the agent's word: a failed session confirms nothing, and each remembered way it replayed is doubted from where it left the passing runs' steps.",
            true,
            |c: ToolContext, r: ReportVerdictRequest| async move { c.atlas.report_verdict(r).await },
        ),
        interface::<tools::AddPage, _, _>(
            ToolGroup::Navigation,
            "添加新发现的页面（重复添加会更新该页面）。Add (or update) a page.",
            true,
            |c: ToolContext, r: AddPageRequest| async move { c.atlas.add_page(r).await },
        ),
        interface::<tools::RegisterIntent, _, _>(
            ToolGroup::Navigation,
            "注册用户意图及其目标页面与关键词。Register an intent with its target page and keywords.",
            true,
            |c: ToolContext, r: RegisterIntentRequest| async move { c.atlas.register_intent(r).await },
        ),
        interface::<tools::GetAvailableActions, _, _>(
            ToolGroup::Navigation,
            "获取页面的所有可用操作，按成功率排序。A page's outgoing actions by success rate.",
            false,
            |c: ToolContext, r: AvailableActionsRequest| {
                sync_call(c.atlas, move |a| a.get_available_actions(r))
            },
        ),
        interface::<tools::FindSimilarIntents, _, _>(
            ToolGroup::Navigation,
            "查找相似的已注册意图（可跨App）。Registered intents similar to a query, across apps unless app_id is given.",
            false,
            |c: ToolContext, r: SimilarIntentsRequest| {
                sync_call(c.atlas, move |a| a.find_similar_intents(r))
            },
        ),
        interface::<tools::GetGraphStats, _, _>(
            ToolGroup::Navigation,
            "获取图谱统计信息（可按App）。Counts and averages of the graph, overall or for one app.",
            false,
            |c: ToolContext, r: GraphStatsRequest| {
                sync_call(c.atlas, move |a| a.get_graph_stats(r))
            },
        ),
        interface::<tools::GetAppGraph, _, _>(
            ToolGroup::Navigation,
            "获取App的页面与转换（用于绘图；大图取某页面的邻域）。An app's pages (with their depth from the home page) and transitions (with their statistics), whole or around one page, for drawing.",
            false,
            |c: ToolContext, r: AppGraphRequest| sync_call(c.atlas, move |a| a.get_app_graph(r)),
        ),
        interface::<tools::GetPageDetails, _, _>(
            ToolGroup::Navigation,
            "获取页面详情：控件、可用操作及其统计、服务的意图、最近上报、截图与文件夹。A page as a viewer shows it: widgets, actions both ways with their statistics, the intents it serves, recent reports, its screenshot and seed 001 folder.",
            false,
            |c: ToolContext, r: PageDetailsRequest| {
                sync_call(c.atlas, move |a| a.get_page_details(r))
            },
        ),
        interface::<tools::BatchAddTransitions, _, _>(
            ToolGroup::Navigation,
            "批量添加页面转换关系。Add many transitions at once.",
            true,
            |c: ToolContext, r: BatchAddTransitionsRequest| async move {
                c.atlas.batch_add_transitions(r).await
            },
        ),
        interface::<tools::RecordAppVersion, _, _>(
            ToolGroup::Navigation,
            "记录App的一个版本（新版本成为当前版本），以及在该版本中确认存在或已消失的页面与转换；消失的只做标记，从不删除。Record a version of an app (a new one becomes current), the pages and transitions seen in it, and those found gone (marked, never deleted; a gone page takes its transitions and intents with it).",
            true,
            |c: ToolContext, r: RecordAppVersionRequest| async move {
                c.atlas.record_app_version(r).await
            },
        ),
        interface::<tools::GetAppDiff, _, _>(
            ToolGroup::Navigation,
            "比较App的两个版本：新增、消失、变化的页面（标题、文字、操作）与转换，以及路径变化的意图。What changed between two versions of an app: pages added, removed and changed (title, texts, actions), transitions added and removed, intents whose way changed.",
            false,
            |c: ToolContext, r: AppDiffRequest| sync_call(c.atlas, move |a| a.get_app_diff(r)),
        ),
    ]
}

/// A phone agent's loop in any language: its model's reply read, its actions under the guard's
/// rules, and a step of it whole (`observe_screen`).
fn agent_tools() -> Vec<Tool> {
    vec![
        interface::<tools::ParseAgentReply, _, _>(
            ToolGroup::Navigation,
            "从模型回复中解析出第一个完整的 do(...) 或 finish(...) 动作（AutoGLM 语法），返回种子的字典形式。The first well-formed do(...)/finish(...) of a phone model's reply, in the seed's dict form.",
            false,
            |_: ToolContext, r: ParseReplyRequest| async move { parse_agent_reply(r) },
        ),
        interface::<tools::ReviewAction, _, _>(
            ToolGroup::Navigation,
            "执行前按守卫规则审查模型提出的动作（内置 QQ 智能客服闸门及随请求发送的规则文件），返回要执行的动作、给模型的观察和守卫记忆。Review a model's proposed action under the guard's rules (the shipped QQ customer-service gate and the rule files sent) before it runs: the action to run, what to tell the model, and the guard's memory to send back next time.",
            false,
            |_: ToolContext, r: ReviewActionRequest| async move { crate::guard::review_action(r) },
        ),
        interface::<tools::RecordOutcome, _, _>(
            ToolGroup::Navigation,
            "动作执行后把结果交给守卫规则（例如知识库查询成功后才允许结束），返回给模型的观察和守卫记忆。Tell the guard's rules how an action went (a knowledge lookup's success opens the QQ gate's finish): what to tell the model, and the guard's memory to send back next time.",
            false,
            |_: ToolContext, r: RecordOutcomeRequest| async move { crate::guard::record_outcome(r) },
        ),
        interface::<tools::ObserveScreen, _, _>(
            ToolGroup::Navigation,
            "手机智能体的一步：发送当前屏幕（dump 或控件）、任务、会话和上一步执行的动作；Atlas 识别页面（新页面则添加）、上报上一步，并给出在本屏解析好的下一步动作、置信度和给模型的提示。A phone agent's step: the screen, the task, the session and what was executed on the last screen; answers the screen's page (added when new), reports the last step, and gives the graph's next action resolved on this screen with its confidence and a hint for the model. Send the answer's `carry` back with the next screen.",
            true,
            |c: ToolContext, r: ObserveScreenRequest| crate::screen::observe_screen(c.atlas, r),
        ),
        interface::<tools::GetWays, _, _>(
            ToolGroup::Navigation,
            "列出应用记住的任务路径（每条路径的步骤及其自身记录：确认次数、重放经过与偏离、从哪一步起被怀疑、是否会被重放）。An app's remembered ways (for one task, when asked): each way's steps and its own record — the finished runs that confirmed it, replays that passed and parted, the step it is doubted from, and whether its first step would be replayed and why not.",
            false,
            |c: ToolContext, r: GetWaysRequest| sync_call(c.atlas, move |a| a.get_ways(r)),
        ),
        interface::<tools::ForgetWay, _, _>(
            ToolGroup::Navigation,
            "忘记一条记住的任务路径：此前的会话与检查不再为它计数，下一次完成的运行重新学习。Forget a remembered way (its key from get_ways or an answer's trust.way.way): what sessions and checks said of it so far stops counting, and the next finished run learns it anew.",
            true,
            |c: ToolContext, r: ForgetWayRequest| async move { c.atlas.forget_way(r).await },
        ),
    ]
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
            error: Some(e.to_string()),
        },
    })
}
