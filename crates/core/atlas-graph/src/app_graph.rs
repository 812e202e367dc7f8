//! Apps, their pages and transitions, indexed for planning.

use std::collections::{HashMap, VecDeque};

use atlas_model::{AnswerKind, App, Counts, Intent, Page, Tally, Trace, Transition, Trust};

use crate::cost::link_cost;
use crate::id_index::IdIndex;
use crate::links::{Direction, Links};
use crate::route_cache::{CacheStats, RouteCache, TreeWanted};
use crate::traces::{MAX_TRACES_PER_APP, Traces};
use crate::transitions::{IdsFull, TransitionRef, TransitionTable};

/// Why a change cannot be made to the graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    /// No app of that id.
    #[error("unknown app {0}")]
    UnknownApp(String),
    /// No page of that id.
    #[error("unknown page {0}")]
    UnknownPage(String),
    /// No transition of that id.
    #[error("unknown transition {0}")]
    UnknownTransition(String),
    /// An app whose transitions' ids fill the 4 GiB one app keeps them in.
    #[error("app {0} holds as many transitions as one app can")]
    TooManyTransitions(String),
    /// A transition from a page of one app to a page of another.
    #[error("a transition cannot join two apps ({from_app} -> {to_app})")]
    CrossApp {
        /// The app of the page it starts from.
        from_app: String,
        /// The app of the page it leads to.
        to_app: String,
    },
}

/// One app's graph.
#[derive(Debug, Clone)]
pub struct AppGraph {
    /// The app itself: its id, home page and times.
    pub app: App,
    /// The planner's view: page `i` is `pages[i]`, link `j` is transition `j`.
    pub(crate) links: Links,
    pub(crate) pages: Vec<Page>,
    pub(crate) page_index: IdIndex,
    pub(crate) transitions: TransitionTable,
    pub(crate) transition_index: IdIndex,
    pub(crate) intents: HashMap<String, Intent>,
    pub(crate) traces: Traces,
    pub(crate) routes: RouteCache,
}

impl AppGraph {
    /// An app with no pages yet.
    pub fn new(app: App) -> AppGraph {
        AppGraph {
            app,
            links: Links::default(),
            pages: Vec::new(),
            page_index: IdIndex::default(),
            transitions: TransitionTable::default(),
            transition_index: IdIndex::default(),
            intents: HashMap::new(),
            traces: Traces::default(),
            routes: RouteCache::default(),
        }
    }

    /// The app's id.
    pub fn app_id(&self) -> &str {
        &self.app.app_id
    }

    /// Every page, in the order they were added (a page's index is stable).
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// Every transition, in the order they were added (a plan's steps are their slots).
    pub fn transitions(&self) -> impl ExactSizeIterator<Item = TransitionRef<'_>> + '_ {
        (0..self.transitions.len() as u32).map(|slot| TransitionRef::new(self, slot))
    }

    /// How many transitions it has.
    pub fn transition_count(&self) -> usize {
        self.transitions.len()
    }

    /// The transition in `slot` (a plan's step); panics on a slot the app does not have, as
    /// indexing a slice would.
    pub fn transition_at(&self, slot: usize) -> TransitionRef<'_> {
        assert!(
            slot < self.transitions.len(),
            "no transition in slot {slot}"
        );
        TransitionRef::new(self, slot as u32)
    }

    /// Every registered intent.
    pub fn intents(&self) -> impl Iterator<Item = &Intent> {
        self.intents.values()
    }

    /// Every remembered session.
    pub fn traces(&self) -> impl Iterator<Item = &Trace> {
        self.traces.values()
    }

    /// The page of that id.
    pub fn page(&self, page_id: &str) -> Option<&Page> {
        self.node(page_id).map(|ix| &self.pages[ix as usize])
    }

    /// The transition of that id.
    pub fn transition(&self, transition_id: &str) -> Option<TransitionRef<'_>> {
        self.transition_slot(transition_id)
            .map(|slot| TransitionRef::new(self, slot))
    }

    /// The intent of that id.
    pub fn intent(&self, intent_id: &str) -> Option<&Intent> {
        self.intents.get(intent_id)
    }

    /// The remembered session of that id.
    pub fn trace(&self, trace_id: &str) -> Option<&Trace> {
        self.traces.get(trace_id)
    }

    /// The checks of one kind of answer its remembered sessions on `version` hold (`None`: the
    /// sessions whose version nobody reported).
    pub fn trust(&self, version: Option<&str>, kind: AnswerKind) -> Tally {
        self.traces.trust(version, kind)
    }

    /// Its latest [`atlas_model::BREAKER_WINDOW`] checks of one kind of answer on `version`:
    /// what the breaker reads.
    pub fn recent(&self, version: Option<&str>, kind: AnswerKind) -> Tally {
        self.traces.recent(version, kind)
    }

    /// Whether the latest check of `kind` on `page` was wrong.
    pub fn doubted(&self, page: &str, kind: AnswerKind) -> bool {
        self.traces.doubted(page, kind)
    }

    /// The checks its remembered sessions hold, per version and kind of answer.
    pub fn trust_all(&self) -> impl Iterator<Item = (Option<&str>, AnswerKind, Tally)> + '_ {
        self.traces.trust_all()
    }

    /// The checks its remembered sessions hold per kind of answer, all versions together (in
    /// [`AnswerKind::ALL`]'s order).
    fn checks_per_kind(&self) -> [Tally; AnswerKind::ALL.len()] {
        let mut per_kind = [Tally::default(); AnswerKind::ALL.len()];
        for (_, kind, tally) in self.trust_all() {
            per_kind[kind as usize].join(tally);
        }
        per_kind
    }

    pub(crate) fn node(&self, page_id: &str) -> Option<u32> {
        self.page_index
            .get(page_id, |slot| &self.pages[slot as usize].page_id)
    }

    fn transition_slot(&self, transition_id: &str) -> Option<u32> {
        self.transition_index
            .get(transition_id, |slot| self.transitions.id(slot))
    }

    pub(crate) fn page_at(&self, node: u32) -> &Page {
        &self.pages[node as usize]
    }

    /// How often remembered routes answered planning questions.
    pub fn route_cache_stats(&self) -> CacheStats {
        self.routes.stats()
    }

    /// Builds the oldest route tree wished for (see [`Graph::defer_route_trees`]); false when
    /// none is.
    pub fn build_wanted_tree(&self) -> bool {
        self.routes.build_wanted(&self.links)
    }

    /// The page an agent starts from: the app's home page, else its first page.
    pub fn home_page(&self) -> Option<&Page> {
        self.app
            .home_page
            .as_deref()
            .and_then(|id| self.page(id))
            .or_else(|| self.pages.first())
    }

    /// The ordinal the next new page gets (it names the page's folder).
    pub fn next_ordinal(&self) -> u32 {
        self.pages.iter().map(|p| p.ordinal + 1).max().unwrap_or(0)
    }

    /// Inserts or replaces a page; returns whether it was new.
    pub fn upsert_page(&mut self, page: Page) -> bool {
        if let Some(ix) = self.node(&page.page_id) {
            self.pages[ix as usize] = page;
            return false;
        }
        let ix = self.links.add_node();
        self.pages.push(page);
        let pages = &self.pages;
        self.page_index
            .insert(pages[ix as usize].page_id.as_str(), ix, |slot| {
                pages[slot as usize].page_id.as_str()
            });
        true
    }

    /// Inserts or replaces a transition between two pages of this app; returns whether it was new.
    pub fn upsert_transition(&mut self, transition: &Transition) -> Result<bool, GraphError> {
        let cost = link_cost(transition.counts(), transition.gone_in.is_some());
        if let Some(ix) = self.transition_slot(&transition.transition_id) {
            let old = self.links.set_cost(ix, cost);
            if old != cost {
                self.routes.edge_changed(&self.links, ix, old, cost);
            }
            self.transitions.replace(ix, transition);
            return Ok(false);
        }
        let from = self
            .node(&transition.from_page)
            .ok_or_else(|| GraphError::UnknownPage(transition.from_page.clone()))?;
        let to = self
            .node(&transition.to_page)
            .ok_or_else(|| GraphError::UnknownPage(transition.to_page.clone()))?;
        let ix = self
            .transitions
            .push(transition)
            .map_err(|IdsFull| GraphError::TooManyTransitions(self.app.app_id.clone()))?;
        let edge = self.links.add_edge(from, to, cost);
        debug_assert_eq!(ix, edge, "a transition's slot is its link's number");
        let transitions = &self.transitions;
        self.transition_index
            .insert(transition.transition_id.as_str(), ix, |slot| {
                transitions.id(slot)
            });
        self.routes.edge_added();
        Ok(true)
    }

    /// Adds a report's counters to a transition that exists, in place (see
    /// [`Graph::add_counts`]); false when the app has no such transition.
    pub fn add_counts(
        &mut self,
        transition_id: &str,
        added: Counts,
        reason: Option<&str>,
        at: i64,
    ) -> bool {
        let Some(ix) = self.transition_slot(transition_id) else {
            return false;
        };
        self.transitions.add_counts(ix, added, reason, at);
        let gone = self.transitions.gone_in(ix).is_some();
        let cost = link_cost(self.transitions.counts(ix), gone);
        let old = self.links.set_cost(ix, cost);
        if old != cost {
            self.routes.edge_changed(&self.links, ix, old, cost);
        }
        true
    }

    /// Adds or replaces an intent; true when it is new.
    pub fn upsert_intent(&mut self, intent: Intent) -> bool {
        self.intents
            .insert(intent.intent_id.clone(), intent)
            .is_none()
    }

    /// Adds or replaces a remembered session; true when it is new. Past
    /// [`MAX_TRACES_PER_APP`] the oldest are forgotten (see `traces.rs`).
    pub fn upsert_trace(&mut self, trace: Trace) -> bool {
        self.traces.put(trace, MAX_TRACES_PER_APP)
    }

    /// Changes a remembered session in place (made by `make` when the app has none of that id),
    /// within the same bound as [`AppGraph::upsert_trace`].
    pub fn change_trace(
        &mut self,
        trace_id: &str,
        make: impl FnOnce() -> Trace,
        change: impl FnOnce(&mut Trace),
    ) {
        self.traces
            .change(trace_id, make, change, MAX_TRACES_PER_APP);
    }

    /// Outgoing transitions of a page, newest first.
    pub fn outgoing<'a>(&'a self, page_id: &str) -> impl Iterator<Item = TransitionRef<'a>> + 'a {
        self.linked(page_id, Direction::Forward)
    }

    /// The transitions from one page to another, newest first: found by the pages' numbers,
    /// with no page id compared along the way.
    pub fn between<'a>(
        &'a self,
        from: &str,
        to: &str,
    ) -> impl Iterator<Item = TransitionRef<'a>> + 'a {
        let ends = self.node(from).zip(self.node(to));
        ends.into_iter().flat_map(move |(from, to)| {
            self.links
                .of(from, Direction::Forward)
                .filter(move |l| l.node == to)
                .map(move |l| TransitionRef::new(self, l.edge))
        })
    }

    /// Incoming transitions of a page, newest first.
    pub fn incoming<'a>(&'a self, page_id: &str) -> impl Iterator<Item = TransitionRef<'a>> + 'a {
        self.linked(page_id, Direction::Backward)
    }

    fn linked<'a>(
        &'a self,
        page_id: &str,
        direction: Direction,
    ) -> impl Iterator<Item = TransitionRef<'a>> + 'a {
        let node = self.node(page_id);
        node.into_iter().flat_map(move |n| {
            self.links
                .of(n, direction)
                .map(move |l| TransitionRef::new(self, l.edge))
        })
    }

    /// The latest of its transitions' `updated_at`, compared as text (as a file's reader would);
    /// none without transitions. Each time is written out once at most, not once a transition.
    pub fn latest_transition_update(&self) -> Option<String> {
        self.transitions.latest_update()
    }

    /// Room for `pages` more pages and `transitions` more transitions, made at once (an app
    /// loaded whole knows its size, and growing by doubling would leave up to half unused).
    pub fn reserve(&mut self, pages: usize, transitions: usize) {
        self.pages.reserve_exact(pages);
        let page_list = &self.pages;
        self.page_index
            .reserve(pages, |slot| page_list[slot as usize].page_id.as_str());
        self.transitions.reserve(transitions);
        let table = &self.transitions;
        self.transition_index
            .reserve(transitions, |slot| table.id(slot));
        self.links.reserve(pages, transitions);
    }

    /// Fewest steps from `from` to every page it reaches (breadth-first), by transitions not gone.
    pub fn hop_distances(&self, from: &str) -> HashMap<&str, u32> {
        let mut dist = HashMap::new();
        let Some(start) = self.node(from) else {
            return dist;
        };
        let mut seen = vec![false; self.links.node_count()];
        let mut queue = VecDeque::from([(start, 0u32)]);
        seen[start as usize] = true;
        while let Some((node, d)) = queue.pop_front() {
            dist.insert(self.page_at(node).page_id.as_str(), d);
            for next in self.links.outgoing(node).filter(|l| l.cost.is_finite()) {
                if !seen[next.node as usize] {
                    seen[next.node as usize] = true;
                    queue.push_back((next.node, d + 1));
                }
            }
        }
        dist
    }

    /// For each page reachable from `from`: its breadth-first parent and the transition that
    /// reached it (what seed 001's `parent_id` / `source_action` / `depth` describe).
    pub fn bfs_tree(&self, from: &str) -> HashMap<String, (u32, Option<(String, String)>)> {
        let mut tree = HashMap::new();
        let Some(start) = self.node(from) else {
            return tree;
        };
        let mut queue = VecDeque::from([start]);
        tree.insert(self.page_at(start).page_id.clone(), (0, None));
        while let Some(node) = queue.pop_front() {
            let depth = tree[&self.page_at(node).page_id].0;
            for link in self.links.outgoing(node) {
                let next = self.page_at(link.node).page_id.clone();
                if let std::collections::hash_map::Entry::Vacant(e) = tree.entry(next) {
                    let t = TransitionRef::new(self, link.edge);
                    e.insert((
                        depth + 1,
                        Some((t.from_page().to_string(), t.action().label())),
                    ));
                    queue.push_back(link.node);
                }
            }
        }
        tree
    }
}

/// Every app Atlas knows, and which app each page belongs to.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    apps: HashMap<String, AppGraph>,
    page_app: HashMap<String, String>,
    /// Bumped on every change; lets readers cache derived values.
    version: u64,
    /// Who builds the route trees of big apps, when not their askers.
    trees_wanted: Option<TreeWanted>,
    /// Every app's checks, all versions, per kind of answer (in [`AnswerKind::ALL`]'s order):
    /// the prior each app's trust borrows from the others, kept as traces change so that asking
    /// for an app's trust reads no other app.
    checks: [Tally; AnswerKind::ALL.len()],
}

impl Graph {
    /// A graph of no apps.
    pub fn new() -> Graph {
        Graph::default()
    }

    /// From now on, a route tree of an app bigger than [`crate::ASKER_BUILDS_UP_TO`] transitions
    /// is not built by the question that wants it: `wanted` is called, and whoever it wakes calls
    /// [`Graph::build_wanted_tree`] (under a read lock, off any request's path). Until then the
    /// planner searches directly, so no request waits for a tree.
    pub fn defer_route_trees(&mut self, wanted: TreeWanted) {
        for app in self.apps.values_mut() {
            app.routes.defer(wanted.clone());
        }
        self.trees_wanted = Some(wanted);
    }

    /// Builds one route tree some app wishes for; false when none does. One at a time, so
    /// whoever calls it under a read lock can let writers in between trees.
    pub fn build_wanted_tree(&self) -> bool {
        self.apps.values().any(AppGraph::build_wanted_tree)
    }

    /// A number that grows with every change.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Every app.
    pub fn apps(&self) -> impl Iterator<Item = &AppGraph> {
        self.apps.values()
    }

    /// The app of that id.
    pub fn app(&self, app_id: &str) -> Option<&AppGraph> {
        self.apps.get(app_id)
    }

    /// How far the graph may be trusted on one kind of answer on an app's `version`, given on
    /// `page`: the app's own record on that version, with its other versions' record and every
    /// other app's on that kind lending what [`atlas_model::Tally::bound`] lets them; doubted
    /// where the latest check of that kind on that page was wrong.
    pub fn trust(
        &self,
        app_id: &str,
        version: Option<&str>,
        kind: AnswerKind,
        page: &str,
    ) -> Trust {
        let app = self.apps.get(app_id);
        let own = app.map(|a| a.trust(version, kind)).unwrap_or_default();
        let mut earlier = Tally::default();
        for (v, k, tally) in app.into_iter().flat_map(AppGraph::trust_all) {
            if k == kind && v != version {
                earlier.join(tally);
            }
        }
        let mut others = self.checks[kind as usize];
        if let Some(app) = app {
            others.remove(app.checks_per_kind()[kind as usize]);
        }
        let mut trust = Trust::of(kind, own, earlier, others);
        trust.doubted = app.is_some_and(|a| a.doubted(page, kind));
        trust.recent = app.map(|a| a.recent(version, kind)).unwrap_or_default();
        trust.tripped = trust.recent.trips();
        trust
    }

    /// The app a page belongs to.
    pub fn app_of_page(&self, page_id: &str) -> Option<&AppGraph> {
        self.page_app.get(page_id).and_then(|a| self.apps.get(a))
    }

    /// A page of any app, by id.
    pub fn page(&self, page_id: &str) -> Option<&Page> {
        self.app_of_page(page_id).and_then(|a| a.page(page_id))
    }

    /// Adds an app, or replaces its record (its pages stay); true when it is new.
    pub fn upsert_app(&mut self, app: App) -> bool {
        self.version += 1;
        match self.apps.get_mut(&app.app_id) {
            Some(existing) => {
                existing.app = app;
                false
            }
            None => {
                let mut graph = AppGraph::new(app);
                if let Some(wanted) = &self.trees_wanted {
                    graph.routes.defer(wanted.clone());
                }
                self.apps.insert(graph.app.app_id.clone(), graph);
                true
            }
        }
    }

    fn app_mut(&mut self, app_id: &str) -> Result<&mut AppGraph, GraphError> {
        self.version += 1;
        self.apps
            .get_mut(app_id)
            .ok_or_else(|| GraphError::UnknownApp(app_id.to_string()))
    }

    /// Room in an app for `pages` more pages and `transitions` more transitions, made at once
    /// (see [`AppGraph::reserve`]); nothing for an app it does not have.
    pub fn reserve(&mut self, app_id: &str, pages: usize, transitions: usize) {
        if let Some(app) = self.apps.get_mut(app_id) {
            app.reserve(pages, transitions);
        }
    }

    /// Gives back the room an app's growth left unused, once it is loaded whole.
    pub fn shrink_to_fit(&mut self, app_id: &str) {
        if let Some(app) = self.apps.get_mut(app_id) {
            app.links.shrink_to_fit();
        }
    }

    /// Adds an app read whole (from an image, see [`AppGraph::read_image`]); false, changing
    /// nothing, when the graph has that app or one of its pages already.
    pub fn insert_app_graph(&mut self, mut graph: AppGraph) -> bool {
        if self.apps.contains_key(graph.app_id())
            || graph
                .pages
                .iter()
                .any(|p| self.page_app.contains_key(&p.page_id))
        {
            return false;
        }
        self.version += 1;
        if let Some(wanted) = &self.trees_wanted {
            graph.routes.defer(wanted.clone());
        }
        let app_id = graph.app_id().to_string();
        for page in &graph.pages {
            self.page_app.insert(page.page_id.clone(), app_id.clone());
        }
        self.count_checks(Default::default(), graph.checks_per_kind());
        self.apps.insert(app_id, graph);
        true
    }

    /// Keeps every app's checks per kind as an app's go from `before` to `after`.
    fn count_checks(
        &mut self,
        before: [Tally; AnswerKind::ALL.len()],
        after: [Tally; AnswerKind::ALL.len()],
    ) {
        for ((total, before), after) in self.checks.iter_mut().zip(before).zip(after) {
            total.remove(before);
            total.join(after);
        }
    }

    /// Adds or replaces a page in its app; true when it is new.
    pub fn upsert_page(&mut self, page: Page) -> Result<bool, GraphError> {
        let page_id = page.page_id.clone();
        let app_id = page.app_id.clone();
        let created = self.app_mut(&app_id)?.upsert_page(page);
        self.page_app.insert(page_id, app_id);
        Ok(created)
    }

    /// Adds or replaces a transition between two pages of one app; true when it is new.
    pub fn upsert_transition(&mut self, transition: &Transition) -> Result<bool, GraphError> {
        let app_of = |page: &String| {
            self.page_app
                .get(page)
                .ok_or_else(|| GraphError::UnknownPage(page.clone()))
        };
        let (from_app, to_app) = (app_of(&transition.from_page)?, app_of(&transition.to_page)?);
        if from_app != to_app {
            return Err(GraphError::CrossApp {
                from_app: from_app.clone(),
                to_app: to_app.clone(),
            });
        }
        self.version += 1;
        self.apps
            .get_mut(from_app)
            .ok_or_else(|| GraphError::UnknownApp(from_app.clone()))?
            .upsert_transition(transition)
    }

    /// Adds a report's counters to a transition of `app_id` that exists, in place: what a report
    /// changes, without the transition made whole and read back. Its `reason`, when given,
    /// replaces the transition's; `at` (seconds since 1970) becomes its `updated_at`.
    pub fn add_counts(
        &mut self,
        app_id: &str,
        transition_id: &str,
        added: Counts,
        reason: Option<&str>,
        at: i64,
    ) -> Result<(), GraphError> {
        if self
            .app_mut(app_id)?
            .add_counts(transition_id, added, reason, at)
        {
            Ok(())
        } else {
            Err(GraphError::UnknownTransition(transition_id.to_string()))
        }
    }

    /// Adds or replaces an intent in its app; true when it is new.
    pub fn upsert_intent(&mut self, intent: Intent) -> Result<bool, GraphError> {
        let app_id = intent.app_id.clone();
        Ok(self.app_mut(&app_id)?.upsert_intent(intent))
    }

    /// Adds or replaces a remembered session in its app; true when it is new.
    pub fn upsert_trace(&mut self, trace: Trace) -> Result<bool, GraphError> {
        let app = self.app_mut(&trace.app_id)?;
        let before = app.checks_per_kind();
        let new = app.upsert_trace(trace);
        let after = app.checks_per_kind();
        self.count_checks(before, after);
        Ok(new)
    }

    /// [`AppGraph::change_trace`] in the app of that id.
    pub fn change_trace(
        &mut self,
        app_id: &str,
        trace_id: &str,
        make: impl FnOnce() -> Trace,
        change: impl FnOnce(&mut Trace),
    ) -> Result<(), GraphError> {
        let app = self.app_mut(app_id)?;
        let before = app.checks_per_kind();
        app.change_trace(trace_id, make, change);
        let after = app.checks_per_kind();
        self.count_checks(before, after);
        Ok(())
    }

    /// Pages of every app.
    pub fn page_count(&self) -> usize {
        self.apps.values().map(|a| a.pages.len()).sum()
    }

    /// Transitions of every app.
    pub fn transition_count(&self) -> usize {
        self.apps.values().map(|a| a.transition_count()).sum()
    }
}
