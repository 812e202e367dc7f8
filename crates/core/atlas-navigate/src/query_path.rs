//! Seed 000 §1.1 `query_path`: the page an intent names, and the way there from the current page.

use atlas_graph::{AppGraph, Plan, PlanError};
use atlas_model::{AtlasError, Result, validate_text};

use crate::index::Query;
use crate::{DEFAULT_MAX_STEPS, GraphView, Known, Navigator, round3};
use atlas_api::navigation::{
    AlternativePath, PageSummary, PathInfo, PathStep, QueryPathRequest, QueryPathResponse,
    VersionPath,
};

/// What an agent assumes an action takes when nobody has measured it yet.
const DEFAULT_STEP_MS: f64 = 800.0;
/// With a model embedder, a request whose best page scores below the match threshold (by at most
/// [`CLEAR_LEAD_BELOW`]) is still taken when that page leads every other by this much: a
/// paraphrase or a request in another language lands a little below the threshold, and so does
/// a request for nothing the app has, but the latter leads nothing clearly. Chosen on one half of
/// the demo's labelled paraphrases (`atlas eval intents`), reported on both.
const CLEAR_LEAD: f32 = 0.015;
const CLEAR_LEAD_BELOW: f32 = 0.15;
/// The most steps a caller may ask for.
pub(crate) const MAX_STEPS_LIMIT: usize = 1000;

/// The best pages (name, score) an intent might mean, when none was taken.
type Candidates = Vec<(String, f64)>;

/// The page an intent leads to, and how sure the match is.
pub(crate) struct Target {
    pub(crate) page_id: String,
    pub(crate) score: f64,
    /// The item of the page the intent names ("order 7"), read once with the intent.
    pub(crate) item: Option<crate::item::Item>,
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
fn step_confidence(t: atlas_graph::TransitionRef<'_>) -> f64 {
    crate::confidence(&t.counts())
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
            let t = app.transition_at(*ix);
            let action = t.action();
            let to = app
                .page(t.to_page())
                .map(|p| p.page_name.clone())
                .unwrap_or_default();
            total_ms += if t.counts().latency_samples > 0 {
                t.counts().avg_latency_ms()
            } else {
                DEFAULT_STEP_MS
            };
            PathStep {
                step: i + 1,
                from_page: t.from_page().to_string(),
                action_type: action.action_type.clone(),
                widget_id: action.widget_id.clone(),
                widget_text: action.widget_text.clone(),
                widget_xpath: action.widget_xpath.clone(),
                input_text: action.input_text.clone(),
                url: None,
                expected_page: t.to_page().to_string(),
                expected_page_name: to.clone(),
                confidence: round3(step_confidence(t)),
                success_rate: round3(t.counts().success_rate()),
                description: format!("{}，进入{}", action.label(), to),
            }
        })
        .collect();
    (steps, total_ms.round() as u64)
}

fn plan_confidence(app: &AppGraph, plan: &Plan, target_score: f64) -> f64 {
    let steps: f64 = plan
        .steps
        .iter()
        .map(|s| step_confidence(app.transition_at(*s)))
        .product();
    round3(steps * target_score)
}

/// The way from `start` to `target` in each of the app's earlier versions, oldest first, beside
/// the current version's `current` plan (none when it has no way).
fn history(app: &AppGraph, start: &str, target: &str, current: Option<&Plan>) -> Vec<VersionPath> {
    let versions = &app.app.versions;
    let earlier = &versions[..versions.len().saturating_sub(1)];
    earlier
        .iter()
        .map(|v| {
            let Some(steps) = app.route_in_version(start, target, &v.version) else {
                return VersionPath {
                    version: v.version.clone(),
                    found: false,
                    differs: current.is_some(),
                    total_steps: 0,
                    steps: vec![],
                    gone_steps: vec![],
                };
            };
            let gone_steps = steps
                .iter()
                .enumerate()
                .filter(|(_, s)| app.transition_at(**s).is_gone())
                .map(|(i, _)| i + 1)
                .collect();
            let differs = current.is_none_or(|plan| plan.steps != steps);
            let (described, _) = describe_steps(app, &Plan { steps, cost: 0.0 });
            VersionPath {
                version: v.version.clone(),
                found: true,
                differs,
                total_steps: described.len(),
                steps: described,
                gone_steps,
            }
        })
        .collect()
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

impl<V: GraphView> Navigator<'_, V> {
    /// The page an intent names in an app: registered intents first, then page names and
    /// descriptions; `None` below the embedder's threshold, unless (with a model embedder) the
    /// best page stands clearly ahead of every other (see [`CLEAR_LEAD`]).
    pub(crate) fn resolve_intent(&self, app_id: &str, intent: &str) -> Result<Option<Target>> {
        self.resolve_with_candidates(app_id, intent).map(|(t, _)| t)
    }

    /// [`Navigator::resolve_intent`], and the best pages (name, score) when none was taken.
    fn resolve_with_candidates(
        &self,
        app_id: &str,
        intent: &str,
    ) -> Result<(Option<Target>, Candidates)> {
        let leads_somewhere = |d: &crate::index::Doc| d.target_page.is_some();
        let item = crate::item::Item::named(intent);
        let normalized = crate::index::normalize(intent);
        if let Some(doc) = self
            .view
            .read()
            .text()
            .exact(app_id, &normalized, leads_somewhere)
        {
            let target = Target {
                page_id: doc.target_page.clone().unwrap_or_default(),
                score: 1.0,
                item,
            };
            return Ok((Some(target), vec![]));
        }
        // "Doc 12" where the app has the page "Doc 1" of its items: word for word, but the value.
        let of_kind = item.as_ref().and_then(|item| {
            let state = self.view.read();
            let app = state.graph().app(app_id)?;
            item.page_of_kind(app)
        });
        if let Some(page_id) = of_kind {
            let target = Target {
                page_id,
                score: 1.0,
                item,
            };
            return Ok((Some(target), vec![]));
        }
        // Embedding may call a remote model: do it before taking the lock.
        let query = Query::new(intent, self.embedder)?;
        let state = self.view.read();
        let threshold = self.embedder.match_threshold();
        let dense = !self.embedder.is_lexical();
        let floor = if dense {
            threshold - CLEAR_LEAD_BELOW
        } else {
            threshold
        };
        let hits = state
            .text()
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
                        .graph()
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
                item,
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
    pub(crate) fn route(
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
        let state = self.view.read();
        let Some(app) = state.graph().app(&req.app_id) else {
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
        let with_history = whole && req.include_history == Some(true);
        let history_beside = |current: Option<&Plan>| {
            with_history.then(|| history(app, &start, &target.page_id, current))
        };
        let mut plan = match app.plan(&start, &target.page_id, max_steps) {
            Ok(plan) => plan,
            Err(PlanError::TooManySteps { shortest }) => {
                let mut r = QueryPathResponse::failure(format!(
                    "路径步骤数超过限制（最短路径需要{shortest}步，max_steps={max_steps}）"
                ));
                r.target_page = summary(app, &target.page_id);
                r.history = history_beside(None);
                return Ok(r);
            }
            Err(PlanError::NoPath) | Err(PlanError::UnknownPage(_)) => {
                let mut r = QueryPathResponse::failure("无法找到从当前页面到目标页面的路径");
                r.target_page = summary(app, &target.page_id);
                r.history = history_beside(None);
                return Ok(r);
            }
        };
        // An intent that names one item of the page ("order 7") is led to that item; by its
        // address only in a whole path, as a next action has no address to give.
        let item = target.item.as_ref();
        let named = item
            .as_ref()
            .is_some_and(|item| item.prefer_named_way(app, &mut plan));
        let (mut steps, estimated_time_ms) =
            describe_first_steps(app, &plan, if whole { plan.steps.len() } else { 1 });
        if let Some(item) = item.filter(|_| whole && !named) {
            item.open_by_address(app, &start, &target.page_id, &mut steps);
        }
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
        let total_steps = plan.steps.len().max(steps.len());
        let message = if total_steps == 0 {
            "已在目标页面".to_string()
        } else {
            format!("找到{total_steps}步路径")
        };
        Ok(QueryPathResponse {
            success: true,
            message,
            confidence: plan_confidence(app, &plan, target.score),
            path: Some(PathInfo {
                total_steps,
                estimated_time_ms,
                steps,
            }),
            alternatives,
            target_page: summary(app, &target.page_id),
            history: history_beside(Some(&plan)),
        })
    }
}
