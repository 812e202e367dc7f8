//! Seed 000 §1.4 `get_rag_context`: the pages, paths, past cases and tips an LLM is prompted with.

use atlas_graph::AppGraph;
use atlas_model::{AtlasError, Result, validate_text};

use crate::index::{DocKind, Query};
use crate::{GraphView, Known, Navigator, round3};
use atlas_api::navigation::QueryPathRequest;
use atlas_api::rag::{
    FailedCase, HistoricalCases, RagContext, RagContextRequest, RagContextResponse,
    RecommendedPath, RelevantPage, SuccessfulCase, SuggestedAction,
};

impl<V: GraphView> Navigator<'_, V> {
    /// Seed 000 §1.4 `get_rag_context`.
    pub fn get_rag_context(&self, req: RagContextRequest) -> Result<RagContextResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("query", &req.query, true)?;
        let query = Query::new(&req.query, self.embedder)?;
        if self.view.read().graph().app(&req.app_id).is_none() {
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
            include_history: None,
        })?;
        let state = self.view.read();
        let app = state.graph().app(&req.app_id).expect("checked above");
        let relevant_pages: Vec<RelevantPage> = state
            .text()
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
            let Ok(trace_query) = Query::new(&trace.intent, self.embedder) else {
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
