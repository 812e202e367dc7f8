//! Remembered routes: for a page asked about more than once, the whole tree of cheapest routes
//! into it (as a destination) or out of it (as a start), so every later question about it is a
//! walk of a few pointers.
//!
//! Agents of a fleet ask for the same destinations over and over, from wherever they happen to
//! be, and `query_path` asks from the same home page for every destination; one Dijkstra from
//! the page answers all of those at once. What makes caching safe while the fleet keeps
//! reporting is a bound, not a guess:
//! - a new transition may open a shortcut, so it forgets everything;
//! - an edge that got *more* expensive only hurts the routes that use it, so it forgets those;
//! - edges that got *cheaper* can improve any route by at most the sum of their decreases, so
//!   routes are kept until that sum exceeds [`TOLERANCE`]: a remembered route is never worse than
//!   the best one by more than that (0.02 in −ln terms: 2% of reliability).
//!
//! A tree also keeps each page's cost, which guides the searches for alternative routes (A*
//! with the tree's costs as the estimate: a route that avoids a step is never cheaper than the
//! best route, so the estimate never overshoots, and the search stays near the best route).
//!
//! Building a tree is one Dijkstra over the whole app — milliseconds at 100,000 transitions. In a
//! small app the asker builds it (cheaper than two direct searches); in a big one, when the
//! graph's owner has said it builds trees itself ([`crate::Graph::defer_route_trees`]: the
//! service's tree builder), the asker only asks for it and searches directly meanwhile, so no
//! request waits for a tree.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use crate::cost::{Plan, STEP_COST};
use crate::links::{Direction, Links};

/// How far (in summed −ln cost) a remembered route may fall behind the best one.
pub const TOLERANCE: f64 = 0.02;
/// Bytes all of an app's trees may hold together.
const TREE_BUDGET: usize = 96 << 20;
/// Pages whose first ask is remembered, so the second builds the tree.
const MAX_ASKED: usize = 1 << 16;
/// Apps of up to this many transitions build trees while the asker waits, whoever builds the
/// big ones: such a build costs about what one direct search on a big app does.
pub const ASKER_BUILDS_UP_TO: usize = 10_000;

const NONE: u32 = u32::MAX;

/// Called when a tree is wanted that the graph's owner builds (see
/// [`crate::Graph::defer_route_trees`]).
#[derive(Clone)]
pub struct TreeWanted(pub Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for TreeWanted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TreeWanted")
    }
}

/// A tree's root page and which way its routes run: `Backward` routes lead *into* the page (it
/// is their destination), `Forward` routes lead *out of* it (it is their start).
type Root = (u32, Direction);

/// The cheapest routes into or out of one page.
pub(crate) struct Tree {
    /// Into a destination: each page's first step towards it; out of a start: each page's last
    /// step from it. `NONE` where no route joins them.
    link: Vec<u32>,
    /// Each page's cost to the destination or from the start, as costs were when it was built.
    dist: Vec<f64>,
}

impl Tree {
    fn bytes(&self) -> usize {
        self.link.len() * (size_of::<u32>() + size_of::<f64>())
    }

    /// A page's cost to (or from) the root; unbounded for pages no route joins to it.
    pub(crate) fn cost(&self, node: u32) -> f64 {
        self.dist
            .get(node as usize)
            .copied()
            .unwrap_or(f64::INFINITY)
    }
}

/// Alternatives remembered for one (start, destination, limit) together with the main route
/// they were chosen against.
struct Remembered {
    main: Vec<usize>,
    alternatives: Arc<Vec<Plan>>,
}

#[derive(Default)]
struct Inner {
    /// Each tree with when it last answered, so the budget forgets the least used first (a
    /// start asked about twice by chance must not push out the destination every agent wants).
    trees: HashMap<Root, (Arc<Tree>, u64)>,
    clock: u64,
    bytes: usize,
    asked: HashSet<Root>,
    /// Trees the graph's owner should build, oldest wish first.
    wanted: VecDeque<Root>,
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

    fn remember(&mut self, root: Root, tree: Arc<Tree>) {
        self.clock += 1;
        self.bytes += tree.bytes();
        if let Some((old, _)) = self.trees.insert(root, (tree, self.clock)) {
            self.bytes -= old.bytes();
        }
        while self.bytes > TREE_BUDGET && self.trees.len() > 1 {
            let Some(least_used) = self
                .trees
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(root, _)| *root)
            else {
                break;
            };
            self.forget(least_used);
        }
    }

    fn forget(&mut self, root: Root) {
        if let Some((tree, _)) = self.trees.remove(&root) {
            self.bytes -= tree.bytes();
        }
    }

    /// The tree of the first of `roots` remembered, marked as used now.
    fn find(&mut self, roots: &[Root]) -> Option<(Root, Arc<Tree>)> {
        self.clock += 1;
        let now = self.clock;
        roots.iter().find_map(|root| {
            self.trees.get_mut(root).map(|(tree, used)| {
                *used = now;
                (*root, tree.clone())
            })
        })
    }

    /// Whether `root` has been asked about before (and notes that it has now).
    fn asked_before(&mut self, root: Root) -> bool {
        if self.asked.len() >= MAX_ASKED {
            self.asked.clear();
        }
        !self.asked.insert(root)
    }
}

/// An app's remembered routes. Cloning an app graph starts with an empty cache whose trees its
/// askers build.
#[derive(Default)]
pub(crate) struct RouteCache {
    inner: Mutex<Inner>,
    /// Set when the graph's owner builds the trees of big apps.
    deferred: Option<TreeWanted>,
}

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
    /// Questions no remembered tree answered (searched directly, or after building one).
    pub misses: u64,
    /// Route trees remembered now.
    pub trees: usize,
    /// Trees asked for and not built yet.
    pub wanted: usize,
}

impl RouteCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            hits: inner.hits,
            misses: inner.misses,
            trees: inner.trees.len(),
            wanted: inner.wanted.len(),
        }
    }

    /// From now on, trees of apps bigger than [`ASKER_BUILDS_UP_TO`] are built by whoever
    /// `wanted` wakes.
    pub(crate) fn defer(&mut self, wanted: TreeWanted) {
        self.deferred = Some(wanted);
    }

    /// A new edge: any route may now have a shortcut.
    pub(crate) fn edge_added(&self) {
        self.lock().forget_all();
    }

    /// Edge `edge`'s cost changed from `old` to what `links` holds now.
    pub(crate) fn edge_changed(&self, links: &Links, edge: u32, old: f64, new: f64) {
        let mut inner = self.lock();
        if new < old {
            inner.drift += old - new;
            if inner.drift > TOLERANCE {
                inner.forget_all();
            }
        } else if new > old {
            let [from, to] = links.ends(edge);
            let dropped: Vec<Root> = inner
                .trees
                .iter()
                .filter(|((_, direction), (tree, _))| {
                    let at = match direction {
                        Direction::Backward => from,
                        Direction::Forward => to,
                    };
                    tree.link.get(at as usize) == Some(&edge)
                })
                .map(|(root, _)| *root)
                .collect();
            for root in dropped {
                inner.forget(root);
            }
            let transition = edge as usize;
            inner.alternatives.retain(|_, r| {
                !r.main.contains(&transition)
                    && !r.alternatives.iter().any(|p| p.steps.contains(&transition))
            });
        }
    }

    /// A remembered tree for routes from `from` to `goal`: the one into `goal`, else the one out
    /// of `from`. Without one, a page asked about before gets its tree: built now in a small
    /// app, or wished for in a big one whose trees the graph's owner builds. Trees out of a
    /// start are only grown for the app's home page (`home_start`): every session and every
    /// `query_path` without a current page starts there, while other starts are wherever an
    /// agent happens to be, and a tree out of one would rarely answer twice.
    fn tree(
        &self,
        links: &Links,
        from: u32,
        goal: u32,
        home_start: bool,
    ) -> Option<(Root, Arc<Tree>)> {
        let roots = [(goal, Direction::Backward), (from, Direction::Forward)];
        let growable = if home_start { &roots[..] } else { &roots[..1] };
        let build_now = {
            let mut inner = self.lock();
            if let Some(found) = inner.find(&roots) {
                inner.hits += 1;
                return Some(found);
            }
            inner.misses += 1;
            let again: Vec<Root> = growable
                .iter()
                .copied()
                .filter(|root| inner.asked_before(*root))
                .collect();
            let first = *again.first()?;
            match &self.deferred {
                Some(wake) if links.edge_count() > ASKER_BUILDS_UP_TO => {
                    let before = inner.wanted.len();
                    for root in again {
                        if !inner.wanted.contains(&root) {
                            inner.wanted.push_back(root);
                        }
                    }
                    let wake = (inner.wanted.len() > before).then(|| wake.clone());
                    drop(inner);
                    if let Some(wake) = wake {
                        (wake.0)();
                    }
                    return None;
                }
                _ => first,
            }
        };
        let tree = Arc::new(build(links, build_now));
        self.lock().remember(build_now, tree.clone());
        Some((build_now, tree))
    }

    /// Builds the oldest tree wished for; false when none is.
    pub(crate) fn build_wanted(&self, links: &Links) -> bool {
        let root = {
            let mut inner = self.lock();
            let Some(root) = inner.wanted.pop_front() else {
                return false;
            };
            root
        };
        let tree = Arc::new(build(links, root));
        self.lock().remember(root, tree);
        true
    }

    /// The cheapest route by a remembered tree, if there is one and the route fits in
    /// `max_steps`.
    pub(crate) fn plan(
        &self,
        links: &Links,
        (from, goal): (u32, u32),
        max_steps: usize,
        home_start: bool,
    ) -> Option<Plan> {
        let ((_, direction), tree) = self.tree(links, from, goal, home_start)?;
        let mut steps = Vec::new();
        // Into the goal: walk forward from the start; out of the start: walk back from the goal.
        let (mut at, end) = match direction {
            Direction::Backward => (from, goal),
            Direction::Forward => (goal, from),
        };
        while at != end {
            let edge = *tree.link.get(at as usize)?;
            if edge == NONE || steps.len() >= max_steps {
                return None;
            }
            steps.push(edge as usize);
            let [source, target] = links.ends(edge);
            at = match direction {
                Direction::Backward => target,
                Direction::Forward => source,
            };
        }
        if direction == Direction::Forward {
            steps.reverse();
        }
        let cost = steps.iter().map(|s| links.cost(*s as u32)).sum();
        Some(Plan { steps, cost })
    }

    /// A remembered tree that can guide searches from `from` to `goal`: into `goal` (search
    /// forward from `from`), else out of `from` (search backward from `goal`).
    pub(crate) fn guide(&self, from: u32, goal: u32) -> Option<(Direction, Arc<Tree>)> {
        self.lock()
            .find(&[(goal, Direction::Backward), (from, Direction::Forward)])
            .map(|((_, direction), tree)| (direction, tree))
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

/// Dijkstra from `root` over every page it reaches (its direction: backward over the pages that
/// reach a destination, forward over the pages a start reaches).
///
/// Every link costs at least [`STEP_COST`], so the queue is a row of buckets that wide (Dial's
/// algorithm): a page taken from the lowest bucket cannot be improved by any other page of that
/// bucket, whatever order they come in, so a bucket is a plain stack and nothing is sorted.
fn build(links: &Links, (root, direction): Root) -> Tree {
    let n = links.node_count();
    let mut dist = vec![f64::INFINITY; n];
    let mut link = vec![NONE; n];
    let mut settled = vec![false; n];
    let mut buckets: Vec<Vec<u32>> = vec![vec![root]];
    let bucket_of = |cost: f64| (cost / STEP_COST) as usize;
    dist[root as usize] = 0.0;
    let mut current = 0;
    while current < buckets.len() {
        let Some(node) = buckets[current].pop() else {
            current += 1;
            continue;
        };
        if std::mem::replace(&mut settled[node as usize], true) {
            continue;
        }
        let cost = dist[node as usize];
        for l in links.of(node, direction) {
            let candidate = cost + l.cost;
            let other = l.node as usize;
            if candidate < dist[other] {
                dist[other] = candidate;
                link[other] = l.edge;
                let bucket = bucket_of(candidate);
                if bucket >= buckets.len() {
                    buckets.resize_with(bucket + 1, Vec::new);
                }
                buckets[bucket].push(l.node);
            }
        }
    }
    Tree { link, dist }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::AppGraph;
    use crate::testing::{random_graph, reference_dijkstra, walk};

    #[test]
    fn a_tree_holds_every_pages_cheapest_cost_and_first_step_both_ways() {
        for seed in 1..4u64 {
            let g = random_graph(300, 1500, seed);
            for root in [0u32, 17, 299] {
                for direction in [Direction::Backward, Direction::Forward] {
                    let tree = build(&g.links, (root, direction));
                    let reference =
                        reference_dijkstra(&g, root as usize, direction == Direction::Backward);
                    for (node, expected) in reference.iter().enumerate() {
                        let cost = tree.cost(node as u32);
                        match expected {
                            Some(c) => assert!((cost - c).abs() < 1e-9, "{seed} {root} {node}"),
                            None => assert!(cost.is_infinite()),
                        }
                        // The page's link is the step next to it on a cheapest route.
                        let edge = tree.link[node];
                        if node as u32 == root || edge == NONE {
                            continue;
                        }
                        let [from, to] = g.links.ends(edge);
                        let (near, far) = match direction {
                            Direction::Backward => (from, to),
                            Direction::Forward => (to, from),
                        };
                        assert_eq!(near, node as u32);
                        let through = tree.cost(far) + g.links.cost(edge);
                        assert!((through - cost).abs() < 1e-9);
                    }
                }
            }
        }
    }

    #[test]
    fn alternatives_guided_by_a_tree_cost_what_unguided_searches_find() {
        let g = random_graph(400, 2400, 5);
        for (s, t) in [(0u32, 9u32), (3, 250), (120, 7), (0, 399)] {
            let main = g.cheapest(s, t, &[]).expect("connected");
            let into = build(&g.links, (t, Direction::Backward));
            let out_of = build(&g.links, (s, Direction::Forward));
            for banned in &main.steps {
                let unguided = g.cheapest(s, t, &[*banned]).map(|p| p.cost);
                for (direction, tree) in
                    [(Direction::Backward, &into), (Direction::Forward, &out_of)]
                {
                    let guided = g.guided(s, t, *banned, direction, tree);
                    if let Some(plan) = &guided {
                        assert!(!plan.steps.contains(banned));
                        let (end, cost) = walk(&g, s as usize, plan);
                        assert_eq!(end, g.pages()[t as usize].page_id);
                        assert!((cost - plan.cost).abs() < 1e-9);
                    }
                    match (guided.map(|p| p.cost), unguided) {
                        (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{s}->{t}: {a} vs {b}"),
                        (None, None) => {}
                        (a, b) => {
                            panic!("{s}->{t} avoiding {banned}: guided {a:?}, unguided {b:?}")
                        }
                    }
                }
            }
        }
    }

    fn page_id(g: &AppGraph, slot: usize) -> String {
        g.pages()[slot].page_id.clone()
    }

    #[test]
    fn a_big_app_asks_its_owner_for_trees_and_searches_directly_meanwhile() {
        let mut g = random_graph(2000, ASKER_BUILDS_UP_TO + 2000, 3);
        let woken = Arc::new(AtomicUsize::new(0));
        let counter = woken.clone();
        g.routes.defer(TreeWanted(Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })));
        let (from, goal) = (page_id(&g, 10), page_id(&g, 1500));
        let best = g.plan_fresh(&from, &goal, 100).unwrap();
        for _ in 0..3 {
            assert_eq!(g.plan(&from, &goal, 100).unwrap(), best);
        }
        let stats = g.route_cache_stats();
        assert_eq!((stats.trees, stats.wanted, stats.hits), (0, 1, 0));
        assert_eq!(woken.load(Ordering::SeqCst), 1, "woken once for one tree");
        assert!(g.build_wanted_tree());
        assert!(!g.build_wanted_tree(), "one tree was wanted");
        let other = page_id(&g, 77);
        assert_eq!(
            g.plan(&other, &goal, 100).unwrap().cost,
            g.plan_fresh(&other, &goal, 100).unwrap().cost
        );
        let stats = g.route_cache_stats();
        assert_eq!((stats.trees, stats.wanted, stats.hits), (1, 0, 1));
    }

    #[test]
    fn a_small_app_builds_its_trees_itself_and_only_the_home_page_grows_one_as_a_start() {
        let mut g = random_graph(300, 1500, 4);
        g.routes.defer(TreeWanted(Arc::new(|| {
            panic!("a small app builds its own trees")
        })));
        let home = g.home_page().unwrap().page_id.clone();
        // Two questions from the home page to different places: a tree out of home.
        g.plan(&home, &page_id(&g, 5), 100).unwrap();
        g.plan(&home, &page_id(&g, 6), 100).unwrap();
        assert_eq!(g.route_cache_stats().trees, 1);
        let goal = page_id(&g, 7);
        let plan = g.plan(&home, &goal, 100).unwrap();
        assert_eq!(plan.cost, g.plan_fresh(&home, &goal, 100).unwrap().cost);
        assert_eq!(g.route_cache_stats().hits, 1);
        // The same from another page grows nothing; a destination asked twice does.
        let elsewhere = page_id(&g, 50);
        g.plan(&elsewhere, &page_id(&g, 8), 100).unwrap();
        g.plan(&elsewhere, &page_id(&g, 9), 100).unwrap();
        assert_eq!(g.route_cache_stats().trees, 1);
        g.plan(&elsewhere, &page_id(&g, 9), 100).unwrap();
        assert_eq!(g.route_cache_stats().trees, 2);
    }
}
