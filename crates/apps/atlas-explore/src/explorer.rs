//! The exploration loop: take the most promising task of any state, bring a tab to its state,
//! act, read the page, and record what it led to.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use atlas_api::learning::{ReportTransitionRequest, ReportedAction};
use atlas_api::pages::{AddPageRequest, UiHierarchy};
use atlas_api::tools;
use atlas_api::versions::{RecordAppVersionRequest, VersionSource};
use atlas_client::{CallError, GraphClient, ToolCaller};
use atlas_model::Widget;
use atlas_store::files::Artifacts;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::ExploreError;
use crate::novelty::Novelty;
use crate::state::{ExploreReport, PageFiles, ReleaseReport, State, Step};
use crate::tasks::{self, Place, Task};
use atlas_browser::BrowserError;
use atlas_browser::browser::{Browser, Tab};
use atlas_browser::network_filter::origin_of;
use atlas_browser::snapshot::{Identity, Snapshot};
use atlas_browser::template::{document_of, normalize_url};
use atlas_browser::write_policy;

/// How to explore a site.
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// The address exploring starts from.
    pub start: String,
    /// The app id the site is kept under (default: its host and port).
    pub app_id: Option<String>,
    /// States at most.
    pub max_states: usize,
    /// Actions from the start at most.
    pub max_depth: u32,
    /// Actions at most.
    pub max_actions: usize,
    /// Seconds at most.
    pub max_seconds: u64,
    /// `--allow-destructive`: the network filter and the destructive words are lifted (never where credentials go).
    pub allow_destructive: bool,
    /// Browser tabs working at once.
    pub tabs: usize,
    /// Origins explored besides the start's.
    pub origins: Vec<String>,
    /// Typed into sign-in forms that post to the start URL's origin, and given to that origin's
    /// HTTP authentication: nowhere else ([`atlas_browser::network_filter`]).
    pub credentials: Option<(String, String)>,
    /// Examples kept of a kind of page (its other items: rows, tickets, help topics), each
    /// with its links to kinds not yet seen queued; the rest of a list's thousand items are
    /// that page, neither states nor explored.
    pub max_similar: usize,
    /// Page loads at most (every document a tab loads: going to a state, following a link,
    /// sending a form).
    pub max_loads: usize,
    /// The Chromium to run.
    pub chromium: PathBuf,
    /// The site's version (`--app-version`); without it the explorer names the versions it
    /// notices (`r1`, then `r2` when a re-exploration finds the site changed).
    pub app_version: Option<String>,
}

/// Told of progress: states known, tasks waiting, actions done.
pub trait Progress: Send + Sync {
    /// The counts now.
    fn update(&self, states: usize, queued: usize, actions: usize);
    /// A new state was found.
    fn state(&self, name: &str, url: &str);
    /// A re-exploration found a known page `changed` or `gone`.
    fn release(&self, _change: &str, _name: &str, _url: &str) {}
}

/// The graph, as every client reaches it: its tools by name.
pub type Graph = Arc<dyn ToolCaller + Send + Sync>;

/// What an earlier exploration found, checked on the first tab before the queue is taken up,
/// when the site was explored to its end before (a new release, or the same site again): it
/// marks what is the same, changed or gone, and queues what to act on.
///
/// The crawler knows no more of releases than this: `atlas-explore-release` is one, and imports
/// the crawler, never the other way.
pub trait Recheck: Send + Sync {
    /// Checks the known states of `session` in `tab`.
    fn recheck<'a>(&'a self, session: &'a Session, tab: &'a Tab) -> Rechecking<'a>;
}

/// A [`Recheck`] under way, boxed so the trait can be a trait object.
pub type Rechecking<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<ReleaseReport, ExploreError>> + Send + 'a>,
>;

/// What an exploration keeps between runs (`.atlas/explore.json` among the app's files): the
/// states it found and what it knows of the site's versions.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Saved {
    /// The address exploring started from.
    pub start: String,
    /// The number the next task gets.
    pub next_task: u64,
    /// The states found, the root first.
    pub states: Vec<State>,
    /// The version of the site the states were last explored in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many versions the explorer named itself (`r1`, `r2`, …).
    #[serde(default)]
    pub noticed: u32,
    /// The last run ended (rather than being stopped): the next one re-explores.
    #[serde(default)]
    pub ended: bool,
    /// The forms and buttons queued so far, by what they do ([`crate::tasks::task_key`]):
    /// a form the site shows on many pages (a search in the header) is filled once, and a
    /// button it shows on many pages (a menu, "collapse all") clicked once, not once a page —
    /// else every page would have its twin with the menu open.
    #[serde(default, alias = "forms")]
    pub site_wide: std::collections::BTreeSet<String>,
}

impl Saved {
    /// The states the site has now: `--max-states` bounds them, and what a release removed
    /// (kept, marked gone) is not the site's any more.
    fn live_states(&self) -> usize {
        self.states.iter().filter(|s| !s.gone).count()
    }
}

impl Frontier {
    /// The state a page is: the one of its fingerprint, else a near-duplicate at its address
    /// (same title, forms, selection and headings; most links shared), else the state of its
    /// kind at another address (the same path and modes, an element structure mostly the
    /// same: [`atlas_browser::template::kind_of`]). At one address headings tell screens apart (a panel
    /// swapped in); across addresses of one route they name the item, not the page.
    pub fn find(&self, page: &Identity) -> Option<usize> {
        let states = &self.saved.states;
        states
            .iter()
            .position(|s| s.fingerprint == page.fingerprint)
            .or_else(|| {
                states.iter().position(|s| {
                    s.key == page.key && atlas_browser::snapshot::same_screen(&s.links, &page.links)
                })
            })
            .or_else(|| {
                let kind = atlas_browser::template::kind_of(&page.route);
                states.iter().position(|s| {
                    atlas_browser::template::kind_of(&s.route) == kind
                        && normalize_url(&s.url) != page.url
                        && atlas_browser::template::alike(&s.shape, &page.shape)
                            >= atlas_browser::template::SAME_KIND
                })
            })
    }

    /// The state the tab is at: the one a page is, when the page is at that state's own
    /// address (at an example's, the state's elements may not be there).
    pub fn at(&self, page: &Identity) -> Option<usize> {
        self.find(page)
            .filter(|&i| normalize_url(&self.saved.states[i].url) == page.url)
    }

    /// What tells how new a task's target is ([`Novelty`]).
    fn novelty(&self, max_similar: usize) -> Novelty<'_> {
        Novelty::new(self.known_routes(), &self.saved.states, max_similar)
    }

    /// The routes whose pages are known: the states', and those a task already led to from
    /// another state — a link to one address does the same from every page, so a target that
    /// proved a file, a download or a page that never loads is not tried again from each.
    fn known_routes(&self) -> HashSet<&str> {
        self.saved
            .states
            .iter()
            .map(|s| s.route.as_str())
            .chain(self.tried.iter().map(String::as_str))
            .collect()
    }
}

/// What a tab does next.
enum Next {
    Task(usize, Box<Task>),
    /// Nothing to take now (another tab's task may still find states).
    Empty,
    /// A budget is spent.
    Stop,
}

/// What one run knows and has left to do: the saved states, the queue and the run's counts.
pub struct Frontier {
    /// The states and versions, as saved.
    pub saved: Saved,
    /// Pending tasks, by state index.
    pub queue: Vec<(usize, Task)>,
    actions: usize,
    failed: usize,
    transitions: usize,
    new_states: usize,
    /// Documents the tabs loaded.
    loads: usize,
    /// The routes tasks of this run led to, whatever they found ([`Frontier::known_routes`]).
    tried: HashSet<String>,
    stop: Option<String>,
}

/// One exploration of one site: its options, the graph and files it writes to, and its frontier,
/// shared by the tabs that work on it.
pub struct Session {
    graph: Graph,
    artifacts: Arc<dyn Artifacts>,
    /// How to explore.
    pub options: ExploreOptions,
    /// The app the site is kept under.
    pub app_id: String,
    /// The start URL's origin: the only one credentials go to.
    start_origin: String,
    origins: Vec<String>,
    /// What the run knows and has left to do.
    pub frontier: Mutex<Frontier>,
    /// Serialises creating states, so two tabs finding one state make it once.
    creating: tokio::sync::Mutex<()>,
    started: Instant,
    browser_time: Mutex<Duration>,
    /// Time spent in Atlas's own work (the graph's tools, the files): what the benchmark
    /// measures against the browser's.
    pub atlas_time: Mutex<Duration>,
    /// Told of progress.
    pub progress: Arc<dyn Progress>,
}

/// Where the frontier is kept among the app's files.
const SAVED: &str = ".atlas/explore.json";

impl Session {
    /// Calls the graph's tools from the blocking pool (a client may wait on the network).
    pub async fn graph<R: Send + 'static>(
        &self,
        call: impl FnOnce(GraphClient<'_>) -> Result<R, CallError> + Send + 'static,
    ) -> Result<R, ExploreError> {
        let graph = self.graph.clone();
        tokio::task::spawn_blocking(move || call(GraphClient::new(&*graph)))
            .await?
            .map_err(ExploreError::Graph)
    }

    /// What a sign-in's password field gets: the credentials' password, else a test value.
    pub fn password(&self) -> String {
        self.options.credentials.as_ref().map_or_else(
            || atlas_browser::test_values::TEST_PASSWORD.to_string(),
            |(_, p)| p.clone(),
        )
    }

    /// Whether an address is on an origin being explored.
    pub fn in_scope(&self, url: &str) -> bool {
        self.origins.contains(&origin_of(url))
    }

    /// Does browser work, counting its time as the browser's.
    pub async fn timed_browser<T>(&self, work: impl std::future::Future<Output = T>) -> T {
        let t = Instant::now();
        let out = work.await;
        *self.browser_time.lock() += t.elapsed();
        out
    }

    /// What `add_page` is told of the page a tab shows, as the state `name` (the root when
    /// `root`), seen in `version`.
    pub fn page_request(
        &self,
        snap: &Snapshot,
        name: &str,
        fingerprint: &str,
        root: bool,
        version: Option<String>,
    ) -> AddPageRequest {
        AddPageRequest {
            app_id: self.app_id.clone(),
            page_name: name.to_string(),
            page_type: Some(page_type(snap, root).into()),
            description: Some(summary(snap)),
            intents: Vec::new(),
            ui_hierarchy: Some(UiHierarchy {
                widgets: widgets(snap),
                ..Default::default()
            }),
            url: Some(snap.url.clone()),
            url_template: atlas_browser::template::item_address(&snap.url),
            dom_fingerprint: Some(fingerprint.to_string()),
            app_version: version,
            title: Some(snap.title.clone()),
        }
    }

    /// The version of the site this run's writes are in.
    pub fn version(&self) -> Option<String> {
        self.frontier.lock().saved.version.clone()
    }

    /// Names a first exploration's version, before its first page is written, and says where
    /// the name came from (which `add_page` cannot tell): given by the user, else named by the
    /// start page ([`atlas_browser::site_version`]), else the first the explorer names.
    fn name_first_version(&self, start: &Snapshot) -> VersionSource {
        let mut f = self.frontier.lock();
        if f.saved.version.is_some() {
            return VersionSource::User;
        }
        if let Some(named) = start.version_hints.version() {
            f.saved.version = Some(named);
            return VersionSource::Site;
        }
        f.saved.noticed = 1;
        f.saved.version = Some(atlas_model::versions::noticed_version(1));
        VersionSource::Noticed
    }

    /// Saves the frontier's states among the app's files, for the next run.
    pub fn persist(&self, frontier: &Frontier) -> Result<(), ExploreError> {
        let bytes = serde_json::to_vec_pretty(&frontier.saved).map_err(std::io::Error::other)?;
        self.artifacts
            .app_files(&self.app_id)?
            .write(SAVED, &bytes)?;
        Ok(())
    }

    fn budget_left(&self, frontier: &Frontier) -> Option<String> {
        if frontier.actions >= self.options.max_actions {
            return Some(format!("max-actions {}", self.options.max_actions));
        }
        if self.started.elapsed() >= Duration::from_secs(self.options.max_seconds) {
            return Some(format!("max-seconds {}", self.options.max_seconds));
        }
        if frontier.saved.live_states() >= self.options.max_states {
            return Some(format!("max-states {}", self.options.max_states));
        }
        if frontier.loads >= self.options.max_loads {
            return Some(format!("max-loads {}", self.options.max_loads));
        }
        None
    }

    /// Counts the documents a tab loaded since it showed document `before`.
    pub(crate) fn count_loads(&self, tab: &Tab, before: u64) {
        let loaded = tab.document().saturating_sub(before);
        self.frontier.lock().loads += usize::try_from(loaded).unwrap_or(usize::MAX);
    }

    /// The most promising pending task, moved into `processing/`: the likeliest to show what
    /// the map lacks ([`Novelty`]); then breadth first: the shallowest state, its highest priority,
    /// the oldest.
    fn take(&self) -> Result<Next, ExploreError> {
        let mut f = self.frontier.lock();
        if let Some(why) = self.budget_left(&f) {
            f.stop.get_or_insert(why.clone());
            return Ok(Next::Stop);
        }
        let allow = self.options.allow_destructive;
        let novelty = f.novelty(self.options.max_similar);
        let depth = |s: &usize| std::cmp::Reverse(f.saved.states[*s].depth);
        let best = f
            .queue
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| allow || !t.is_destructive)
            .max_by_key(|(_, (s, t))| {
                (
                    novelty.of(t),
                    depth(s),
                    t.priority,
                    std::cmp::Reverse(&t.id),
                )
            })
            .map(|(i, _)| i);
        drop(novelty);
        let Some(i) = best else {
            return Ok(Next::Empty);
        };
        let (state, mut task) = f.queue.swap_remove(i);
        task.status = "processing".into();
        tasks::move_task(
            f.saved.states[state].files.get()?,
            &task,
            Place::Todos,
            Place::Processing,
        )?;
        f.actions += 1;
        Ok(Next::Task(state, Box::new(task)))
    }

    /// A task done: where it led counts as known ([`Frontier::known_routes`]).
    fn finish(
        &self,
        state: usize,
        task: Task,
        ok: bool,
        outcome: String,
    ) -> Result<(), ExploreError> {
        self.close(state, task, ok, outcome, true)
    }

    /// A task failed before its action was done (its state not reached, its element not there):
    /// it says nothing of where it leads, which another state's task may still try.
    fn finish_untried(
        &self,
        state: usize,
        task: Task,
        outcome: String,
    ) -> Result<(), ExploreError> {
        self.close(state, task, false, outcome, false)
    }

    fn close(
        &self,
        state: usize,
        mut task: Task,
        ok: bool,
        outcome: String,
        tried: bool,
    ) -> Result<(), ExploreError> {
        let t = Instant::now();
        let files = self.frontier.lock().saved.states[state].files.clone();
        task.status = if ok { "completed" } else { "failed" }.into();
        task.outcome = Some(outcome);
        tasks::move_task(files.get()?, &task, Place::Processing, Place::Completed)?;
        let mut f = self.frontier.lock();
        if !ok {
            f.failed += 1;
        }
        if let Some(route) = task.leads_to.filter(|_| tried) {
            f.tried.insert(route);
        }
        self.progress
            .update(f.saved.states.len(), f.queue.len(), f.actions);
        drop(f);
        *self.atlas_time.lock() += t.elapsed();
        Ok(())
    }

    /// Writes a state the site just showed: its page (through the service), its folder's files
    /// and its tasks; or finds it known. Returns its index and whether it is new.
    async fn state_for(
        &self,
        tab: &Tab,
        snap: &Snapshot,
        identity: Identity,
        parent: Option<usize>,
        step: Option<Step>,
    ) -> Result<Option<(usize, bool)>, ExploreError> {
        let _one = self.creating.lock().await;
        let (depth, path, known_names) = {
            let f = self.frontier.lock();
            if let Some(i) = f.find(&identity) {
                drop(f);
                self.note_example(i, snap, &identity)?;
                return Ok(Some((i, false)));
            }
            if f.saved.live_states() >= self.options.max_states {
                return Ok(None);
            }
            let (depth, mut path) = match parent {
                Some(p) => (f.saved.states[p].depth + 1, f.saved.states[p].path.clone()),
                None => (0, Vec::new()),
            };
            path.extend(step);
            let names: Vec<String> = f.saved.states.iter().map(|s| s.name.clone()).collect();
            (depth, path, names)
        };
        if depth > self.options.max_depth {
            return Ok(None);
        }
        let screenshot = self.timed_browser(tab.screenshot()).await?;
        let t = Instant::now();
        let name = if parent.is_none() {
            "Root".to_string()
        } else if known_names.contains(&snap.name()) || snap.name() == "Root" {
            format!("{} {}", snap.name(), &identity.fingerprint[..8])
        } else {
            snap.name()
        };
        let mut intents: Vec<String> = Vec::new();
        for text in std::iter::once(&snap.title).chain(&snap.headings) {
            let text = text.trim();
            if !text.is_empty() && text.chars().count() <= 80 && !intents.iter().any(|i| i == text)
            {
                intents.push(text.to_string());
            }
        }
        intents.truncate(4);
        let request = AddPageRequest {
            intents,
            ..self.page_request(
                snap,
                &name,
                &identity.fingerprint,
                parent.is_none(),
                self.version(),
            )
        };
        let added = self.graph(move |g| g.add_page(&request)).await?;
        let files = self.artifacts.page_files(&self.app_id, &added.page_id)?;
        files.write_soon(atlas_store::SCREENSHOT, &screenshot)?;
        let dom = serde_json::to_vec_pretty(snap).map_err(std::io::Error::other)?;
        files.write_soon("dom.json", &dom)?;
        let template = snap.template();
        let mut f = self.frontier.lock();
        let expanded = depth < self.options.max_depth;
        let state = State {
            page_id: added.page_id.clone(),
            name: name.clone(),
            dir: self.artifacts.page_folder(&self.app_id, &added.page_id),
            files: PageFiles::new(files.clone()),
            fingerprint: identity.fingerprint,
            key: identity.key,
            links: identity.links,
            template,
            route: identity.route,
            shape: identity.shape,
            examples: Vec::new(),
            url: snap.url.clone(),
            depth,
            path,
            expanded,
            edges: Vec::new(),
            gone: false,
        };
        crate::artifacts::write_nav_script(&state, &f.saved.start)?;
        crate::artifacts::write_test_ideas(&state, snap)?;
        if expanded {
            let mut found = candidate_tasks(snap, self, &mut f.saved.next_task);
            let site_wide = &mut f.saved.site_wide;
            found.retain(|t| !is_site_wide(t) || site_wide.insert(crate::tasks::task_key(t)));
            for task in &found {
                tasks::add(&*files, task)?;
            }
            let index = f.saved.states.len();
            f.queue.extend(found.into_iter().map(|t| (index, t)));
        }
        let index = f.saved.states.len();
        f.saved.states.push(state);
        f.new_states += 1;
        self.persist(&f)?;
        self.progress
            .update(f.saved.states.len(), f.queue.len(), f.actions);
        drop(f);
        self.progress.state(&name, &snap.url);
        *self.atlas_time.lock() += t.elapsed();
        Ok(Some((index, true)))
    }

    /// Keeps a page found to be state `index` at another address as an example of its kind
    /// (at most `--max-similar`, named in the state's `examples.json`), and queues the
    /// example's links to kinds of page not yet known or queued: an item of a list may link
    /// where its first did not.
    fn note_example(
        &self,
        index: usize,
        snap: &Snapshot,
        identity: &Identity,
    ) -> Result<(), ExploreError> {
        let mut f = self.frontier.lock();
        let state = &f.saved.states[index];
        let known = normalize_url(&state.url) == identity.url
            || state
                .examples
                .iter()
                .any(|e| normalize_url(&e.url) == identity.url);
        if known || state.examples.len() >= self.options.max_similar {
            return Ok(());
        }
        let expanded = state.expanded;
        let files = state.files.clone();
        let state = &mut f.saved.states[index];
        state.examples.push(crate::state::Example {
            url: snap.url.clone(),
            title: snap.title.clone(),
        });
        let listed = serde_json::to_vec_pretty(&state.examples).map_err(std::io::Error::other)?;
        files
            .get()?
            .write_soon(crate::artifacts::EXAMPLES, &listed)?;
        if expanded {
            let mut next = f.saved.next_task;
            let offered = candidate_tasks(snap, self, &mut next);
            let known = f.known_routes();
            let queued: HashSet<&str> = f
                .queue
                .iter()
                .filter_map(|(_, t)| t.leads_to.as_deref())
                .collect();
            let links: Vec<Task> = offered
                .into_iter()
                .filter(|t| t.action == "click" && !t.is_destructive)
                .filter(|t| {
                    t.leads_to
                        .as_deref()
                        .is_some_and(|r| !known.contains(r) && !queued.contains(r))
                })
                .map(|t| by_address(t, &snap.url))
                .collect();
            drop((known, queued));
            f.saved.next_task = next;
            for task in &links {
                tasks::add(files.get()?, task)?;
            }
            f.queue.extend(links.into_iter().map(|t| (index, t)));
        }
        self.persist(&f)
    }

    /// Brings the tab to a state: its address, else the way from the root.
    async fn reach(
        &self,
        tab: &Tab,
        index: usize,
        at: &mut Option<usize>,
    ) -> Result<bool, ExploreError> {
        if *at == Some(index) {
            return Ok(true);
        }
        for (url, steps) in self.ways_to(index) {
            *at = None;
            // A step whose element is gone leaves the tab where it is, which may still be it.
            self.walk(tab, &url, &steps).await?;
            let snap = self.timed_browser(tab.snapshot()).await?;
            *at = self.frontier.lock().at(&snap.identity());
            if *at == Some(index) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The ways to state `index`: its address, then its way from the start (when it has one).
    pub fn ways_to(&self, index: usize) -> Vec<(String, Vec<Step>)> {
        let f = self.frontier.lock();
        let state = &f.saved.states[index];
        let mut ways = vec![(state.url.clone(), Vec::new())];
        if !state.path.is_empty() {
            ways.push((f.saved.start.clone(), state.path.clone()));
        }
        ways
    }

    /// Goes to `url` and takes `steps` there; false when a step's element is not on the page.
    pub async fn walk(&self, tab: &Tab, url: &str, steps: &[Step]) -> Result<bool, ExploreError> {
        self.timed_browser(tab.goto(url)).await?;
        let password = self.password();
        for step in steps {
            let done = perform(
                tab,
                &step.action,
                &step.selector,
                &step.parameters,
                &password,
            );
            if !self.timed_browser(done).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Requests the network filter refused while a task ran: the task is recorded again as a destructive
    /// candidate in its state's tasks, with what it tried to send (done only with
    /// `--allow-destructive`).
    fn record_refused(
        &self,
        index: usize,
        task: &Task,
        refused: &[atlas_browser::network_filter::Refused],
    ) -> Result<(), ExploreError> {
        let sent: Vec<String> = refused
            .iter()
            .take(5)
            .map(|r| format!("{} {}", r.method, r.url))
            .collect();
        let mut f = self.frontier.lock();
        if f.queue.iter().any(|(s, t)| {
            *s == index
                && t.is_destructive
                && t.selector == task.selector
                && t.action == task.action
        }) {
            return Ok(());
        }
        let candidate = Task {
            priority: 1,
            reason: format!(
                "{} sends {} (refused while exploring)",
                task.reason,
                sent.join(", ")
            ),
            is_destructive: true,
            ..task.clone()
        };
        self.queue_new(&mut f, index, candidate)
    }

    /// A form whose first fill ended on `ended` (an error, its own page again, a page with
    /// nothing new to follow) is queued once more with other values, said in its reason; a
    /// sign-in, or a fill that was already the second, is not.
    fn refill(&self, index: usize, task: &Task, ended: &str) -> Result<(), ExploreError> {
        let p = &task.parameters;
        if task.action != "type" || p["sign_in"] == true || p["refill"] == true {
            return Ok(());
        }
        let mut parameters = p.clone();
        let mut changed = false;
        for field in parameters["fields"].as_array_mut().into_iter().flatten() {
            if field["prefilled"] == true {
                continue;
            }
            let other = atlas_browser::test_values::other_test_value(
                field["type"].as_str().unwrap_or_default(),
                field["name"].as_str().unwrap_or_default(),
            );
            if let Some(other) = other.filter(|o| field["value"].as_str() != Some(o)) {
                field["value"] = other.into();
                changed = true;
            }
        }
        if !changed {
            return Ok(());
        }
        parameters["refill"] = true.into();
        let again = Task {
            parameters,
            reason: format!(
                "{} again with other values: its first fill ({}) ended on {ended}",
                task.reason, task.id
            ),
            ..task.clone()
        };
        self.queue_new(&mut self.frontier.lock(), index, again)
    }

    /// Queues a task made from another (a refill, a refused action recorded) under a new id,
    /// pending, in state `index`'s files and the queue.
    fn queue_new(&self, f: &mut Frontier, index: usize, task: Task) -> Result<(), ExploreError> {
        f.saved.next_task += 1;
        let task = Task {
            id: format!("task_{:03}", f.saved.next_task),
            created_at: atlas_model::now_rfc3339(),
            status: "pending".into(),
            outcome: None,
            ..task
        };
        tasks::add(f.saved.states[index].files.get()?, &task)?;
        f.queue.push((index, task));
        self.persist(f)
    }

    /// Takes a task, counting the documents it loaded.
    async fn run_task(
        &self,
        tab: &Tab,
        at: &mut Option<usize>,
        index: usize,
        task: Task,
    ) -> Result<(), ExploreError> {
        let before = tab.document();
        let done = self.take_task(tab, at, index, task).await;
        self.count_loads(tab, before);
        done
    }

    /// A link from a state to another document (or a link of one of its examples), taken from
    /// wherever the tab is: following it loads what clicking it on its state would, and saves
    /// the load of going back there.
    fn followed_directly<'t>(&self, task: &'t Task, index: usize) -> Option<&'t str> {
        if task.action == "navigate" {
            return task.parameters["url"].as_str();
        }
        let href = task.parameters["href"].as_str()?;
        let state_url = self.frontier.lock().saved.states[index].url.clone();
        (task.action == "click"
            && (href.starts_with("http://") || href.starts_with("https://"))
            && self.in_scope(href)
            && document_of(href) != document_of(&state_url))
        .then_some(href)
    }

    async fn take_task(
        &self,
        tab: &Tab,
        at: &mut Option<usize>,
        index: usize,
        task: Task,
    ) -> Result<(), ExploreError> {
        let direct = self
            .followed_directly(&task, index)
            .filter(|_| *at != Some(index));
        if direct.is_none() {
            match self.reach(tab, index, at).await {
                Ok(true) => {}
                Ok(false) => {
                    return self.finish_untried(
                        index,
                        task,
                        "the state could not be reached again".into(),
                    );
                }
                // A page that never loads, a script that never answers: this task fails, not
                // the run.
                Err(ExploreError::Browser(BrowserError::Failed(e))) => {
                    *at = None;
                    return self.finish_untried(index, task, e);
                }
                Err(e) => return Err(e),
            }
        }
        // What the page sent while being reached is the state's own doing, not this action's.
        let _ = tab.refused();
        let document = tab.document();
        let acted: Result<bool, ExploreError> = match direct {
            Some(href) => Ok(self.timed_browser(tab.follow(href)).await.map(|()| true)?),
            None => {
                self.timed_browser(perform(
                    tab,
                    &task.action,
                    &task.selector,
                    &task.parameters,
                    &self.password(),
                ))
                .await
            }
        };
        let refused = tab.refused_by(document);
        if !refused.is_empty() {
            self.record_refused(index, &task, &refused)?;
        }
        match acted {
            Ok(true) => {}
            Ok(false) => {
                return self.finish_untried(index, task, "the element is not on the page".into());
            }
            Err(e) => {
                *at = None;
                self.refill(index, &task, "an error")?;
                return self.finish(index, task, false, e.to_string());
            }
        }
        let snap = match self.timed_browser(tab.snapshot()).await {
            Ok(snap) => snap,
            Err(e) => {
                *at = None;
                return self.finish(index, task, false, e.to_string());
            }
        };
        if !self.in_scope(&snap.url) {
            *at = None;
            return self.finish(
                index,
                task,
                true,
                format!("left the explored origins: {}", snap.url),
            );
        }
        if !snap.is_page() {
            *at = None;
            return self.finish(
                index,
                task,
                true,
                format!("led to a file, not a page ({})", snap.content_type),
            );
        }
        let identity = snap.identity();
        if self.frontier.lock().find(&identity) == Some(index) {
            *at = self.frontier.lock().at(&identity);
            self.note_example(index, &snap, &identity)?;
            self.refill(index, &task, "the page it was sent from")?;
            let outcome = if *at == Some(index) {
                "the page did not change".into()
            } else {
                format!("showed its own kind of page at {}", snap.url)
            };
            return self.finish(index, task, true, outcome);
        }
        let shows_nothing_new = {
            let f = self.frontier.lock();
            let before = &f.saved.states[index].links;
            identity
                .links
                .iter()
                .all(|l| before.binary_search(l).is_ok())
        };
        if shows_nothing_new {
            self.refill(index, &task, "a page with nothing new to follow")?;
        }
        let step = Step::of(&task);
        *at = None;
        let identity_of_to = identity.clone();
        let found = match self
            .state_for(tab, &snap, identity, Some(index), Some(step))
            .await
        {
            Ok(found) => found,
            // The new page could not be pictured or read: this task fails, not the run.
            Err(ExploreError::Browser(BrowserError::Failed(e))) => {
                return self.finish(index, task, false, e);
            }
            Err(e) => return Err(e),
        };
        let Some((to, new)) = found else {
            return self.finish(
                index,
                task,
                true,
                "a new state beyond the budget or depth".into(),
            );
        };
        *at = self.frontier.lock().at(&identity_of_to);
        let to_name = self.record_transition(index, &task, to, new).await?;
        self.finish(index, task, true, format!("led to {to_name}"))
    }

    /// Tells Atlas what the task did: the transition from state `from`'s page to state `to`'s,
    /// and (when `to` was seen before) the visit to its page; the state keeps the edge. Answers
    /// `to`'s name.
    async fn record_transition(
        &self,
        from: usize,
        task: &Task,
        to: usize,
        new: bool,
    ) -> Result<String, ExploreError> {
        let t = Instant::now();
        let (from_page, to_page, to_name) = {
            let f = self.frontier.lock();
            (
                f.saved.states[from].page_id.clone(),
                f.saved.states[to].page_id.clone(),
                f.saved.states[to].name.clone(),
            )
        };
        // Seen again: its page counts the visit. Sent with the transition, the two writes share
        // one journal fsync.
        let visit = async {
            if new {
                return Ok(());
            }
            let request = AddPageRequest {
                app_id: self.app_id.clone(),
                page_name: to_name.clone(),
                app_version: self.version(),
                ..Default::default()
            };
            self.graph(move |g| g.add_page(&request)).await.map(|_| ())
        };
        let request = ReportTransitionRequest {
            from_page,
            action: reported_action(task),
            to_page: to_page.clone(),
            success: true,
            latency_ms: None,
            reason: None,
            app_id: Some(self.app_id.clone()),
            intent: None,
            session_id: None,
            app_version: self.version(),
        };
        let transition = self.graph(move |g| g.report_transition(&request));
        let (visited, reported) = tokio::join!(visit, transition);
        visited?;
        let reported = reported?;
        let mut f = self.frontier.lock();
        f.transitions += 1;
        let key = crate::tasks::task_key(task);
        let edges = &mut f.saved.states[from].edges;
        edges.retain(|e| e.key != key);
        edges.push(crate::state::Edge {
            key,
            to: to_page,
            transition_id: reported.transition_id,
        });
        drop(f);
        *self.atlas_time.lock() += t.elapsed();
        Ok(to_name)
    }
}

/// A link task of an example of a state, taken by its address (its element is on the example,
/// not on the state's own page the way to it ends on).
fn by_address(mut task: Task, example: &str) -> Task {
    let href = task.parameters["href"].clone();
    task.action = "navigate".into();
    task.parameters["url"] = href;
    task.reason = format!("{} (on {example})", task.reason);
    task
}

/// A task's action as Atlas takes it: the element by its selector, its label, the values typed.
fn reported_action(task: &Task) -> ReportedAction {
    let label = task.parameters["label"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ReportedAction {
        action_type: match task.action.as_str() {
            "type" => "input".into(),
            other => other.into(),
        },
        widget: Some(task.selector.clone()),
        widget_text: (!label.is_empty()).then_some(label),
        widget_xpath: None,
        input_text: task.parameters["fields"].as_array().map(|f| {
            f.iter()
                .filter_map(|v| v["value"].as_str().filter(|v| !v.is_empty()))
                .collect::<Vec<_>>()
                .join(" ")
        }),
        checked: None,
    }
}

/// Does a task's action in the tab; false when its element is not there.
pub async fn perform(
    tab: &Tab,
    action: &str,
    selector: &str,
    parameters: &serde_json::Value,
    password: &str,
) -> Result<bool, ExploreError> {
    match action {
        "click" => Ok(tab.click(selector).await?),
        "scroll" => Ok(tab.scroll().await?),
        "navigate" => {
            tab.goto(parameters["url"].as_str().unwrap_or(selector))
                .await?;
            Ok(true)
        }
        "type" => {
            // The credentials' password only into the sign-in to the start origin, and only
            // that post let through the network filter.
            let sign_in = parameters["sign_in"] == true;
            for field in parameters["fields"].as_array().into_iter().flatten() {
                if field["prefilled"] == true {
                    continue;
                }
                let sel = field["selector"].as_str().unwrap_or_default();
                let kind = field["type"].as_str().unwrap_or("text");
                let value = match field["secret"] == true {
                    true if sign_in => password,
                    true => atlas_browser::test_values::TEST_PASSWORD,
                    false => field["value"].as_str().unwrap_or_default(),
                };
                if !tab.fill(sel, kind, value).await? {
                    return Ok(false);
                }
            }
            if sign_in && let Some(action) = parameters["action"].as_str() {
                tab.allow_sign_in(action);
            }
            let sent = tab.submit(selector, parameters["submit"].as_str()).await;
            tab.end_sign_in();
            Ok(sent?)
        }
        other => Err(ExploreError::Invalid(format!("unknown action {other}"))),
    }
}

fn page_type(snap: &Snapshot, root: bool) -> &'static str {
    if root {
        "home"
    } else if snap.forms.iter().any(write_policy::is_search) {
        "search"
    } else if !snap.forms.is_empty() {
        "form"
    } else if snap.links.len() > 15 {
        "list"
    } else {
        "detail"
    }
}

fn summary(snap: &Snapshot) -> String {
    let text: String = snap.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text: String = text.chars().take(160).collect();
    let forms = snap.forms.len();
    format!(
        "{}{}{}",
        snap.title.trim(),
        if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        },
        if forms > 0 {
            format!(" ({forms} form(s))")
        } else {
            String::new()
        }
    )
}

/// What a person can act on, as the graph's widgets (id = CSS selector).
fn widgets(snap: &Snapshot) -> Vec<Widget> {
    let mut out: Vec<Widget> = Vec::new();
    let mut push = |id: &str, text: &str, kind: &str| {
        out.push(Widget {
            id: id.to_string(),
            text: text.to_string(),
            widget_type: kind.to_string(),
            ..Default::default()
        })
    };
    for l in &snap.links {
        push(&l.selector, &l.text, "a");
    }
    for b in &snap.buttons {
        push(&b.selector, &b.text, "button");
    }
    for f in &snap.forms {
        for x in &f.fields {
            push(&x.selector, &x.label, &format!("input:{}", x.kind));
        }
        if let Some(s) = &f.submit {
            push(&s.selector, &s.text, "button");
        }
    }
    out.truncate(80);
    out
}

/// The state's candidate actions as tasks: forms first (unexplored input is where a site hides
/// its states), then navigation, then other links and buttons, then scrolling.
pub fn candidate_tasks(snap: &Snapshot, shared: &Session, next: &mut u64) -> Vec<Task> {
    let now = atlas_model::now_rfc3339();
    let mut out = Vec::new();
    let mut make = |selector: &str,
                    action: &str,
                    parameters: serde_json::Value,
                    priority: u8,
                    reason: String,
                    destructive: bool,
                    leads_to: Option<String>| {
        *next += 1;
        out.push(Task {
            leads_to,
            id: format!("task_{:03}", *next),
            selector: selector.to_string(),
            action: action.to_string(),
            parameters,
            priority: if destructive { 1 } else { priority },
            reason,
            is_destructive: destructive,
            created_at: now.clone(),
            status: "pending".into(),
            outcome: None,
        });
    };
    for form in &snap.forms {
        if form.fields.is_empty() && form.submit.is_none() {
            continue;
        }
        let sign_in = write_policy::is_sign_in(form, &shared.start_origin);
        // The user name too goes only into the sign-in to the start origin.
        let credentials = shared
            .options
            .credentials
            .as_ref()
            .filter(|_| sign_in)
            .map(|(u, p)| (u.as_str(), p.as_str()));
        let fields: Vec<serde_json::Value> = form
            .fields
            .iter()
            .map(|f| {
                // A password is typed from memory, never written down (tasks, scripts, graph).
                if f.kind == "password" {
                    serde_json::json!({"selector": f.selector, "type": f.kind, "name": f.name, "value": "", "secret": true})
                } else if f.prefilled {
                    serde_json::json!({"selector": f.selector, "type": f.kind, "name": f.name, "value": "", "prefilled": true})
                } else {
                    serde_json::json!({"selector": f.selector, "type": f.kind, "name": f.name, "value": atlas_browser::test_values::test_value(&f.kind, &f.name, f.min.as_deref(), credentials)})
                }
            })
            .collect();
        let what = if sign_in {
            "sign in"
        } else if write_policy::is_search(form) {
            "search"
        } else {
            "fill and send the form"
        };
        let label = form
            .submit
            .as_ref()
            .map(|s| s.text.clone())
            .unwrap_or_else(|| what.to_string());
        make(
            &form.selector,
            "type",
            serde_json::json!({"fields": fields, "submit": form.submit.as_ref().map(|s| s.selector.clone()), "label": label,
                "action": form.action, "sign_in": sign_in}),
            if sign_in { 9 } else { 8 },
            format!(
                "{what} ({} field(s), {})",
                form.fields.len(),
                form.method.to_uppercase()
            ),
            write_policy::form_is_destructive(form, &shared.start_origin),
            form_route(form),
        );
    }
    let mut seen_targets: Vec<String> = Vec::new();
    for link in &snap.links {
        let target = normalize_url(&link.href);
        if !shared.in_scope(&link.href)
            || link.href.starts_with("javascript:") && link.text.is_empty()
        {
            continue;
        }
        if seen_targets.contains(&target) || atlas_browser::template::names_a_file(&link.href) {
            continue;
        }
        seen_targets.push(target.clone());
        let here = normalize_url(&snap.url) == target;
        if here {
            continue;
        }
        make(
            &link.selector,
            "click",
            serde_json::json!({"label": link.text, "href": link.href}),
            if link.in_nav { 7 } else { 5 },
            format!("link \"{}\" to {}", link.text, target),
            write_policy::link_is_destructive(link),
            Some(atlas_browser::template::route_template(&link.href)),
        );
    }
    for button in &snap.buttons {
        make(
            &button.selector,
            "click",
            serde_json::json!({"label": button.text}),
            6,
            format!("button \"{}\"", button.text),
            write_policy::button_is_destructive(button),
            None,
        );
    }
    if snap.scroll_height > snap.viewport_height.saturating_mul(3) / 2 {
        make(
            "html",
            "scroll",
            serde_json::json!({"label": "scroll"}),
            2,
            "the page is longer than the window".into(),
            false,
            None,
        );
    }
    out
}

/// A task that does the same on every page that offers it: a form, known by what it sends,
/// or a button (no link), known by its place and label — a page's own buttons have places of
/// their own.
fn is_site_wide(task: &Task) -> bool {
    task.action == "type" || task.action == "click" && task.parameters["href"].is_null()
}

/// Where a form sent by GET leads: its address with its fields as the query; a form sent
/// otherwise may lead anywhere.
fn form_route(form: &atlas_browser::snapshot::Form) -> Option<String> {
    if !form.method.eq_ignore_ascii_case("get") {
        return None;
    }
    let mut url = url::Url::parse(&form.action).ok()?;
    url.query_pairs_mut()
        .extend_pairs(form.fields.iter().map(|f| (f.name.as_str(), "")));
    Some(atlas_browser::template::route_template(url.as_str()))
}

/// The address an exploration starts from, if it is an http(s) one.
pub fn start_address(raw: &str) -> Result<url::Url, ExploreError> {
    let start = url::Url::parse(raw).map_err(|source| ExploreError::Address {
        address: raw.to_string(),
        source,
    })?;
    if !matches!(start.scheme(), "http" | "https") {
        return Err(ExploreError::Invalid(format!(
            "{raw} is not an http(s) address"
        )));
    }
    Ok(start)
}

/// Explores the site from `options.start` into the graph (pages and transitions through its
/// tools) and the pages' files (`artifacts`), resuming a stopped exploration of the same site;
/// a site explored to its end before is checked by `recheck` first.
/// The caller checkpoints the graph afterwards if its store wants it.
pub async fn explore(
    graph: Graph,
    artifacts: Arc<dyn Artifacts>,
    options: ExploreOptions,
    progress: Arc<dyn Progress>,
    recheck: &dyn Recheck,
) -> Result<ExploreReport, ExploreError> {
    let start = start_address(&options.start)?;
    let app_id = options.app_id.clone().unwrap_or_else(|| {
        let host = start.host_str().unwrap_or("site");
        match start.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        }
    });
    let start_origin = origin_of(start.as_str());
    let mut origins = vec![start_origin.clone()];
    origins.extend(options.origins.iter().map(|o| origin_of(o)));
    let shared = Arc::new(Session {
        graph,
        artifacts,
        app_id: app_id.clone(),
        start_origin: start_origin.clone(),
        origins,
        frontier: Mutex::new(Frontier {
            saved: Saved {
                start: start.to_string(),
                ..Default::default()
            },
            queue: Vec::new(),
            actions: 0,
            failed: 0,
            transitions: 0,
            new_states: 0,
            loads: 0,
            tried: HashSet::new(),
            stop: None,
        }),
        creating: tokio::sync::Mutex::new(()),
        started: Instant::now(),
        browser_time: Mutex::new(Duration::ZERO),
        atlas_time: Mutex::new(Duration::ZERO),
        progress,
        options,
    });
    let resumed = resume(&shared)?;
    let release = {
        let mut f = shared.frontier.lock();
        let given = shared.options.app_version.clone();
        if f.saved.states.is_empty() {
            // A first exploration: the version given, else (once the start page is read) the
            // one the site names, else the first the explorer names.
            f.saved.version = given;
            false
        } else {
            crate::state::is_release(f.saved.version.as_deref(), f.saved.ended, given.as_deref())
        }
    };
    let policy = atlas_browser::network_filter::NetworkPolicy {
        start_origin,
        credentials: shared.options.credentials.clone(),
        allow_writes: shared.options.allow_destructive,
    };
    let browser = shared
        .timed_browser(Browser::launch(&shared.options.chromium, policy))
        .await?;
    let outcome = run(&shared, &browser, release.then_some(recheck)).await;
    browser.close().await;
    finish_run(&shared, resumed, outcome?)
}

/// Reads a stopped run's states and puts its unfinished tasks back in the queue.
fn resume(shared: &Session) -> Result<usize, ExploreError> {
    let Some(bytes) = shared.artifacts.app_files(&shared.app_id)?.read(SAVED)? else {
        return Ok(0);
    };
    let mut saved: Saved =
        serde_json::from_slice(&bytes).map_err(|source| ExploreError::Saved {
            app: shared.app_id.clone(),
            source,
        })?;
    let mut f = shared.frontier.lock();
    let mut resumed = 0;
    for (i, state) in saved.states.iter_mut().enumerate() {
        let files = shared
            .artifacts
            .page_files(&shared.app_id, &state.page_id)?;
        resumed += tasks::recover(&*files)?;
        for task in tasks::read(&*files, Place::Todos)? {
            f.queue.push((i, task));
        }
        migrate(state, &*files)?;
        state.files = PageFiles::new(files);
    }
    f.saved = saved;
    Ok(resumed)
}

/// A state saved before kinds of page were kept gets its route template from its address and
/// its shape from its `dom.json`, so that a folder explored before goes on by kinds.
fn migrate(state: &mut State, files: &dyn atlas_store::files::Files) -> Result<(), ExploreError> {
    if state.route.is_empty() {
        state.route = atlas_browser::template::route_template(&state.url);
    }
    if state.shape.is_empty()
        && let Some(dom) = files.read("dom.json")?
        && let Ok(snap) = serde_json::from_slice::<Snapshot>(&dom)
    {
        state.shape = atlas_browser::template::shape(&snap.structure);
    }
    Ok(())
}

/// Explores: a release's known states checked first (by `recheck`), then every tab on the queue.
async fn run(
    shared: &Arc<Session>,
    browser: &Browser,
    recheck: Option<&dyn Recheck>,
) -> Result<Option<ReleaseReport>, ExploreError> {
    let first = shared.timed_browser(browser.tab()).await?;
    let before = first.document();
    let mut at = None;
    let checked = match recheck {
        Some(recheck) => Some(recheck.recheck(shared, &first).await?),
        None => None,
    };
    if shared.frontier.lock().saved.states.is_empty() {
        let start = shared.frontier.lock().saved.start.clone();
        shared.timed_browser(first.goto(&start)).await?;
        let snap = shared.timed_browser(first.snapshot()).await?;
        if !shared.in_scope(&snap.url) {
            return Err(ExploreError::Invalid(format!(
                "{start} sends the browser to {} (another origin); start there, or allow it with --origin",
                snap.url
            )));
        }
        let source = shared.name_first_version(&snap);
        shared
            .state_for(&first, &snap, snap.identity(), None, None)
            .await?;
        at = Some(0);
        let mark = RecordAppVersionRequest {
            app_id: shared.app_id.clone(),
            version: shared.version().unwrap_or_default(),
            source: Some(source),
            ..Default::default()
        };
        shared
            .graph(move |g| g.ask::<tools::RecordAppVersion>(&mark))
            .await?;
    }
    shared.count_loads(&first, before);
    let mut tabs = vec![first];
    for _ in 1..shared.options.tabs.max(1) {
        tabs.push(shared.timed_browser(browser.tab()).await?);
    }
    let busy = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for (k, tab) in tabs.into_iter().enumerate() {
        let shared = shared.clone();
        let busy = busy.clone();
        let mut at = if k == 0 { at } else { None };
        workers.spawn(async move {
            loop {
                if !tab.filter_alive() {
                    return Err(ExploreError::Browser(BrowserError::Failed(
                        "the network filter stopped: the browser sends nothing more".into(),
                    )));
                }
                let (state, task) = match shared.take()? {
                    Next::Task(state, task) => (state, task),
                    Next::Stop => break,
                    Next::Empty if busy.load(std::sync::atomic::Ordering::SeqCst) == 0 => break,
                    Next::Empty => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                busy.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let done = shared.run_task(&tab, &mut at, state, *task).await;
                busy.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                done?;
            }
            tab.close().await;
            Ok::<(), ExploreError>(())
        });
    }
    let mut first_error = None;
    while let Some(done) = workers.join_next().await {
        match done {
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(ExploreError::Stopped(e));
            }
            Ok(Ok(())) => {}
        }
    }
    first_error.map_or(Ok(checked), Err)
}

fn finish_run(
    shared: &Session,
    resumed: usize,
    release: Option<ReleaseReport>,
) -> Result<ExploreReport, ExploreError> {
    let t = Instant::now();
    let mut f = shared.frontier.lock();
    f.saved.ended = true;
    shared.persist(&f)?;
    let destructive = f.queue.iter().filter(|(_, t)| t.is_destructive).count();
    let mut report = ExploreReport {
        app_id: shared.app_id.clone(),
        tabs: shared.options.tabs.max(1),
        states: f.saved.states.len(),
        new_states: f.new_states,
        transitions: f.transitions,
        actions: f.actions,
        loads: f.loads,
        kinds: f.saved.states.iter().filter(|s| !s.gone).count(),
        examples: f.saved.states.iter().map(|s| s.examples.len()).sum(),
        failed_actions: f.failed,
        destructive_recorded: if shared.options.allow_destructive {
            0
        } else {
            destructive
        },
        pending_tasks: f.queue.len(),
        resumed_tasks: resumed,
        seconds: shared.started.elapsed().as_secs_f64(),
        browser_seconds: shared.browser_time.lock().as_secs_f64(),
        atlas_seconds: 0.0,
        stopped_by: f
            .stop
            .clone()
            .unwrap_or_else(|| "nothing left to explore".into()),
        version: f.saved.version.clone().unwrap_or_default(),
        release,
    };
    crate::artifacts::write_reports(&f.saved.states, &report)?;
    *shared.atlas_time.lock() += t.elapsed();
    report.atlas_seconds = shared.atlas_time.lock().as_secs_f64();
    Ok(report)
}
