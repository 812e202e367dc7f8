//! Remembered routes: for a destination asked for more than once, the whole tree of cheapest
//! routes into it, so every later question about it — from any page — is a walk of a few pointers.
//!
//! Agents of a fleet ask for the same destinations over and over, from wherever they happen to
//! be; a reverse Dijkstra from the destination answers all of those at once. What makes caching
//! safe while the fleet keeps reporting is a bound, not a guess:
//! - a new transition may open a shortcut, so it forgets everything;
//! - an edge that got *more* expensive only hurts the routes that use it, so it forgets those;
//! - edges that got *cheaper* can improve any route by at most the sum of their decreases, so
//!   routes are kept until that sum exceeds [`TOLERANCE`]: a remembered route is never worse than
//!   the best one by more than that (0.02 in −ln terms: 2% of reliability).

use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use crate::AppGraph;
use crate::plan::{Plan, Queued};

/// How far (in summed −ln cost) a remembered route may fall behind the best one.
pub const TOLERANCE: f64 = 0.02;
/// Node slots all of an app's trees may hold together (4 bytes each).
const SLOT_BUDGET: usize = 1 << 24;
/// Destinations whose first ask is remembered, so the second builds the tree.
const MAX_ASKED: usize = 1 << 16;

const NONE: u32 = u32::MAX;

/// The cheapest first edge from every node towards one destination.
struct Tree {
    next: Vec<u32>,
}

/// Alternatives remembered for one (start, destination, limit) together with the main route
/// they were chosen against.
struct Remembered {
    main: Vec<usize>,
    alternatives: Arc<Vec<Plan>>,
}

#[derive(Default)]
struct Inner {
    trees: HashMap<u32, Arc<Tree>>,
    order: VecDeque<u32>,
    slots: usize,
    asked: HashSet<u32>,
    alternatives: HashMap<(u32, u32, usize, usize), Remembered>,
    drift: f64,
    hits: u64,
    misses: u64,
}

impl Inner {
    fn forget_all(&mut self) {
        let (hits, misses) = (self.hits, self.misses);
        *self = Inner {
            hits,
            misses,
            ..Inner::default()
        };
    }
}

/// An app's remembered routes. Cloning an app graph starts with an empty cache.
#[derive(Default)]
pub(crate) struct RouteCache(Mutex<Inner>);

impl Clone for RouteCache {
    fn clone(&self) -> Self {
        RouteCache::default()
    }
}

impl std::fmt::Debug for RouteCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        write!(f, "RouteCache({} trees)", inner.trees.len())
    }
}

/// How often remembered routes answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Questions answered from a remembered route tree.
    pub hits: u64,
    /// Questions that built a tree first.
    pub misses: u64,
    /// Route trees remembered now.
    pub trees: usize,
}

impl RouteCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: inner.hits,
            misses: inner.misses,
            trees: inner.trees.len(),
        }
    }

    /// A new edge: any route may now have a shortcut.
    pub(crate) fn edge_added(&self) {
        self.lock().forget_all();
    }

    /// An edge's cost changed from `old` to `new`.
    pub(crate) fn edge_changed(
        &self,
        edge: EdgeIndex,
        transition: usize,
        from: NodeIndex,
        old: f64,
        new: f64,
    ) {
        let mut inner = self.lock();
        if new < old {
            inner.drift += old - new;
            if inner.drift > TOLERANCE {
                inner.forget_all();
            }
        } else if new > old {
            let e = edge.index() as u32;
            let dropped: Vec<u32> = inner
                .trees
                .iter()
                .filter(|(_, t)| t.next.get(from.index()) == Some(&e))
                .map(|(k, _)| *k)
                .collect();
            for key in dropped {
                if let Some(tree) = inner.trees.remove(&key) {
                    inner.slots -= tree.next.len();
                }
            }
            inner.alternatives.retain(|_, r| {
                !r.main.contains(&transition)
                    && !r.alternatives.iter().any(|p| p.steps.contains(&transition))
            });
        }
    }

    fn tree(&self, graph: &AppGraph, goal: NodeIndex) -> Option<Arc<Tree>> {
        let key = goal.index() as u32;
        {
            let mut inner = self.lock();
            if let Some(tree) = inner.trees.get(&key).cloned() {
                inner.hits += 1;
                return Some(tree);
            }
            inner.misses += 1;
            if inner.asked.len() >= MAX_ASKED {
                inner.asked.clear();
            }
            if inner.asked.insert(key) {
                // First ask: a one-off destination is cheaper to search for directly.
                return None;
            }
        }
        let tree = Arc::new(build_tree(graph, goal));
        let mut inner = self.lock();
        inner.slots += tree.next.len();
        inner.order.push_back(key);
        if let Some(old) = inner.trees.insert(key, tree.clone()) {
            inner.slots -= old.next.len();
        }
        while inner.slots > SLOT_BUDGET {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            if let Some(old) = inner.trees.remove(&oldest) {
                inner.slots -= old.next.len();
            }
        }
        Some(tree)
    }

    /// The cheapest route by the remembered tree, if the destination has one and the route
    /// fits in `max_steps`.
    pub(crate) fn plan(
        &self,
        graph: &AppGraph,
        from: NodeIndex,
        goal: NodeIndex,
        max_steps: usize,
    ) -> Option<Plan> {
        let tree = self.tree(graph, goal)?;
        let (mut at, mut steps, mut cost) = (from, Vec::new(), 0.0);
        while at != goal {
            let edge = *tree.next.get(at.index())?;
            if edge == NONE || steps.len() >= max_steps {
                return None;
            }
            let edge = EdgeIndex::new(edge as usize);
            let data = graph.graph.edge_weight(edge)?;
            steps.push(data.transition);
            cost += data.cost;
            at = graph.graph.edge_endpoints(edge)?.1;
        }
        Some(Plan { steps, cost })
    }

    pub(crate) fn alternatives(
        &self,
        key: (u32, u32, usize, usize),
        main: &Plan,
    ) -> Option<Arc<Vec<Plan>>> {
        let inner = self.lock();
        inner
            .alternatives
            .get(&key)
            .filter(|r| r.main == main.steps)
            .map(|r| r.alternatives.clone())
    }

    pub(crate) fn remember_alternatives(
        &self,
        key: (u32, u32, usize, usize),
        main: &Plan,
        alternatives: Arc<Vec<Plan>>,
    ) {
        let mut inner = self.lock();
        if inner.alternatives.len() >= MAX_ASKED {
            inner.alternatives.clear();
        }
        inner.alternatives.insert(
            key,
            Remembered {
                main: main.steps.clone(),
                alternatives,
            },
        );
    }
}

/// Dijkstra backwards from `goal` over every page that can reach it.
fn build_tree(graph: &AppGraph, goal: NodeIndex) -> Tree {
    let n = graph.graph.node_count();
    let mut dist = vec![f64::INFINITY; n];
    let mut next = vec![NONE; n];
    let mut heap = BinaryHeap::new();
    dist[goal.index()] = 0.0;
    heap.push(Queued {
        cost: 0.0,
        node: goal,
    });
    while let Some(Queued { cost, node }) = heap.pop() {
        if cost > dist[node.index()] {
            continue;
        }
        for edge in graph
            .graph
            .edges_directed(node, petgraph::Direction::Incoming)
        {
            let prev = edge.source();
            let candidate = cost + edge.weight().cost;
            if candidate < dist[prev.index()] {
                dist[prev.index()] = candidate;
                next[prev.index()] = edge.id().index() as u32;
                heap.push(Queued {
                    cost: candidate,
                    node: prev,
                });
            }
        }
    }
    Tree { next }
}
