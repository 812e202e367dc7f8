//! What a route costs: `-ln(smoothed success rate) + STEP_COST` a step, and a route as the steps
//! it takes with their summed cost. The planner ([`crate::plan`]) searches by it and the route
//! cache ([`crate::route_cache`]) keeps trees of it.

use atlas_model::Counts;

use crate::AppGraph;

/// What one step costs regardless of reliability: ln(1/0.78), so a perfectly reliable extra step
/// weighs about as much as a 22% risk of failure.
pub const STEP_COST: f64 = 0.25;

pub(crate) fn edge_cost(counts: Counts) -> f64 {
    -counts.smoothed_success_rate().ln() + STEP_COST
}

/// What a link costs the planner: its edge's cost, or infinity for a transition a release was
/// found without (kept as history; no route takes it, since no sum with it is ever less).
pub(crate) fn link_cost(counts: Counts, gone: bool) -> f64 {
    if gone {
        f64::INFINITY
    } else {
        edge_cost(counts)
    }
}

/// A route: the transitions to take, in order (indices into [`AppGraph::transitions`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The transitions to take, in order.
    pub steps: Vec<usize>,
    /// The route's planning cost (the sum of its edges' costs).
    pub cost: f64,
}

impl Plan {
    /// Probability that every step works, from the smoothed rates.
    pub fn reliability(&self, graph: &AppGraph) -> f64 {
        self.steps
            .iter()
            .map(|s| graph.transition_at(*s).counts().smoothed_success_rate())
            .product()
    }
}
