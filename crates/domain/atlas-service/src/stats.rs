//! Seed 000 §3.2, §3.3: similar intents across apps, and graph statistics.

use atlas_graph::AppGraph;
use atlas_model::{AtlasError, Result, validate_text};

pub use atlas_api::stats::{
    AppStats, GraphStatsRequest, GraphStatsResponse, SimilarIntent, SimilarIntentsRequest,
    SimilarIntentsResponse, VersionTrust,
};

use crate::Atlas;
use atlas_navigate::round3;
use atlas_navigate::{DocKind, Query};

/// Mean fewest-steps distance from the home page to each page it reaches, and how many pages.
fn path_lengths(app: &AppGraph) -> (f64, usize) {
    let Some(home) = app.home_page() else {
        return (0.0, 0);
    };
    let dist = app.hop_distances(&home.page_id);
    let reached: Vec<u32> = dist.values().copied().filter(|d| *d > 0).collect();
    (reached.iter().map(|d| *d as f64).sum(), reached.len())
}

fn app_stats(app: &AppGraph) -> AppStats {
    let (sum, n) = path_lengths(app);
    let rates: Vec<f64> = app
        .transitions()
        .filter(|t| t.success_count() + t.fail_count() > 0)
        .map(|t| t.counts().success_rate())
        .collect();
    let last = app
        .latest_transition_update()
        .into_iter()
        .chain(app.pages().iter().map(|p| p.updated_at.clone()))
        .chain([app.app.updated_at.clone()])
        .max()
        .unwrap_or_default();
    AppStats {
        app_id: app.app_id().to_string(),
        pages: app.pages().len(),
        transitions: app.transition_count(),
        intents: app.intents().count(),
        traces: app.traces().count(),
        reports: app
            .transitions()
            .map(|t| t.success_count() + t.fail_count())
            .sum(),
        reports_last_hour: 0,
        trust: Vec::new(),
        avg_path_length: if n == 0 { 0.0 } else { round3(sum / n as f64) },
        avg_success_rate: if rates.is_empty() {
            0.0
        } else {
            round3(rates.iter().sum::<f64>() / rates.len() as f64)
        },
        last_updated: last,
    }
}

impl Atlas {
    /// Seed 000 §3.2 `find_similar_intents`.
    pub fn find_similar_intents(
        &self,
        req: SimilarIntentsRequest,
    ) -> Result<SimilarIntentsResponse> {
        validate_text("query", &req.query, true)?;
        let top_k = match req.top_k {
            None => 5,
            Some(k) if (1..=100).contains(&k) => k as usize,
            Some(k) => {
                return Err(AtlasError::invalid(
                    "top_k",
                    format!("top_k must be between 1 and 100, got {k}"),
                ));
            }
        };
        let app_filter = req.app_id.as_deref().filter(|a| !a.is_empty());
        if let Some(app) = app_filter {
            validate_text("app_id", app, true)?;
        }
        let query = Query::new(&req.query, self.embedder.as_ref())?;
        let state = self.state.read();
        let hits = state.text.search(app_filter, &query, 0.05, |d| {
            matches!(d.kind, DocKind::Intent { .. })
        });
        let total_found = hits.len();
        let intents = hits
            .into_iter()
            .take(top_k)
            .filter_map(|(app_id, hit)| {
                let DocKind::Intent { intent_id } = &hit.doc.kind else {
                    return None;
                };
                let intent = state.graph.app(app_id)?.intent(intent_id)?;
                Some(SimilarIntent {
                    intent_id: intent.intent_id.clone(),
                    intent_text: intent.intent_text.clone(),
                    app_id: intent.app_id.clone(),
                    target_page: intent.target_page.clone(),
                    similarity: round3(hit.score as f64),
                    keywords: intent.keywords.clone(),
                })
            })
            .collect();
        Ok(SimilarIntentsResponse {
            intents,
            total_found,
        })
    }

    /// Seed 000 §3.3 `get_graph_stats`, over every app or one.
    pub fn get_graph_stats(&self, req: GraphStatsRequest) -> Result<GraphStatsResponse> {
        let filter = req.app_id.as_deref().filter(|a| !a.is_empty());
        let state = self.state.read();
        if let Some(app) = filter
            && state.graph.app(app).is_none()
        {
            return Err(AtlasError::NotFound(format!("app not found: {app}")));
        }
        let mut by_app: Vec<AppStats> = state
            .graph
            .apps()
            .filter(|a| filter.is_none_or(|f| f == a.app_id()))
            .map(app_stats)
            .collect();
        for stats in &mut by_app {
            stats.reports_last_hour = self.activity.last_hour(&stats.app_id);
            if let Some(app) = state.graph.app(&stats.app_id) {
                let mut kept: Vec<(Option<String>, atlas_model::AnswerKind)> = app
                    .trust_all()
                    .map(|(v, k, _)| (v.map(str::to_string), k))
                    .collect();
                kept.sort();
                stats.trust = kept
                    .into_iter()
                    .map(|(version, kind)| VersionTrust {
                        trust: state
                            .graph
                            .trust(&stats.app_id, version.as_deref(), kind, ""),
                        version,
                    })
                    .collect();
            }
        }
        by_app.sort_by(|a, b| a.app_id.cmp(&b.app_id));
        let weighted = |value: fn(&AppStats) -> f64, weight: fn(&AppStats) -> usize| {
            let total: usize = by_app.iter().map(weight).sum();
            if total == 0 {
                0.0
            } else {
                round3(
                    by_app
                        .iter()
                        .map(|a| value(a) * weight(a) as f64)
                        .sum::<f64>()
                        / total as f64,
                )
            }
        };
        Ok(GraphStatsResponse {
            apps: by_app.len(),
            pages: by_app.iter().map(|a| a.pages).sum(),
            transitions: by_app.iter().map(|a| a.transitions).sum(),
            intents: by_app.iter().map(|a| a.intents).sum(),
            avg_path_length: weighted(|a| a.avg_path_length, |a| a.pages),
            avg_success_rate: weighted(|a| a.avg_success_rate, |a| a.transitions),
            last_updated: by_app
                .iter()
                .map(|a| a.last_updated.clone())
                .max()
                .unwrap_or_default(),
            by_app,
        })
    }
}
