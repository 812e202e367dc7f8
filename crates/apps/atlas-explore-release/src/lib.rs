//! Re-exploring a site the folder already knows: a new release (or the same site again) checked
//! from what is known before anything new is tried.
//!
//! Each known state is brought up by its address, else by its way from the start, and read once:
//! the same screen (its fingerprint, or a near-duplicate of it) is the same page, unchanged; a
//! screen at the same address that is no other known state is the same page, changed (it keeps
//! its identity, and what it shows now is the release's face of it); a state no way reaches any
//! more is gone (marked, never deleted). Then only what is new is acted on: an action still on
//! its page that sends what it sent (the same link target, the same form's fields and address:
//! [`atlas_explore::tasks::task_key`]) is not taken again and its transition is marked seen,
//! while every action a page did not have before is queued as in a first exploration. Each
//! state's recorded way is then kept, repaired or replaced ([`ways`]).
//!
//! This crate is the crawler's [`Recheck`] ([`ReleaseCheck`]): it imports the crawler
//! (`atlas-explore`) and works on its [`Session`]; the crawler knows nothing of it.
//!
//! Key design decision: **the known states are the plan.** A first exploration spends most of its
//! time acting on pages to learn where each action leads; on a release most of that is unchanged,
//! and one visit a page tells which pages are. The actions are what cost, and only the new ones
//! and those of changed pages are taken.

use std::collections::{HashMap, HashSet};

use atlas_api::tools;
use atlas_api::versions::{RecordAppVersionRequest, VersionSource};
use atlas_browser::BrowserError;
use atlas_browser::browser::Tab;
use atlas_browser::snapshot::Snapshot;
use atlas_browser::template::normalize_url;
use atlas_explore::tasks::{self, Place, Task, task_key};
use atlas_explore::{
    ExploreError, Recheck, Rechecking, ReleaseReport, Saved, Session, State, candidate_tasks,
    perform,
};

use crate::ways::WayOutcome;

pub mod ways;

/// The release check a re-exploration runs before its queue ([`Recheck`]): pass it to
/// [`atlas_explore::explore`].
#[derive(Debug, Default, Clone, Copy)]
pub struct ReleaseCheck;

impl Recheck for ReleaseCheck {
    fn recheck<'a>(&'a self, session: &'a Session, tab: &'a Tab) -> Rechecking<'a> {
        Box::pin(async move { Release(session).check_release(tab).await })
    }
}

/// A session being checked against the release the site shows now.
struct Release<'a>(&'a Session);

impl std::ops::Deref for Release<'_> {
    type Target = Session;

    fn deref(&self) -> &Session {
        self.0
    }
}

/// What a visit found of a known state.
enum Found {
    Same(Box<Snapshot>),
    /// What it shows now, and its picture.
    Changed(Box<Snapshot>, Option<Vec<u8>>),
    Gone,
}

impl Release<'_> {
    /// Brings up state `index` by its address, else by its way from the start, and says what it
    /// is now.
    /// A state behind a sign-in is first brought up by its way (which signs in: the browser
    /// keeps the session for every later address), since its address alone would show the page
    /// as someone not signed in sees it; `signed_in` says whether a way has signed in already.
    async fn revisit(
        &self,
        tab: &Tab,
        index: usize,
        signed_in: &mut bool,
    ) -> Result<Found, ExploreError> {
        let (state, shares_address) = {
            let f = self.frontier.lock();
            let state = f.saved.states[index].clone();
            let address = normalize_url(&state.url);
            let shares = f
                .saved
                .states
                .iter()
                .enumerate()
                .any(|(i, s)| i != index && !s.gone && normalize_url(&s.url) == address);
            (state, shares)
        };
        let behind_sign_in = state.path.iter().any(|s| s.parameters["sign_in"] == true);
        let mut ways = self.ways_to(index);
        if behind_sign_in && !*signed_in {
            // Signed in as the site asks now (its sign-in form may have moved with the
            // release), else by the way that signed in before.
            *signed_in = self.sign_in_now(tab).await?;
            if !*signed_in {
                ways.reverse();
            }
        }
        for (url, steps) in ways {
            let signs_in = steps.iter().any(|s| s.parameters["sign_in"] == true);
            let reached = match self.walk(tab, &url, &steps).await {
                Ok(true) => self.timed_browser(tab.snapshot()).await,
                // A way that no longer works (an element gone, a page that never loads).
                Ok(false) | Err(ExploreError::Browser(BrowserError::Failed(_))) => continue,
                Err(e) => return Err(e),
            };
            let snap = match reached {
                Ok(snap) => {
                    *signed_in |= signs_in;
                    snap
                }
                Err(BrowserError::Failed(_)) => continue,
                Err(e) => return Err(e.into()),
            };
            if !self.in_scope(&snap.url) {
                continue;
            }
            let identity = snap.identity();
            match self.frontier.lock().find(&identity) {
                Some(i) if i == index => return Ok(Found::Same(Box::new(snap))),
                Some(_) => continue,
                None => {}
            }
            // Another screen at its address, no other known state: the page, changed. Where
            // several states share the address (a single-page app's panels), it must also keep
            // its title, forms, selection and headings.
            let same_address = normalize_url(&snap.url) == normalize_url(&state.url);
            if same_address && (!shares_address || identity.key == state.key) {
                let picture = self.timed_browser(tab.screenshot()).await.ok();
                return Ok(Found::Changed(Box::new(snap), picture));
            }
        }
        Ok(Found::Gone)
    }

    /// Signs in with the credentials through the sign-in form the start page shows now; false
    /// when there is none, or it is not there to fill.
    async fn sign_in_now(&self, tab: &Tab) -> Result<bool, ExploreError> {
        if self.options.credentials.is_none() {
            return Ok(false);
        }
        let start = self.frontier.lock().saved.start.clone();
        let signed = async {
            tab.goto(&start).await?;
            let snap = tab.snapshot().await?;
            let forms = candidate_tasks(&snap, self.0, &mut 0);
            let Some(task) = forms.iter().find(|t| t.parameters["sign_in"] == true) else {
                return Ok(false);
            };
            let p = &task.parameters;
            perform(tab, &task.action, &task.selector, p, &self.password()).await
        };
        match self.timed_browser(signed).await {
            Ok(done) => Ok(done),
            Err(ExploreError::Browser(BrowserError::Failed(_))) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Checks every known state of the site against what it shows now, records the release
    /// (`record_app_version`: what was seen, what is gone), keeps what changed pages show, and
    /// queues the actions to take: those no page of the site sent before from where it is.
    async fn check_release(&self, tab: &Tab) -> Result<ReleaseReport, ExploreError> {
        let found = self.revisit_all(tab).await?;
        let t = std::time::Instant::now();
        let (previous, noticed) = {
            let f = self.frontier.lock();
            (f.saved.version.clone(), f.saved.noticed)
        };
        let states: Vec<State> = self.frontier.lock().saved.states.clone();
        let (version, source) = self.release_version(&states, &found, previous.as_ref(), noticed);
        let mut report = ReleaseReport {
            version: version.clone(),
            previous: previous.clone(),
            ..Default::default()
        };
        let mut mark = RecordAppVersionRequest {
            app_id: self.app_id.clone(),
            version: version.clone(),
            source: Some(source),
            ..Default::default()
        };
        let gone_ids: HashSet<&str> = states
            .iter()
            .zip(&found)
            .filter(|(_, v)| matches!(v, Found::Gone))
            .map(|(s, _)| s.page_id.as_str())
            .collect();
        let reached: Vec<bool> = found.iter().map(|v| !matches!(v, Found::Gone)).collect();
        let mut offered: HashMap<usize, Vec<Task>> = HashMap::new();
        let mut queued: Vec<(usize, Task)> = Vec::new();
        let mut changed_pages: Vec<(usize, Box<Snapshot>, Option<Vec<u8>>)> = Vec::new();
        let mut next_task = self.frontier.lock().saved.next_task;
        for (index, (state, now)) in states.iter().zip(found).enumerate() {
            let snap = match now {
                Found::Gone => {
                    if !state.gone {
                        mark.gone_pages.push(state.page_id.clone());
                        report.gone.push(state.name.clone());
                        self.progress.release("gone", &state.name, &state.url);
                    }
                    continue;
                }
                Found::Same(snap) => {
                    mark.seen_pages.push(state.page_id.clone());
                    report.same += 1;
                    snap
                }
                Found::Changed(snap, picture) => {
                    report.changed.push(state.name.clone());
                    self.progress.release("changed", &state.name, &state.url);
                    changed_pages.push((index, snap.clone(), picture));
                    snap
                }
            };
            if state.expanded {
                let (candidates, new) =
                    self.requeue(state, &snap, &gone_ids, &mut mark, &mut next_task)?;
                offered.insert(index, candidates);
                queued.extend(new.into_iter().map(|task| (index, task)));
            }
        }
        self.graph(move |g| g.ask::<tools::RecordAppVersion>(&mark))
            .await?;
        for (index, snap, picture) in changed_pages {
            self.keep_changed(index, &snap, picture, &version).await?;
        }
        let sign_in = offered
            .get(&0)
            .and_then(|tasks| tasks.iter().find(|t| t.parameters["sign_in"] == true));
        let ways = crate::ways::check(&states, &reached, &offered, sign_in);
        let mut f = self.frontier.lock();
        self.follow_ways(&mut f.saved, ways, &mut report)?;
        f.queue = queued;
        f.saved.next_task = next_task;
        for state in &mut f.saved.states {
            state.gone = gone_ids.contains(state.page_id.as_str());
        }
        if f.saved.version.as_deref() != Some(version.as_str()) {
            if source == VersionSource::Noticed {
                f.saved.noticed += 1;
            }
            f.saved.version = Some(version);
        }
        f.saved.ended = false;
        self.persist(&f)?;
        drop(f);
        *self.atlas_time.lock() += t.elapsed();
        Ok(report)
    }

    /// Every known state visited again, in order (one already gone stays gone, unvisited).
    async fn revisit_all(&self, tab: &Tab) -> Result<Vec<Found>, ExploreError> {
        let count = self.frontier.lock().saved.states.len();
        let mut found = Vec::with_capacity(count);
        let mut signed_in = false;
        for index in 0..count {
            let gone_before = self.frontier.lock().saved.states[index].gone;
            found.push(if gone_before {
                Found::Gone
            } else {
                self.revisit(tab, index, &mut signed_in).await?
            });
        }
        Ok(found)
    }

    /// The release's name and where it comes from: the one given, else the one the site names
    /// (the start page's first), else a new one the graph starts where the site changed, else
    /// the version the states were explored in.
    fn release_version(
        &self,
        states: &[State],
        found: &[Found],
        previous: Option<&String>,
        noticed: u32,
    ) -> (String, VersionSource) {
        let changes = states.iter().zip(found).any(|(s, v)| match v {
            Found::Changed(..) => true,
            Found::Gone => !s.gone,
            Found::Same(_) => false,
        });
        let named = found.iter().find_map(|now| match now {
            Found::Same(snap) | Found::Changed(snap, _) => snap.version_hints.version(),
            Found::Gone => None,
        });
        match (&self.options.app_version, named, previous) {
            (Some(given), _, _) => (given.clone(), VersionSource::User),
            (None, Some(named), _) => (named, VersionSource::Site),
            (None, None, Some(before)) if !changes => (before.clone(), VersionSource::Noticed),
            (None, None, _) => (
                atlas_model::versions::noticed_version(noticed as usize + 1),
                VersionSource::Noticed,
            ),
        }
    }

    /// A state the release still shows, its actions sorted: each transition it had is seen (the
    /// action is still there, and its target not gone) or gone, in `mark`; the actions it offers
    /// now (returned first) and those of them to take (second: none it took before, by what
    /// they send), queued in its folder in place of what was waiting there.
    fn requeue(
        &self,
        state: &State,
        snap: &Snapshot,
        gone_ids: &HashSet<&str>,
        mark: &mut RecordAppVersionRequest,
        next_task: &mut u64,
    ) -> Result<(Vec<Task>, Vec<Task>), ExploreError> {
        let files = state.files.get()?;
        let done: Vec<Task> = tasks::read(files, Place::Completed)?;
        let candidates = candidate_tasks(snap, self.0, next_task);
        let present: HashSet<String> = candidates.iter().map(task_key).collect();
        // An action still there does what it did (its key says what it sends), and where it
        // led is checked on its own; one no longer there is gone with its transition.
        for edge in &state.edges {
            if !present.contains(&edge.key) || gone_ids.contains(edge.to.as_str()) {
                mark.gone_transitions.push(edge.transition_id.clone());
            } else {
                mark.seen_transitions.push(edge.transition_id.clone());
            }
        }
        let known: HashSet<String> = done.iter().map(task_key).collect();
        for old in tasks::read(files, Place::Todos)? {
            tasks::discard(files, Place::Todos, &old.id)?;
        }
        let mut queued = Vec::new();
        for task in &candidates {
            if !known.contains(&task_key(task)) {
                tasks::add(files, task)?;
                queued.push(task.clone());
            }
        }
        Ok((candidates, queued))
    }

    /// Each state's way from the start as the release left it ([`crate::ways::check`]): kept,
    /// repaired or replaced (its nav script written again), or lost; counted in `report`.
    fn follow_ways(
        &self,
        saved: &mut Saved,
        ways: Vec<WayOutcome>,
        report: &mut ReleaseReport,
    ) -> Result<(), ExploreError> {
        for (index, way) in ways.into_iter().enumerate() {
            let state = &mut saved.states[index];
            let path = match way {
                WayOutcome::Kept => {
                    report.ways_kept += 1;
                    continue;
                }
                WayOutcome::Lost => continue,
                WayOutcome::Repaired(path) => {
                    report.ways_repaired.push(state.name.clone());
                    self.progress
                        .release("way repaired", &state.name, &state.url);
                    path
                }
                WayOutcome::Replaced(path) => {
                    report.ways_replaced.push(state.name.clone());
                    self.progress
                        .release("way replaced", &state.name, &state.url);
                    path
                }
            };
            state.path = path;
            atlas_explore::artifacts::write_nav_script(state, &saved.start)?;
        }
        Ok(())
    }

    /// Keeps what a changed page shows now under its known name (its identity), and its state's
    /// fingerprint, so that the next visit finds it the same.
    async fn keep_changed(
        &self,
        index: usize,
        snap: &Snapshot,
        picture: Option<Vec<u8>>,
        version: &str,
    ) -> Result<(), ExploreError> {
        let state = self.frontier.lock().saved.states[index].clone();
        let identity = snap.identity();
        let request = self.page_request(
            snap,
            &state.name,
            &identity.fingerprint,
            index == 0,
            Some(version.to_string()),
        );
        self.graph(move |g| g.add_page(&request)).await?;
        let files = state.files.get()?;
        if let Some(picture) = picture {
            files.write_soon(atlas_store::SCREENSHOT, &picture)?;
        }
        let dom = serde_json::to_vec_pretty(snap).map_err(std::io::Error::other)?;
        files.write_soon("dom.json", &dom)?;
        let mut f = self.frontier.lock();
        let kept = &mut f.saved.states[index];
        kept.fingerprint = identity.fingerprint;
        kept.key = identity.key;
        kept.links = identity.links;
        kept.template = snap.template();
        kept.route = identity.route;
        kept.shape = identity.shape;
        kept.url = snap.url.clone();
        Ok(())
    }
}
