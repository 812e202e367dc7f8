//! Seed 000 §1.1, §1.2, §1.4: where to go for an intent, the next action, and RAG context.

use atlas_graph::{AppGraph, Plan, PlanError};
use atlas_model::{AtlasError, Result, validate_text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::text_index::{DocKind, Query};
use crate::{Atlas, DEFAULT_MAX_STEPS};

/// What an agent assumes an action takes when nobody has measured it yet.
const DEFAULT_STEP_MS: f64 = 800.0;
/// How well an intent must match its target before `get_next_action` acts on it. An agent
/// follows the answer without looking, so a loose match is worse than no answer ("unsure", when
/// it asks its LLM); `query_path` shows its confidence and keeps the embedder's own threshold.
const NEXT_ACTION_SURE: f64 = 0.95;
/// With a model embedder, a request whose best page scores below the match threshold (by at most
/// [`CLEAR_LEAD_BELOW`]) is still taken when that page leads every other by this much: a
/// paraphrase or a request in another language lands a little below the threshold, and so does
/// a request for nothing the app has, but the latter leads nothing clearly. Chosen on one half of
/// the demo's labelled paraphrases (`atlas eval intents`), reported on both.
const CLEAR_LEAD: f32 = 0.015;
const CLEAR_LEAD_BELOW: f32 = 0.15;
/// The most steps a caller may ask for.
const MAX_STEPS_LIMIT: usize = 1000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct QueryPathRequest {
    /// App id, e.g. "com.meituan.app".
    pub app_id: String,
    /// The user's intent in natural language, e.g. "点外卖".
    pub intent: String,
    /// Current page id; the app's home page when omitted.
    #[serde(default)]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub current_page: Option<String>,
    /// Most steps allowed (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub max_steps: Option<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathStep {
    pub step: usize,
    pub from_page: String,
    pub action_type: String,
    pub widget_id: String,
    pub widget_text: String,
    pub widget_xpath: String,
    pub input_text: String,
    pub expected_page: String,
    pub expected_page_name: String,
    pub confidence: f64,
    pub success_rate: f64,
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathInfo {
    pub total_steps: usize,
    pub estimated_time_ms: u64,
    pub steps: Vec<PathStep>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AlternativePath {
    pub total_steps: usize,
    pub confidence: f64,
    pub estimated_time_ms: u64,
    pub steps: Vec<PathStep>,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageSummary {
    pub page_id: String,
    pub page_name: String,
    pub page_type: String,
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryPathResponse {
    pub success: bool,
    pub message: String,
    pub confidence: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathInfo>,
    pub alternatives: Vec<AlternativePath>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_page: Option<PageSummary>,
}

impl QueryPathResponse {
    fn failure(message: impl Into<String>) -> QueryPathResponse {
        QueryPathResponse {
            success: false,
            message: message.into(),
            confidence: 0.0,
            path: None,
            alternatives: vec![],
            target_page: None,
        }
    }
}

/// The page an intent leads to, and how sure the match is.
pub(crate) struct Target {
    pub(crate) page_id: String,
    pub(crate) score: f64,
}

pub(crate) fn summary(app: &AppGraph, page_id: &str) -> Option<PageSummary> {
    app.page(page_id).map(|p| PageSummary {
        page_id: p.page_id.clone(),
        page_name: p.page_name.clone(),
        page_type: p.page_type.as_str().into(),
        description: p.description.clone(),
    })
}

/// Confidence of one step: its smoothed success rate, discounted while evidence is thin.
fn step_confidence(t: &atlas_model::Transition) -> f64 {
    let evidence = (t.success_count + t.fail_count) as f64;
    t.smoothed_success_rate() * (0.6 + 0.4 * (evidence / (evidence + 3.0)))
}

pub(crate) fn describe_steps(app: &AppGraph, plan: &Plan) -> (Vec<PathStep>, u64) {
    describe_first_steps(app, plan, plan.steps.len())
}

/// The first `count` steps of a plan described for an agent, and their estimated time.
fn describe_first_steps(app: &AppGraph, plan: &Plan, count: usize) -> (Vec<PathStep>, u64) {
    let mut total_ms = 0.0;
    let steps = plan
        .steps
        .iter()
        .take(count)
        .enumerate()
        .map(|(i, ix)| {
            let t = &app.transitions()[*ix];
            let to = app
                .page(&t.to_page)
                .map(|p| p.page_name.clone())
                .unwrap_or_default();
            total_ms += if t.latency_samples > 0 {
                t.avg_latency_ms()
            } else {
                DEFAULT_STEP_MS
            };
            PathStep {
                step: i + 1,
                from_page: t.from_page.clone(),
                action_type: t.action.action_type.clone(),
                widget_id: t.action.widget_id.clone(),
                widget_text: t.action.widget_text.clone(),
                widget_xpath: t.action.widget_xpath.clone(),
                input_text: t.action.input_text.clone(),
                expected_page: t.to_page.clone(),
                expected_page_name: to.clone(),
                confidence: round3(step_confidence(t)),
                success_rate: round3(t.success_rate()),
                description: format!("{}，进入{}", t.action.label(), to),
            }
        })
        .collect();
    (steps, total_ms.round() as u64)
}

pub(crate) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn plan_confidence(app: &AppGraph, plan: &Plan, target_score: f64) -> f64 {
    let steps: f64 = plan
        .steps
        .iter()
        .map(|s| step_confidence(&app.transitions()[*s]))
        .product();
    round3(steps * target_score)
}

/// What remembered tasks or the app's labels said, as an answer.
fn recalled_answer(recalled: crate::memory::Recall, basis: Basis) -> NextActionResponse {
    match recalled {
        crate::memory::Recall::Done { confidence } => NextActionResponse {
            is_complete: true,
            remaining_steps: Some(0),
            basis: Some(basis),
            confidence: Some(round3(confidence)),
            ..Default::default()
        },
        crate::memory::Recall::Act {
            action,
            expected_page,
            remaining,
            confidence,
        } => {
            let why = match basis {
                Basis::Memory => "按记住的同类任务执行",
                Basis::Labels => "按界面文字推断",
                Basis::Path => "按规划路径执行",
            };
            let description = format!("{}（{why}）", action.label());
            NextActionResponse {
                action: Some(NextAction::of(
                    action,
                    expected_page,
                    round3(confidence),
                    description,
                )),
                remaining_steps: Some(remaining),
                basis: Some(basis),
                ..Default::default()
            }
        }
    }
}

fn why_alternative(main: &Plan, alt: &Plan, app: &AppGraph) -> String {
    let (main_rel, alt_rel) = (main.reliability(app), alt.reliability(app));
    match alt.steps.len().cmp(&main.steps.len()) {
        std::cmp::Ordering::Less => "路径更短但成功率较低".into(),
        std::cmp::Ordering::Greater if alt_rel > main_rel => "路径更长但成功率更高".into(),
        std::cmp::Ordering::Greater => "路径更长且成功率较低，主路径失败时可用".into(),
        std::cmp::Ordering::Equal if alt_rel < main_rel => "步数相同但成功率较低".into(),
        std::cmp::Ordering::Equal => "步数相同，经由不同页面".into(),
    }
}

impl Atlas {
    /// The page an intent names in an app: registered intents first, then page names and
    /// descriptions; `None` below the embedder's threshold, unless (with a model embedder) the
    /// best page stands clearly ahead of every other (see [`CLEAR_LEAD`]).
    pub(crate) fn resolve_intent(&self, app_id: &str, intent: &str) -> Result<Option<Target>> {
        self.resolve_with_candidates(app_id, intent).map(|(t, _)| t)
    }

    /// [`Atlas::resolve_intent`], and the best pages (name, score) when none was taken.
    fn resolve_with_candidates(
        &self,
        app_id: &str,
        intent: &str,
    ) -> Result<(Option<Target>, Vec<(String, f64)>)> {
        let leads_somewhere = |d: &crate::text_index::Doc| d.target_page.is_some();
        let normalized = crate::text_index::normalize(intent);
        if let Some(doc) = self
            .state
            .read()
            .text
            .exact(app_id, &normalized, leads_somewhere)
        {
            let target = Target {
                page_id: doc.target_page.clone().unwrap_or_default(),
                score: 1.0,
            };
            return Ok((Some(target), vec![]));
        }
        // Embedding may call a remote model: do it before taking the lock.
        let query = Query::new(intent, self.embedder.as_ref())?;
        let state = self.state.read();
        let threshold = self.embedder.match_threshold();
        let dense = !self.embedder.is_lexical();
        let floor = if dense {
            threshold - CLEAR_LEAD_BELOW
        } else {
            threshold
        };
        let hits = state
            .text
            .search(Some(app_id), &query, floor, leads_somewhere);
        // The best score each page gets, best first.
        let mut pages: Vec<(&str, f32)> = Vec::new();
        for (_, hit) in &hits {
            let page = hit.doc.target_page.as_deref().unwrap_or_default();
            if !pages.iter().any(|(p, _)| *p == page) {
                pages.push((page, hit.score));
            }
        }
        let target = match pages.as_slice() {
            [(page, score), ..] if *score >= threshold => Some((page, score)),
            // A paraphrase, or the same request in another language, lands below a model's
            // threshold; it is taken when its page leads every other page clearly.
            [(page, score), rest @ ..]
                if dense
                    && rest
                        .first()
                        .is_none_or(|(_, next)| score - next >= CLEAR_LEAD) =>
            {
                Some((page, score))
            }
            _ => None,
        };
        let candidates = if target.is_none() {
            pages
                .iter()
                .take(3)
                .filter_map(|(p, score)| {
                    state
                        .graph
                        .page(p)
                        .map(|page| (page.page_name.clone(), round3(*score as f64)))
                })
                .collect()
        } else {
            vec![]
        };
        Ok((
            target.map(|(page, score)| Target {
                page_id: page.to_string(),
                score: *score as f64,
            }),
            candidates,
        ))
    }

    /// Seed 000 §1.1 `query_path`.
    pub fn query_path(&self, req: QueryPathRequest) -> Result<QueryPathResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("intent", &req.intent, true)?;
        let (target, candidates) = self.resolve_with_candidates(&req.app_id, &req.intent)?;
        let mut response = self.route(req, true, target)?;
        // Unsure which page is meant: say so with the pages it might be, rather than pick one.
        if !candidates.is_empty() && !response.success {
            let listed: Vec<String> = candidates
                .iter()
                .map(|(name, score)| format!("{name}({score})"))
                .collect();
            response.message = format!("{}，候选页面：{}", response.message, listed.join("、"));
        }
        Ok(response)
    }

    /// The planning behind `query_path`, to a `target` the caller resolved (outside any lock, as
    /// resolving may embed). Alternatives cost one search per step and descriptions an allocation
    /// or ten each, so a caller that needs only the first step (`whole` false) gets just that step
    /// described, with `total_steps` still the whole plan's.
    fn route(
        &self,
        req: QueryPathRequest,
        whole: bool,
        target: Option<Target>,
    ) -> Result<QueryPathResponse> {
        let max_steps = match req.max_steps {
            None => DEFAULT_MAX_STEPS,
            Some(n) if n >= 1 && n as usize <= MAX_STEPS_LIMIT => n as usize,
            Some(n) => {
                return Err(AtlasError::invalid(
                    "max_steps",
                    format!("max_steps must be between 1 and {MAX_STEPS_LIMIT}, got {n}"),
                ));
            }
        };
        if let Some(page) = &req.current_page {
            validate_text("current_page", page, true)?;
        }
        let state = self.state.read();
        let Some(app) = state.graph.app(&req.app_id) else {
            return Ok(QueryPathResponse::failure(format!(
                "应用不在图谱中: {}",
                req.app_id
            )));
        };
        let start = match &req.current_page {
            Some(page) if app.page(page).is_some() => page.clone(),
            Some(_) => return Ok(QueryPathResponse::failure("当前页面不在图谱中")),
            None => match app.home_page() {
                Some(home) => home.page_id.clone(),
                None => return Ok(QueryPathResponse::failure("应用没有任何页面")),
            },
        };
        let Some(target) = target else {
            return Ok(QueryPathResponse::failure("未找到匹配的意图"));
        };
        let plan = match app.plan(&start, &target.page_id, max_steps) {
            Ok(plan) => plan,
            Err(PlanError::TooManySteps { shortest }) => {
                let mut r = QueryPathResponse::failure(format!(
                    "路径步骤数超过限制（最短路径需要{shortest}步，max_steps={max_steps}）"
                ));
                r.target_page = summary(app, &target.page_id);
                return Ok(r);
            }
            Err(PlanError::NoPath) | Err(PlanError::UnknownPage(_)) => {
                let mut r = QueryPathResponse::failure("无法找到从当前页面到目标页面的路径");
                r.target_page = summary(app, &target.page_id);
                return Ok(r);
            }
        };
        let (steps, estimated_time_ms) =
            describe_first_steps(app, &plan, if whole { plan.steps.len() } else { 1 });
        let alternatives = if whole {
            app.alternatives(&start, &target.page_id, &plan, 2, max_steps)
        } else {
            vec![]
        };
        let alternatives = alternatives
            .into_iter()
            .map(|alt| {
                let (steps, estimated_time_ms) = describe_steps(app, &alt);
                AlternativePath {
                    total_steps: steps.len(),
                    confidence: plan_confidence(app, &alt, target.score),
                    estimated_time_ms,
                    steps,
                    reason: why_alternative(&plan, &alt, app),
                }
            })
            .collect();
        let message = if plan.steps.is_empty() {
            "已在目标页面".to_string()
        } else {
            format!("找到{}步路径", plan.steps.len())
        };
        Ok(QueryPathResponse {
            success: true,
            message,
            confidence: plan_confidence(app, &plan, target.score),
            path: Some(PathInfo {
                total_steps: plan.steps.len(),
                estimated_time_ms,
                steps,
            }),
            alternatives,
            target_page: summary(app, &target.page_id),
        })
    }

    /// Seed 000 §1.2 `get_next_action`.
    pub fn get_next_action(&self, req: NextActionRequest) -> Result<NextActionResponse> {
        validate_text("current_page", &req.current_page, true)?;
        validate_text("intent", &req.intent, true)?;
        if let Some(session) = &req.session_id {
            validate_text("session_id", session, false)?;
        }
        let session = req.session_id.as_deref().filter(|s| !s.is_empty());
        let (app_id, recalled) = {
            let state = self.state.read();
            let app = state
                .graph
                .app_of_page(&req.current_page)
                .ok_or_else(|| AtlasError::PageNotFound(req.current_page.clone()))?;
            if let Some(given) = req.app_id.as_deref().filter(|a| !a.is_empty()) {
                if given != app.app_id() {
                    // Looked up within the app named, the page is not there.
                    return Err(AtlasError::NotFound(format!(
                        "current_page {} is not a page of {given} (it is one of {})",
                        req.current_page,
                        app.app_id()
                    )));
                }
            }
            (
                app.app_id().to_string(),
                crate::memory::recall(app, &req.intent, &req.current_page, session),
            )
        };
        if let Some(recalled) = recalled {
            return Ok(recalled_answer(recalled, Basis::Memory));
        }
        // Nobody did this task before: unless the intent is a registered one word for word, go by
        // what the app's labels say, and by a registered intent it resembles only when the
        // labels cannot tell. A resembling intent is often a sibling task ("a note named 'a'" for
        // "a note named 'b'") whose way ends elsewhere. Resolving may embed, so it runs outside
        // the lock.
        let resolved = self.resolve_intent(&app_id, &req.intent);
        let sure = resolved
            .as_ref()
            .ok()
            .and_then(|t| t.as_ref())
            .is_some_and(|t| t.score >= 1.0);
        let mut doubt = None;
        let mut unsure = (None, Vec::new());
        if !sure {
            let weighed = self.read(|g| {
                let app = g.app(&app_id)?;
                Some(crate::ground::weigh(
                    app,
                    &req.intent,
                    &req.current_page,
                    crate::memory::session_steps(app, session, &req.intent),
                ))
            });
            // Embedding may be slow: outside the lock.
            let grounded = weighed.map(|weighed| {
                self.meaning.learn(&weighed.texts());
                crate::ground::conclude(weighed, &self.meaning, self.grounding.get(), req.explain)
            });
            if let Some(grounded) = grounded {
                let candidates = grounded
                    .considered
                    .into_iter()
                    .map(candidate_answer)
                    .collect();
                match grounded.answer {
                    Ok(answer) => {
                        let mut response = recalled_answer(answer, Basis::Labels);
                        response.confidence = grounded.confidence.map(round3);
                        response.candidates = candidates;
                        return Ok(response);
                    }
                    Err(why) => {
                        doubt = Some(why);
                        unsure = (grounded.confidence.map(round3), candidates);
                    }
                }
            }
        }
        let target = resolved?.filter(|t| t.score >= NEXT_ACTION_SURE);
        let path = self.route(
            QueryPathRequest {
                app_id,
                intent: req.intent,
                current_page: Some(req.current_page),
                max_steps: Some(MAX_STEPS_LIMIT as i64),
            },
            false,
            target,
        )?;
        let Some(info) = path.path.filter(|_| path.success) else {
            // Why the labels could not tell says more than "no registered intent matched".
            let error = doubt.map_or(path.message, |d| d.message());
            return Ok(NextActionResponse {
                error: Some(error),
                confidence: unsure.0,
                candidates: unsure.1,
                ..Default::default()
            });
        };
        let Some(first) = info.steps.first() else {
            return Ok(NextActionResponse {
                is_complete: true,
                remaining_steps: Some(0),
                basis: Some(Basis::Path),
                ..Default::default()
            });
        };
        Ok(NextActionResponse {
            action: Some(NextAction {
                action_type: first.action_type.clone(),
                widget_id: first.widget_id.clone(),
                widget_text: first.widget_text.clone(),
                widget_xpath: first.widget_xpath.clone(),
                input_text: first.input_text.clone(),
                confidence: first.confidence,
                expected_page: first.expected_page.clone(),
                description: first.description.clone(),
            }),
            remaining_steps: Some(info.total_steps),
            basis: Some(Basis::Path),
            ..Default::default()
        })
    }

    /// Seed 000 §1.4 `get_rag_context`.
    pub fn get_rag_context(&self, req: RagContextRequest) -> Result<RagContextResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("query", &req.query, true)?;
        let query = Query::new(&req.query, self.embedder.as_ref())?;
        if !self.read(|g| g.app(&req.app_id).is_some()) {
            return Err(AtlasError::NotFound(format!(
                "app not found: {}",
                req.app_id
            )));
        }
        let path = self.query_path(QueryPathRequest {
            app_id: req.app_id.clone(),
            intent: req.query.clone(),
            current_page: req.current_page.clone(),
            max_steps: None,
        })?;
        let state = self.state.read();
        let app = state.graph.app(&req.app_id).expect("checked above");
        let relevant_pages: Vec<RelevantPage> = state
            .text
            .search(Some(&req.app_id), &query, 0.05, |d| d.kind == DocKind::Page)
            .into_iter()
            .take(5)
            .filter_map(|(_, hit)| {
                let page = app.page(hit.doc.target_page.as_deref()?)?;
                Some(RelevantPage {
                    page_id: page.page_id.clone(),
                    page_name: page.page_name.clone(),
                    description: page.description.clone(),
                    relevance_score: round3(hit.score as f64),
                })
            })
            .collect();
        let mut recommended_paths = Vec::new();
        if let Some(info) = path.path.as_ref().filter(|_| path.success) {
            let rate = info.steps.iter().map(|s| s.success_rate).product::<f64>();
            recommended_paths.push(RecommendedPath {
                path_id: "main".into(),
                steps: info.steps.clone(),
                confidence: path.confidence,
                success_rate: round3(rate),
            });
            for (i, alt) in path.alternatives.iter().enumerate() {
                let rate = alt.steps.iter().map(|s| s.success_rate).product::<f64>();
                recommended_paths.push(RecommendedPath {
                    path_id: format!("alt{}", i + 1),
                    steps: alt.steps.clone(),
                    confidence: alt.confidence,
                    success_rate: round3(rate),
                });
            }
        }
        let threshold = self.embedder.match_threshold();
        let mut successful = Vec::new();
        let mut failed = Vec::new();
        for trace in app.traces() {
            let Ok(trace_query) = Query::new(&trace.intent, self.embedder.as_ref()) else {
                continue;
            };
            if query.similarity_to(&trace_query) < threshold {
                continue;
            }
            if trace.succeeded() {
                successful.push(SuccessfulCase {
                    intent: trace.intent.clone(),
                    path: trace
                        .steps
                        .iter()
                        .filter(|s| s.success)
                        .map(|s| s.action.label())
                        .collect(),
                    execution_time_ms: trace.steps.iter().map(|s| s.latency_ms).sum(),
                });
            } else if let Some(k) = trace.steps.iter().position(|s| !s.success) {
                failed.push(FailedCase {
                    intent: trace.intent.clone(),
                    failed_step: k + 1,
                    reason: format!("{} 未成功", trace.steps[k].action.label()),
                });
            }
        }
        successful.truncate(5);
        failed.truncate(5);
        let mut tips = Vec::new();
        if let Some(info) = path.path.as_ref().filter(|_| path.success) {
            for step in &info.steps {
                if step.success_rate < 0.8 {
                    tips.push(format!(
                        "第{}步“{}”历史成功率仅{:.0}%，失败时请改用备选路径",
                        step.step,
                        step.description,
                        step.success_rate * 100.0
                    ));
                }
            }
            tips.push(
                "每执行一步后核对页面是否为预期页面，不是时先调用 match_current_page 重新定位"
                    .into(),
            );
        } else {
            tips.push(format!(
                "图谱中暂无可靠路径（{}），请探索并用 report_transition 上报结果",
                path.message
            ));
        }
        if !failed.is_empty() {
            tips.push("历史上有相似任务失败，注意失败案例中的步骤".into());
        }
        let suggested_actions = path
            .path
            .as_ref()
            .filter(|_| path.success)
            .and_then(|info| info.steps.first())
            .map(|s| SuggestedAction {
                action_type: s.action_type.clone(),
                widget_text: s.widget_text.clone(),
                confidence: s.confidence,
                reason: format!("推荐路径第1步：{}", s.description),
            })
            .into_iter()
            .collect();
        let context = RagContext {
            relevant_pages,
            recommended_paths,
            historical_cases: HistoricalCases { successful, failed },
            tips,
        };
        let prompt = render_prompt(&req, app, &context);
        Ok(RagContextResponse {
            prompt,
            context,
            suggested_actions,
        })
    }
}

fn render_prompt(req: &RagContextRequest, app: &AppGraph, ctx: &RagContext) -> String {
    use std::fmt::Write;
    let mut p = String::new();
    let _ = writeln!(
        p,
        "你是手机应用自动化测试助手。应用：{}。用户意图：{}",
        req.app_id, req.query
    );
    if let Some(page) = req.current_page.as_deref().and_then(|id| app.page(id)) {
        let _ = writeln!(p, "当前页面：{}（{}）", page.page_name, page.page_id);
    }
    if !ctx.relevant_pages.is_empty() {
        let _ = writeln!(p, "\n## 相关页面");
        for page in &ctx.relevant_pages {
            let _ = writeln!(
                p,
                "- {}（相关度{:.2}）{}",
                page.page_name, page.relevance_score, page.description
            );
        }
    }
    if !ctx.recommended_paths.is_empty() {
        let _ = writeln!(p, "\n## 推荐路径");
        for path in &ctx.recommended_paths {
            let steps: Vec<String> = path.steps.iter().map(|s| s.description.clone()).collect();
            let _ = writeln!(
                p,
                "- [{}] 置信度{:.2}：{}",
                path.path_id,
                path.confidence,
                steps.join(" → ")
            );
        }
    }
    if !ctx.historical_cases.successful.is_empty() || !ctx.historical_cases.failed.is_empty() {
        let _ = writeln!(p, "\n## 历史经验");
        for case in &ctx.historical_cases.successful {
            let _ = writeln!(p, "- 成功：{}：{}", case.intent, case.path.join(" → "));
        }
        for case in &ctx.historical_cases.failed {
            let _ = writeln!(
                p,
                "- 失败：{} 在第{}步：{}",
                case.intent, case.failed_step, case.reason
            );
        }
    }
    let _ = writeln!(p, "\n## 注意事项");
    for tip in &ctx.tips {
        let _ = writeln!(p, "- {tip}");
    }
    let _ = writeln!(p, "\n请根据以上信息决定下一步操作。");
    p
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NextActionRequest {
    /// Current page id.
    pub current_page: String,
    /// The goal, e.g. "点外卖".
    pub intent: String,
    /// App id, checked against the page's app when given.
    #[serde(default)]
    pub app_id: Option<String>,
    /// Beyond the seed: the agent's session. Its reported steps (with the same `intent`) tell
    /// which remembered steps were already taken, so a page visited twice in one task gets the
    /// right action each time.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Beyond the seed: list every candidate the labels offered with the features the model
    /// weighed (for evaluation and debugging).
    #[serde(default)]
    pub explain: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NextAction {
    pub action_type: String,
    pub widget_id: String,
    pub widget_text: String,
    pub widget_xpath: String,
    pub input_text: String,
    pub confidence: f64,
    pub expected_page: String,
    pub description: String,
}

impl NextAction {
    fn of(
        action: atlas_model::Action,
        expected_page: String,
        confidence: f64,
        description: String,
    ) -> NextAction {
        NextAction {
            action_type: action.action_type,
            widget_id: action.widget_id,
            widget_text: action.widget_text,
            widget_xpath: action.widget_xpath,
            input_text: action.input_text,
            confidence,
            expected_page,
            description,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NextActionResponse {
    pub action: Option<NextAction>,
    pub is_complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining_steps: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the answer rests on, so an agent can weigh it: `memory` (remembered sessions of the
    /// same task), `labels` (the app's widget labels read against the intent) or `path` (a
    /// registered intent's page and the planned way there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Beyond the seed, for answers read from labels: the calibrated probability that the best
    /// candidate (the action given, or `candidates[0]` when unsure) is right, measured on apps the
    /// model was not fitted on. An agent may act on `candidates[0]` above its own threshold. For
    /// a remembered session's end (`basis` `memory`, `is_complete`), how alike the remembered
    /// task is to the asked one, as for a remembered action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Beyond the seed, for answers read from labels: the best candidates, most likely first (all
    /// of them with their features when `explain` was asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateAction>,
}

/// A candidate answer the labels offered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CandidateAction {
    /// `null` for "the task is done".
    pub action: Option<NextAction>,
    pub is_complete: bool,
    /// Its share of the model's probability among this step's candidates.
    pub probability: f64,
    /// The features the model weighed, by name, when `explain` was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<std::collections::BTreeMap<String, f64>>,
}

fn candidate_answer(c: crate::ground::Considered) -> CandidateAction {
    let features = c.features.map(|x| {
        crate::ground::FEATURES
            .iter()
            .map(|n| n.to_string())
            .zip(x)
            .collect()
    });
    let (action, is_complete) = match c.proposal {
        crate::ground::Proposal::Finish => (None, true),
        crate::ground::Proposal::Act {
            action,
            expected_page,
        } => {
            let description = action.label();
            (
                Some(NextAction::of(action, expected_page, 0.0, description)),
                false,
            )
        }
    };
    CandidateAction {
        action,
        is_complete,
        probability: round3(c.probability),
        features,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    Memory,
    Labels,
    Path,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RagContextRequest {
    pub app_id: String,
    /// The user's intent or question.
    pub query: String,
    #[serde(default)]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub current_page: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RelevantPage {
    pub page_id: String,
    pub page_name: String,
    pub description: String,
    pub relevance_score: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecommendedPath {
    pub path_id: String,
    pub steps: Vec<PathStep>,
    pub confidence: f64,
    pub success_rate: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuccessfulCase {
    pub intent: String,
    pub path: Vec<String>,
    pub execution_time_ms: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FailedCase {
    pub intent: String,
    pub failed_step: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HistoricalCases {
    pub successful: Vec<SuccessfulCase>,
    pub failed: Vec<FailedCase>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RagContext {
    pub relevant_pages: Vec<RelevantPage>,
    pub recommended_paths: Vec<RecommendedPath>,
    pub historical_cases: HistoricalCases,
    pub tips: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuggestedAction {
    pub action_type: String,
    pub widget_text: String,
    pub confidence: f64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RagContextResponse {
    pub prompt: String,
    pub context: RagContext,
    pub suggested_actions: Vec<SuggestedAction>,
}
