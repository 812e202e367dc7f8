//! Path planning: cheapest reliable route, fewest-steps fallback, and distinct alternatives.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::AppGraph;
use crate::cost::{Plan, edge_cost};
use crate::links::Direction;
use crate::route_cache::Tree;

/// Why no route was planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// No page of that id in the app.
    UnknownPage(String),
    /// No route leads there.
    NoPath,
    /// A path exists but even the shortest one is longer than allowed.
    TooManySteps {
        /// The shortest route's steps.
        shortest: usize,
    },
}

#[derive(PartialEq)]
pub(crate) struct Queued {
    pub(crate) cost: f64,
    pub(crate) node: u32,
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reverse for a min-heap; costs are never NaN (logs of rates in (0, 1]).
        other
            .cost
            .partial_cmp(&self.cost)
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The transitions from the search's start to `to`, following each node's recorded predecessor.
fn walk_back(via: &[Option<(u32, u32)>], to: u32) -> Vec<usize> {
    let mut steps = Vec::new();
    let mut at = to;
    while let Some((prev, transition)) = via[at as usize] {
        steps.push(transition as usize);
        at = prev;
    }
    steps.reverse();
    steps
}

/// One direction of a search: distances and predecessors stamped with a generation, so a query
/// touches only the nodes it reaches instead of clearing arrays the size of the app.
#[derive(Default)]
struct Side {
    dist: Vec<f64>,
    /// The neighbouring node towards this side's origin, and the transition between them.
    via: Vec<Option<(u32, u32)>>,
    stamp: Vec<u32>,
    heap: BinaryHeap<Queued>,
}

impl Side {
    fn reset(&mut self, nodes: usize) {
        if self.dist.len() < nodes {
            self.dist.resize(nodes, f64::INFINITY);
            self.via.resize(nodes, None);
            self.stamp.resize(nodes, 0);
        }
        self.heap.clear();
    }

    fn dist(&self, n: u32, generation: u32) -> f64 {
        if self.stamp[n as usize] == generation {
            self.dist[n as usize]
        } else {
            f64::INFINITY
        }
    }

    fn via(&self, n: u32, generation: u32) -> Option<(u32, u32)> {
        if self.stamp[n as usize] == generation {
            self.via[n as usize]
        } else {
            None
        }
    }

    fn set(&mut self, n: u32, dist: f64, via: Option<(u32, u32)>, generation: u32) {
        self.set_queued(n, dist, via, generation, dist);
    }

    /// Records `dist` and queues the node by `priority` (its distance plus an estimate of what
    /// remains, in a guided search).
    fn set_queued(
        &mut self,
        n: u32,
        dist: f64,
        via: Option<(u32, u32)>,
        generation: u32,
        priority: f64,
    ) {
        self.stamp[n as usize] = generation;
        self.dist[n as usize] = dist;
        self.via[n as usize] = via;
        self.heap.push(Queued {
            cost: priority,
            node: n,
        });
    }

    fn top(&self) -> f64 {
        self.heap.peek().map_or(f64::INFINITY, |q| q.cost)
    }

    /// The transitions met walking from `at` back to this side's origin, in the order met.
    fn walk(&self, mut at: u32, generation: u32) -> Vec<usize> {
        let mut steps = Vec::new();
        while let Some((prev, transition)) = self.via(at, generation) {
            steps.push(transition as usize);
            at = prev;
        }
        steps
    }
}

/// Both sides of a bidirectional search, kept per thread and reused across queries.
#[derive(Default)]
struct Scratch {
    generation: u32,
    forward: Side,
    backward: Side,
}

impl Scratch {
    /// A fresh generation for a search over `nodes` pages: both sides empty.
    fn start(&mut self, nodes: usize) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Stamps wrapped around: forget them all once every four billion queries.
            self.forward
                .stamp
                .iter_mut()
                .chain(self.backward.stamp.iter_mut())
                .for_each(|s| *s = 0);
            self.generation = 1;
        }
        self.forward.reset(nodes);
        self.backward.reset(nodes);
        self.generation
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

impl AppGraph {
    /// The cheapest route from `from` to `to` that avoids `banned` transitions: Dijkstra from both
    /// ends at once, stopping when the two frontiers together cannot beat the best meeting found,
    /// so a query explores two small balls instead of one large one.
    pub(crate) fn cheapest(&self, from: u32, to: u32, banned: &[usize]) -> Option<Plan> {
        if from == to {
            return Some(Plan {
                steps: Vec::new(),
                cost: 0.0,
            });
        }
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let g = scratch.start(self.links.node_count());
            let Scratch {
                forward, backward, ..
            } = &mut *scratch;
            forward.set(from, 0.0, None, g);
            backward.set(to, 0.0, None, g);
            let (mut best, mut meeting) = (f64::INFINITY, None);
            while forward.top() + backward.top() < best {
                let outgoing = forward.top() <= backward.top();
                let (this, other, direction) = if outgoing {
                    (&mut *forward, &*backward, Direction::Forward)
                } else {
                    (&mut *backward, &*forward, Direction::Backward)
                };
                let Some(Queued { cost, node }) = this.heap.pop() else {
                    break;
                };
                if cost > this.dist(node, g) {
                    continue;
                }
                for link in self.links.of(node, direction) {
                    if banned.contains(&(link.edge as usize)) {
                        continue;
                    }
                    let next = link.node;
                    let candidate = cost + link.cost;
                    if candidate < this.dist(next, g) {
                        this.set(next, candidate, Some((node, link.edge)), g);
                        let through = candidate + other.dist(next, g);
                        if through < best {
                            best = through;
                            meeting = Some(next);
                        }
                    }
                }
            }
            let meeting = meeting?;
            // Forward half: walk back to the start; backward half: walk on to the goal.
            let mut steps = forward.walk(meeting, g);
            steps.reverse();
            steps.extend(backward.walk(meeting, g));
            Some(Plan { steps, cost: best })
        })
    }

    /// The cheapest route from `from` to `to` that avoids `banned`, by A* guided by a remembered
    /// tree: into `to` (`Backward`: search forward, each page's estimate its cost to `to`) or out
    /// of `from` (`Forward`: search backward, each page's estimate its cost from `from`). Avoiding
    /// a step never makes a route cheaper than the tree's, so the estimate never overshoots (by
    /// more than the tree's tolerance) and the search stays close to the best route.
    pub(crate) fn guided(
        &self,
        from: u32,
        to: u32,
        banned: usize,
        tree_direction: Direction,
        tree: &Tree,
    ) -> Option<Plan> {
        let (origin, target, direction) = match tree_direction {
            Direction::Backward => (from, to, Direction::Forward),
            Direction::Forward => (to, from, Direction::Backward),
        };
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let g = scratch.start(self.links.node_count());
            let side = &mut scratch.forward;
            side.set_queued(origin, 0.0, None, g, tree.cost(origin));
            while let Some(Queued { cost, node }) = side.heap.pop() {
                let dist = side.dist(node, g);
                if cost > dist + tree.cost(node) {
                    continue;
                }
                if node == target {
                    let mut steps = side.walk(target, g);
                    if direction == Direction::Forward {
                        steps.reverse();
                    }
                    return Some(Plan { steps, cost: dist });
                }
                for link in self.links.of(node, direction) {
                    let estimate = tree.cost(link.node);
                    if link.edge as usize == banned || estimate.is_infinite() {
                        continue;
                    }
                    let candidate = dist + link.cost;
                    if candidate < side.dist(link.node, g) {
                        side.set_queued(
                            link.node,
                            candidate,
                            Some((node, link.edge)),
                            g,
                            candidate + estimate,
                        );
                    }
                }
            }
            None
        })
    }

    /// The route with the fewest steps (breadth-first), preferring cheaper edges between the same
    /// pages.
    fn fewest_steps(&self, from: u32, to: u32) -> Option<Plan> {
        let n = self.links.node_count();
        let mut via: Vec<Option<(u32, u32)>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[from as usize] = true;
        let mut queue = VecDeque::from([from]);
        while let Some(node) = queue.pop_front() {
            if node == to {
                break;
            }
            let mut links: Vec<_> = self
                .links
                .outgoing(node)
                .filter(|l| l.cost.is_finite())
                .collect();
            links.sort_by(|a, b| a.cost.partial_cmp(&b.cost).unwrap_or(Ordering::Equal));
            for link in links {
                let next = link.node;
                if !seen[next as usize] {
                    seen[next as usize] = true;
                    via[next as usize] = Some((node, link.edge));
                    queue.push_back(next);
                }
            }
        }
        if !seen[to as usize] {
            return None;
        }
        let steps = walk_back(&via, to);
        let cost = steps
            .iter()
            .map(|s| edge_cost(self.transition_at(*s).counts()))
            .sum();
        Some(Plan { steps, cost })
    }

    /// The best route from `from` to `to` in at most `max_steps` steps. An empty plan means the
    /// agent is already there.
    pub fn plan(&self, from: &str, to: &str, max_steps: usize) -> Result<Plan, PlanError> {
        let start = self
            .node(from)
            .ok_or_else(|| PlanError::UnknownPage(from.to_string()))?;
        let goal = self
            .node(to)
            .ok_or_else(|| PlanError::UnknownPage(to.to_string()))?;
        let home_start = self.home_page().is_some_and(|h| h.page_id == from);
        if let Some(remembered) =
            self.routes
                .plan(&self.links, (start, goal), max_steps, home_start)
        {
            return Ok(remembered);
        }
        self.plan_between(start, goal, max_steps)
    }

    /// [`AppGraph::plan`] searched afresh, without remembered routes (for measuring and checking).
    pub fn plan_fresh(&self, from: &str, to: &str, max_steps: usize) -> Result<Plan, PlanError> {
        let start = self
            .node(from)
            .ok_or_else(|| PlanError::UnknownPage(from.to_string()))?;
        let goal = self
            .node(to)
            .ok_or_else(|| PlanError::UnknownPage(to.to_string()))?;
        self.plan_between(start, goal, max_steps)
    }

    fn plan_between(&self, start: u32, goal: u32, max_steps: usize) -> Result<Plan, PlanError> {
        let best = self.cheapest(start, goal, &[]).ok_or(PlanError::NoPath)?;
        if best.steps.len() <= max_steps {
            return Ok(best);
        }
        let short = self.fewest_steps(start, goal).ok_or(PlanError::NoPath)?;
        if short.steps.len() <= max_steps {
            Ok(short)
        } else {
            Err(PlanError::TooManySteps {
                shortest: short.steps.len(),
            })
        }
    }

    /// Up to `k` routes other than `main`, each the cheapest that avoids one of `main`'s steps
    /// (the first round of Yen's algorithm): distinct, and each differing where it matters.
    pub fn alternatives(
        &self,
        from: &str,
        to: &str,
        main: &Plan,
        k: usize,
        max_steps: usize,
    ) -> Vec<Plan> {
        let (Some(start), Some(goal)) = (self.node(from), self.node(to)) else {
            return Vec::new();
        };
        let key = (start, goal, k, max_steps);
        if let Some(remembered) = self.routes.alternatives(key, main) {
            return remembered.as_ref().clone();
        }
        let guide = self.routes.guide(start, goal);
        let mut found: Vec<Plan> = Vec::new();
        for banned in &main.steps {
            let avoiding = match &guide {
                Some((direction, tree)) => self.guided(start, goal, *banned, *direction, tree),
                None => self.cheapest(start, goal, &[*banned]),
            };
            if let Some(plan) = avoiding
                && plan.steps.len() <= max_steps
                && plan.steps != main.steps
                && !found.iter().any(|p| p.steps == plan.steps)
            {
                found.push(plan);
            }
        }
        found.sort_by(|a, b| a.cost.partial_cmp(&b.cost).unwrap_or(Ordering::Equal));
        found.truncate(k);
        self.routes
            .remember_alternatives(key, main, std::sync::Arc::new(found.clone()));
        found
    }

    /// The page a plan ends on (its last step's target), if it has steps.
    pub fn plan_target(&self, plan: &Plan) -> Option<&str> {
        plan.steps.last().map(|s| self.transition_at(*s).to_page())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{edge, empty_app, page};

    fn graph() -> AppGraph {
        let mut g = empty_app("a");
        for (i, n) in ["home", "mid", "target", "shortcut"].iter().enumerate() {
            g.upsert_page(page("a", n, i as u32));
        }
        g.upsert_transition(&edge("a", "home", "mid", "m", 50, 0))
            .unwrap();
        g.upsert_transition(&edge("a", "mid", "target", "t", 50, 0))
            .unwrap();
        // Shorter but unreliable.
        g.upsert_transition(&edge("a", "home", "target", "direct", 1, 9))
            .unwrap();
        g
    }

    #[test]
    fn reliable_route_beats_short_unreliable_one() {
        let g = graph();
        let plan = g
            .plan(
                &atlas_model::page_id("a", "home"),
                &atlas_model::page_id("a", "target"),
                10,
            )
            .unwrap();
        assert_eq!(plan.steps.len(), 2);
        let alts = g.alternatives(
            &atlas_model::page_id("a", "home"),
            &atlas_model::page_id("a", "target"),
            &plan,
            2,
            10,
        );
        assert_eq!(alts.len(), 1);
        assert_eq!(alts[0].steps.len(), 1);
    }

    #[test]
    fn remembered_routes_follow_changing_statistics() {
        let (h, t) = (
            atlas_model::page_id("a", "home"),
            atlas_model::page_id("a", "target"),
        );
        // Cheaper edges elsewhere: once they add up past the tolerance, the route changes.
        let mut g = graph();
        for _ in 0..3 {
            assert_eq!(g.plan(&h, &t, 10).unwrap().steps.len(), 2);
        }
        assert!(g.route_cache_stats().hits >= 1);
        g.upsert_transition(&edge("a", "home", "target", "direct", 400, 9))
            .unwrap();
        assert_eq!(
            g.plan(&h, &t, 10).unwrap().steps.len(),
            1,
            "a much improved shortcut is taken"
        );
        // A step of the remembered route starts failing: the route is forgotten at once.
        let mut g = graph();
        for _ in 0..3 {
            g.plan(&h, &t, 10).unwrap();
        }
        g.upsert_transition(&edge("a", "mid", "target", "t", 50, 400))
            .unwrap();
        assert_eq!(
            g.plan(&h, &t, 10).unwrap().steps.len(),
            1,
            "the failing route is dropped"
        );
    }

    #[test]
    fn max_steps_falls_back_to_fewest_steps_then_fails() {
        let g = graph();
        let (h, t) = (
            atlas_model::page_id("a", "home"),
            atlas_model::page_id("a", "target"),
        );
        assert_eq!(g.plan(&h, &t, 1).unwrap().steps.len(), 1);
        assert_eq!(
            g.plan(&h, &t, 0),
            Err(PlanError::TooManySteps { shortest: 1 })
        );
        let s = atlas_model::page_id("a", "shortcut");
        assert_eq!(g.plan(&h, &s, 10), Err(PlanError::NoPath));
        assert!(g.plan(&h, &h, 10).unwrap().steps.is_empty());
    }
}

#[cfg(test)]
mod bidirectional_tests {
    use super::*;
    use crate::testing::{random_graph, reference_dijkstra, walk};

    #[test]
    fn bidirectional_search_finds_what_plain_dijkstra_finds() {
        for seed in 1..6u64 {
            let g = random_graph(300, 900, seed);
            for (s, t) in [
                (0usize, 1usize),
                (5, 299),
                (17, 42),
                (100, 3),
                (250, 250),
                (7, 8),
            ] {
                let reference = reference_dijkstra(&g, s, false)[t];
                match (g.cheapest(s as u32, t as u32, &[]), reference.as_ref()) {
                    (Some(plan), Some(cost)) => {
                        assert!(
                            (plan.cost - cost).abs() < 1e-9,
                            "seed {seed} {s}->{t}: {} vs {cost}",
                            plan.cost
                        );
                        // The steps form a connected walk from `from` to `to` whose costs add up.
                        let (at, sum) = walk(&g, s, &plan);
                        assert_eq!(at, g.pages()[t].page_id);
                        assert!((sum - cost).abs() < 1e-9);
                    }
                    (None, None) => {}
                    (ours, theirs) => {
                        panic!("seed {seed} {s}->{t}: ours {ours:?}, reference {theirs:?}")
                    }
                }
            }
        }
    }

    #[test]
    fn remembered_routes_stay_within_tolerance_while_statistics_change() {
        let mut g = random_graph(200, 800, 9);
        let pairs = [
            (0usize, 1usize),
            (5, 199),
            (17, 42),
            (100, 3),
            (7, 8),
            (50, 60),
        ];
        let mut state = 12345u64;
        let mut rand = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for round in 0..300 {
            for &(s, t) in &pairs {
                let (from, to) = (g.pages()[s].page_id.clone(), g.pages()[t].page_id.clone());
                let fresh = g.cheapest(s as u32, t as u32, &[]);
                match (g.plan(&from, &to, 1000), fresh) {
                    (Ok(plan), Some(best)) => {
                        let (end, cost) = walk(&g, s, &plan);
                        assert_eq!(end, to);
                        assert!(
                            cost <= best.cost + crate::TOLERANCE + 1e-9,
                            "round {round} {s}->{t}: {cost} vs best {}",
                            best.cost
                        );
                    }
                    (Err(PlanError::NoPath), None) => {}
                    (ours, fresh) => panic!("round {round} {s}->{t}: {ours:?} vs {fresh:?}"),
                }
            }
            // A report on a random edge: mostly successes, sometimes a failure.
            let ix = rand(g.transition_count() as u64) as usize;
            let mut tr = g.transition_at(ix).to_transition();
            if rand(4) == 0 {
                tr.fail_count += 1
            } else {
                tr.success_count += 1
            }
            g.upsert_transition(&tr).unwrap();
        }
        let stats = g.route_cache_stats();
        assert!(stats.hits > 100, "the cache answered: {stats:?}");
    }
}
