//! The map around a screen, for a planner: the routes the graph knows from the current page,
//! the ones whose words (the labels they tap, the text they type, the page they end on) are most
//! like the task first, numbered, each step in words.
//!
//! A planning model reads them once and names a route (and how many of its steps to take); the
//! agent then walks it without asking again while every screen is the page the route expects.
//!
//! Key design decision: **routes are ranked by their words, not by a learned model.** A route is
//! only offered; the planner (a language model reading the task) chooses, and the walk checks
//! every screen. The ranking needs only to put the right route among the few listed, which the
//! words a task shares with its way do; and it is lexical (words hashed), so a map costs no
//! embedding however many routes it weighs.

use std::collections::{HashMap, VecDeque};

use atlas_graph::{AppGraph, Plan};
use atlas_model::{AtlasError, Result, validate_text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::query_path::describe_steps;
use crate::{GraphView, Known, Navigator, Query, round3};
use atlas_api::navigation::PathStep;

/// At most this many routes on a map.
pub const MAX_ROUTES: usize = 9;
/// At most this many steps in a route.
pub const MAX_ROUTE_STEPS: usize = 8;

/// One route of a map.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MapRoute {
    /// Its number on the map, from 1.
    pub route: usize,
    /// The page it ends on.
    pub target_page: String,
    /// That page's name.
    pub target_page_name: String,
    /// How alike its words and the task's are (0..1).
    pub relevance: f64,
    /// Its steps, from the current page.
    pub steps: Vec<PathStep>,
}

impl<V: GraphView> Navigator<'_, V> {
    /// The routes from `current_page` of `app_id` (each the fewest steps to a page, from
    /// `steps.start()` to `steps.end()`, over transitions that have worked) most like `intent`,
    /// at most `max_routes`; a route that only begins another listed one is left out (the
    /// planner may take part of a route).
    pub fn map(
        &self,
        app_id: &str,
        current_page: &str,
        intent: &str,
        max_routes: usize,
        steps: std::ops::RangeInclusive<usize>,
    ) -> Result<Vec<MapRoute>> {
        validate_text("intent", intent, true)?;
        let state = self.view.read();
        let app = state
            .graph()
            .app(app_id)
            .ok_or_else(|| AtlasError::NotFound(format!("app {app_id}")))?;
        if app.page(current_page).is_none() {
            return Err(AtlasError::PageNotFound(current_page.to_string()));
        }
        let task = Query::words_only(intent);
        let mut scored: Vec<(f64, Vec<usize>)> = ways(app, current_page, *steps.end())
            .into_iter()
            .filter(|way| way.len() >= *steps.start())
            .filter_map(|way| {
                let relevance =
                    f64::from(task.similarity_to(&Query::words_only(&words(app, &way))));
                (relevance > 0.0).then_some((relevance, way))
            })
            .collect();
        // Most alike first; among equals the shorter, then the graph's order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.len().cmp(&b.1.len())));
        let mut chosen: Vec<(f64, Vec<usize>)> = Vec::new();
        for (relevance, way) in scored {
            if chosen.len() >= max_routes.min(MAX_ROUTES) {
                break;
            }
            let begins_another = chosen.iter().any(|(_, c)| c.starts_with(&way));
            if !begins_another {
                chosen.push((relevance, way));
            }
        }
        Ok(chosen
            .into_iter()
            .enumerate()
            .map(|(i, (relevance, way))| {
                let last = app.transition_at(*way.last().expect("a way has a step"));
                let (steps, _) = describe_steps(
                    app,
                    &Plan {
                        steps: way,
                        cost: 0.0,
                    },
                );
                MapRoute {
                    route: i + 1,
                    target_page: last.to_page().to_string(),
                    target_page_name: app
                        .page(last.to_page())
                        .map(|p| p.page_name.clone())
                        .unwrap_or_default(),
                    relevance: round3(relevance),
                    steps,
                }
            })
            .collect())
    }
}

/// The fewest-step way (transition indices) from `from` to every page within `max_steps`, over
/// transitions that have worked at least once; a way to a page never passes the page it started
/// from again.
fn ways(app: &AppGraph, from: &str, max_steps: usize) -> Vec<Vec<usize>> {
    let max_steps = max_steps.clamp(1, MAX_ROUTE_STEPS);
    let mut reached: HashMap<&str, Vec<usize>> = HashMap::from([(from, Vec::new())]);
    let mut order = Vec::new();
    let mut queue = VecDeque::from([from]);
    while let Some(page) = queue.pop_front() {
        let way = reached[page].clone();
        if way.len() >= max_steps {
            continue;
        }
        for t in app.outgoing(page) {
            if t.success_count() == 0 || reached.contains_key(t.to_page()) {
                continue;
            }
            let mut next = way.clone();
            next.push(t.slot());
            reached.insert(t.to_page(), next.clone());
            order.push(next);
            queue.push_back(t.to_page());
        }
    }
    order
}

/// A way's words: what its steps tap and type, and the name of the page it ends on.
fn words(app: &AppGraph, way: &[usize]) -> String {
    let mut words: Vec<&str> = Vec::new();
    for i in way {
        let action = app.transition_at(*i).action();
        for w in [&action.widget_text, &action.input_text] {
            if !w.trim().is_empty() {
                words.push(w.trim());
            }
        }
    }
    if let Some(last) = way
        .last()
        .and_then(|i| app.page(app.transition_at(*i).to_page()))
    {
        words.push(&last.page_name);
    }
    words.join(" ")
}
