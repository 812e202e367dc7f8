//! Path planning: cheapest reliable route, fewest-steps fallback, and distinct alternatives.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use atlas_model::Transition;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

use crate::AppGraph;

/// What one step costs regardless of reliability: ln(1/0.78), so a perfectly reliable extra step
/// weighs about as much as a 22% risk of failure.
pub const STEP_COST: f64 = 0.25;

pub(crate) fn edge_cost(t: &Transition) -> f64 {
    -t.smoothed_success_rate().ln() + STEP_COST
}

/// A route: the transitions to take, in order (indices into [`AppGraph::transitions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub steps: Vec<usize>,
    pub cost: f64,
}

impl Plan {
    /// Probability that every step works, from the smoothed rates.
    pub fn reliability(&self, graph: &AppGraph) -> f64 {
        self.steps.iter().map(|s| graph.transitions()[*s].smoothed_success_rate()).product()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    UnknownPage(String),
    NoPath,
    /// A path exists but even the shortest one is longer than allowed.
    TooManySteps { shortest: usize },
}

#[derive(PartialEq)]
struct Queued {
    cost: f64,
    node: NodeIndex,
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reverse for a min-heap; costs are never NaN (logs of rates in (0, 1]).
        other.cost.partial_cmp(&self.cost).unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The transitions from the search's start to `to`, following each node's recorded predecessor.
fn walk_back(via: &[Option<(NodeIndex, usize)>], to: NodeIndex) -> Vec<usize> {
    let mut steps = Vec::new();
    let mut at = to;
    while let Some((prev, transition)) = via[at.index()] {
        steps.push(transition);
        at = prev;
    }
    steps.reverse();
    steps
}

impl AppGraph {
    /// The cheapest route from `from` to `to` that avoids `banned` transitions, searching only as
    /// far as the target (Dijkstra with early exit).
    fn cheapest(&self, from: NodeIndex, to: NodeIndex, banned: &[usize]) -> Option<Plan> {
        let n = self.graph.node_count();
        let mut dist = vec![f64::INFINITY; n];
        let mut via: Vec<Option<(NodeIndex, usize)>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        dist[from.index()] = 0.0;
        heap.push(Queued { cost: 0.0, node: from });
        while let Some(Queued { cost, node }) = heap.pop() {
            if node == to {
                break;
            }
            if cost > dist[node.index()] {
                continue;
            }
            for edge in self.graph.edges(node) {
                let data = edge.weight();
                if banned.contains(&data.transition) {
                    continue;
                }
                let next = edge.target();
                let candidate = cost + data.cost;
                if candidate < dist[next.index()] {
                    dist[next.index()] = candidate;
                    via[next.index()] = Some((node, data.transition));
                    heap.push(Queued { cost: candidate, node: next });
                }
            }
        }
        if !dist[to.index()].is_finite() {
            return None;
        }
        let steps = walk_back(&via, to);
        Some(Plan { steps, cost: dist[to.index()] })
    }

    /// The route with the fewest steps (breadth-first), preferring cheaper edges between the same
    /// pages.
    fn fewest_steps(&self, from: NodeIndex, to: NodeIndex) -> Option<Plan> {
        let n = self.graph.node_count();
        let mut via: Vec<Option<(NodeIndex, usize)>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[from.index()] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(node) = queue.pop_front() {
            if node == to {
                break;
            }
            let mut edges: Vec<_> = self.graph.edges(node).collect();
            edges.sort_by(|a, b| a.weight().cost.partial_cmp(&b.weight().cost).unwrap_or(Ordering::Equal));
            for edge in edges {
                let next = edge.target();
                if !seen[next.index()] {
                    seen[next.index()] = true;
                    via[next.index()] = Some((node, edge.weight().transition));
                    queue.push_back(next);
                }
            }
        }
        if !seen[to.index()] {
            return None;
        }
        let steps = walk_back(&via, to);
        let cost = steps.iter().map(|s| edge_cost(self.transition_at(*s))).sum();
        Some(Plan { steps, cost })
    }

    /// The best route from `from` to `to` in at most `max_steps` steps. An empty plan means the
    /// agent is already there.
    pub fn plan(&self, from: &str, to: &str, max_steps: usize) -> Result<Plan, PlanError> {
        let start = self.node(from).ok_or_else(|| PlanError::UnknownPage(from.to_string()))?;
        let goal = self.node(to).ok_or_else(|| PlanError::UnknownPage(to.to_string()))?;
        let best = self.cheapest(start, goal, &[]).ok_or(PlanError::NoPath)?;
        if best.steps.len() <= max_steps {
            return Ok(best);
        }
        let short = self.fewest_steps(start, goal).ok_or(PlanError::NoPath)?;
        if short.steps.len() <= max_steps {
            Ok(short)
        } else {
            Err(PlanError::TooManySteps { shortest: short.steps.len() })
        }
    }

    /// Up to `k` routes other than `main`, each the cheapest that avoids one of `main`'s steps
    /// (the first round of Yen's algorithm): distinct, and each differing where it matters.
    pub fn alternatives(&self, from: &str, to: &str, main: &Plan, k: usize, max_steps: usize) -> Vec<Plan> {
        let (Some(start), Some(goal)) = (self.node(from), self.node(to)) else { return Vec::new() };
        let mut found: Vec<Plan> = Vec::new();
        for banned in &main.steps {
            if let Some(plan) = self.cheapest(start, goal, &[*banned]) {
                if plan.steps.len() <= max_steps
                    && plan.steps != main.steps
                    && !found.iter().any(|p| p.steps == plan.steps)
                {
                    found.push(plan);
                }
            }
        }
        found.sort_by(|a, b| a.cost.partial_cmp(&b.cost).unwrap_or(Ordering::Equal));
        found.truncate(k);
        found
    }

    /// The page a plan ends on (its last step's target), if it has steps.
    pub fn plan_target(&self, plan: &Plan) -> Option<&str> {
        plan.steps.last().map(|s| self.transition_at(*s).to_page.as_str())
    }

    /// The pages of the graph as petgraph nodes, for callers that need raw traversal.
    pub fn node_of(&self, page_id: &str) -> Option<NodeIndex> {
        self.node(page_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_model::{Action, App, Page, PageType};

    fn page(app: &str, name: &str, ordinal: u32) -> Page {
        Page {
            page_id: atlas_model::page_id(app, name),
            app_id: app.into(),
            page_name: name.into(),
            page_type: PageType::Other,
            description: String::new(),
            intents: vec![],
            widgets: vec![],
            page_structure: String::new(),
            ordinal,
            url: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            visited_count: 0,
        }
    }

    fn edge(app: &str, from: &str, to: &str, text: &str, ok: u64, fail: u64) -> Transition {
        let action = Action { action_type: "click".into(), widget_text: text.into(), ..Default::default() };
        let (f, t) = (atlas_model::page_id(app, from), atlas_model::page_id(app, to));
        Transition {
            transition_id: atlas_model::transition_id(&f, &action, &t),
            app_id: app.into(),
            from_page: f,
            to_page: t,
            action,
            success_count: ok,
            fail_count: fail,
            latency_total_ms: 0.0,
            latency_samples: 0,
            last_failure_reason: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    fn graph() -> AppGraph {
        let app = App { app_id: "a".into(), home_page: None, created_at: String::new(), updated_at: String::new() };
        let mut g = AppGraph::new(app);
        for (i, n) in ["home", "mid", "target", "shortcut"].iter().enumerate() {
            g.upsert_page(page("a", n, i as u32));
        }
        g.upsert_transition(edge("a", "home", "mid", "m", 50, 0)).unwrap();
        g.upsert_transition(edge("a", "mid", "target", "t", 50, 0)).unwrap();
        // Shorter but unreliable.
        g.upsert_transition(edge("a", "home", "target", "direct", 1, 9)).unwrap();
        g
    }

    #[test]
    fn reliable_route_beats_short_unreliable_one() {
        let g = graph();
        let plan = g.plan(&atlas_model::page_id("a", "home"), &atlas_model::page_id("a", "target"), 10).unwrap();
        assert_eq!(plan.steps.len(), 2);
        let alts = g.alternatives(&atlas_model::page_id("a", "home"), &atlas_model::page_id("a", "target"), &plan, 2, 10);
        assert_eq!(alts.len(), 1);
        assert_eq!(alts[0].steps.len(), 1);
    }

    #[test]
    fn max_steps_falls_back_to_fewest_steps_then_fails() {
        let g = graph();
        let (h, t) = (atlas_model::page_id("a", "home"), atlas_model::page_id("a", "target"));
        assert_eq!(g.plan(&h, &t, 1).unwrap().steps.len(), 1);
        assert_eq!(g.plan(&h, &t, 0), Err(PlanError::TooManySteps { shortest: 1 }));
        let s = atlas_model::page_id("a", "shortcut");
        assert_eq!(g.plan(&h, &s, 10), Err(PlanError::NoPath));
        assert!(g.plan(&h, &h, 10).unwrap().steps.is_empty());
    }
}
