//! A recorded phone app taught as one release of its app: every screen the app shows from its
//! starts and every recorded step between them, as the simulated phone plays it (the recording
//! itself, or its seeded next release, [`atlas_device_sim::update`]), named by the version the
//! phone reports. Into an app that holds an earlier release it is a re-exploration, as
//! `atlas explore` re-explores a site: a screen that matches a known page is that page, seen in
//! the release (its face the release's, so `get_app_diff` says whether it changed); a screen
//! that matches none is a new page; a known page the release does not show, and a known step
//! between pages it shows that it does not take, are marked gone (kept as history).
//!
//! A screen is a known page when its content matches the page surely (`match_current_page`);
//! else, as a changed page keeps its address on the web, when the way to it is a known way: the
//! action that leads to it (by its label) from a page it is reached from led to that page before,
//! and the page is among those the screen's content resembles at all (its candidates) — so a
//! dialog a release puts in a way, which resembles nothing known, is a new page, not the page
//! the way led to. The launch screen, likewise, is the app's home page when it resembles it.
//!
//! Only screens reachable from where the app starts count: what a release no longer leads to is
//! what a person exploring it would not find. Everything goes through the tool interfaces, as
//! [`crate::teach`] does, so the release learns nothing an agent could not have reported.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

use atlas_api::ask;
use atlas_api::learning::{ReportTransitionRequest, ReportedAction};
use atlas_api::pages::{AddPageRequest, MatchPageRequest, UiHierarchy};
use atlas_api::tools;
use atlas_api::versions::{AppDiffRequest, RecordAppVersionRequest, VersionSource};
use atlas_api::view::{AppGraphRequest, AppGraphResponse};
use atlas_client::{CallError, ToolCaller};
use atlas_device_sim::RecordedApp;
use atlas_device_sim::app::Trigger;
use atlas_model::{AppDiff, Widget, screen_page_name};
use serde::Serialize;

/// What a screen's content matched: the page (id, name) it surely is, else the pages it
/// resembles at all.
type Matched = (Option<(String, String)>, Vec<String>);

/// What teaching a release did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReleaseTaught {
    /// The version, as the phone reports it.
    pub version: String,
    /// The version the app was at before, when it had one.
    pub previous: Option<String>,
    /// Screens the release shows from where it starts.
    pub screens: usize,
    /// Known pages the release's screens matched.
    pub pages_matched: usize,
    /// Pages the release added (screens that matched no known page).
    pub pages_added: usize,
    /// Steps reported.
    pub steps: usize,
    /// Pages and transitions (with what went with the pages) marked gone.
    pub marked_gone: usize,
    /// The page each screen was taken for, by the recording's screen id (`state_str`).
    pub pages: BTreeMap<String, String>,
    /// What changed against the previous version, as `get_app_diff` lists it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<AppDiff>,
}

/// The screens reachable from the app's starts, breadth first (its starts first, each other
/// screen after one that leads to it), ties in id order.
pub fn reachable_screens(app: &RecordedApp) -> Vec<String> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for ((from, _), to) in &app.transitions {
        next.entry(from).or_default().insert(to);
    }
    let starts = app
        .starts
        .iter()
        .chain([&app.launch])
        .filter(|s| app.screens.contains_key(*s));
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut queue = VecDeque::new();
    for start in starts {
        if seen.insert(start.as_str()) {
            order.push(start.clone());
            queue.push_back(start.as_str());
        }
    }
    while let Some(screen) = queue.pop_front() {
        for to in next.get(screen).into_iter().flatten() {
            if app.screens.contains_key(*to) && seen.insert(to) {
                order.push(to.to_string());
                queue.push_back(to);
            }
        }
    }
    order
}

/// The widgets a screen shows an agent.
fn widgets_of(app: &RecordedApp, screen: &str) -> Vec<Widget> {
    app.screens
        .get(screen)
        .map(|s| s.views.iter().filter_map(|v| v.widget()).collect())
        .unwrap_or_default()
}

/// A recorded trigger as `report_transition` takes it: the view at its bounds by its label (its
/// id when it has none), the text typed, or the key. A view the dump does not list there, or one
/// with neither, is told by what a person reads where the finger went: the smallest labelled
/// view under the tap's centre.
fn reported(app: &RecordedApp, screen: &str, trigger: &Trigger) -> Option<ReportedAction> {
    let (bounds, typed) = match trigger {
        Trigger::Key(key) if key.eq_ignore_ascii_case("BACK") => {
            return Some(ReportedAction {
                action_type: "back".into(),
                ..ReportedAction::default()
            });
        }
        Trigger::Key(_) => return None,
        Trigger::Tap(b) => (*b, None),
        Trigger::Type(b, text) => (*b, Some(text.clone())),
    };
    let views = &app.screens.get(screen)?.views;
    let [[l, t], [r, b]] = bounds;
    let (x, y) = ((l + r) / 2, (t + b) / 2);
    let at = views
        .iter()
        .find(|v| v.bounds == Some(bounds) && (!v.label().is_empty() || !v.short_id().is_empty()))
        .or_else(|| {
            views
                .iter()
                .filter(|v| v.is_shown() && v.contains(x, y) && !v.label().is_empty())
                .min_by_key(|v| v.area())
        })?;
    Some(crate::teach::action_on(at.label(), at.short_id(), typed))
}

/// What a screen's content matches: the page (id, name) it surely is, else the pages it
/// resembles at all. A screen that shows nothing to tell it by (an empty recorded dump)
/// matches nothing.
fn match_screen(
    caller: &dyn ToolCaller,
    app_id: &str,
    widgets: &[Widget],
) -> Result<Matched, CallError> {
    if widgets.is_empty() {
        return Ok((None, Vec::new()));
    }
    let request = MatchPageRequest {
        app_id: app_id.to_string(),
        ui_hierarchy: Some(UiHierarchy {
            widgets: widgets.to_vec(),
            ..Default::default()
        }),
        page_title: None,
        page_screenshot: None,
    };
    match ask::<tools::MatchCurrentPage>(caller, &request) {
        Ok(m) if m.matched => Ok((m.page.map(|p| (p.page_id, p.page_name)), Vec::new())),
        Ok(m) => Ok((None, m.candidates.into_iter().map(|c| c.page_id).collect())),
        Err(e) if e.code == "NOT_FOUND" || e.code == "PAGE_NOT_FOUND" => Ok((None, Vec::new())),
        Err(e) => Err(e),
    }
}

/// The app as it was before the release (an earlier release, or this one taught before).
struct Before {
    graph: AppGraphResponse,
    /// Its pages' names, by id.
    names: HashMap<String, String>,
    /// Where each of its current actions (from a page, by its type and label) led.
    led: HashMap<(String, String, String), String>,
}

impl Before {
    /// The app `app_id` as the graph has it; none when it has no pages yet.
    fn read(caller: &dyn ToolCaller, app_id: &str) -> Result<Option<Before>, CallError> {
        let request = AppGraphRequest {
            app_id: app_id.to_string(),
            center: None,
            radius: None,
            max_pages: None,
        };
        let graph = match ask::<tools::GetAppGraph>(caller, &request) {
            Ok(graph) => graph,
            Err(e) if e.code == "NOT_FOUND" || e.code == "APP_NOT_FOUND" => return Ok(None),
            Err(e) => return Err(e),
        };
        let names = graph
            .pages
            .iter()
            .map(|p| (p.page_id.clone(), p.page_name.clone()))
            .collect();
        let led = graph
            .transitions
            .iter()
            .filter(|t| t.gone_in.is_none())
            .map(|t| {
                let key = (
                    t.from_page.clone(),
                    t.action_type.clone(),
                    t.widget_text.clone(),
                );
                (key, t.to_page.clone())
            })
            .collect();
        Ok(Some(Before { graph, names, led }))
    }

    /// Which known page (id, name) each screen of `order` is, against the app as it was (nothing
    /// of the release written yet, so one screen's new face cannot sway another's match): the
    /// page its content surely matches, else the page a known way to it led to, when the screen
    /// resembles that page.
    fn identify<'a>(
        &self,
        caller: &dyn ToolCaller,
        app_id: &str,
        app: &RecordedApp,
        order: &'a [String],
    ) -> Result<HashMap<&'a str, (String, String)>, CallError> {
        let mut known: HashMap<&str, (String, String)> = HashMap::new();
        for screen in order {
            let (matched, resembles) = match_screen(caller, app_id, &widgets_of(app, screen))?;
            let by_way = || {
                let led_to = |((from, trigger), _): (&(String, Trigger), &String)| {
                    let action = reported(app, from, trigger)?;
                    let label = action.widget_text.unwrap_or_default();
                    let from_page = known.get(from.as_str())?.0.clone();
                    self.led
                        .get(&(from_page, action.action_type, label))
                        .cloned()
                };
                let home = self.graph.home_page.clone();
                let launched = (*screen == app.launch).then_some(home).flatten();
                let ways = app.transitions.iter().filter(|(_, to)| *to == screen);
                launched
                    .into_iter()
                    .chain(ways.filter_map(led_to))
                    .find(|page| resembles.contains(page))
                    .and_then(|page| self.names.get(&page).map(|name| (page, name.clone())))
            };
            if let Some(page) = matched.or_else(by_way) {
                known.insert(screen, page);
            }
        }
        Ok(known)
    }

    /// What of the app, current before the release, the release no longer shows: the pages none
    /// of its screens is, and the steps between pages it shows that it does not take.
    fn gone(
        &self,
        seen_pages: &HashSet<&str>,
        seen_steps: &HashSet<String>,
    ) -> (Vec<String>, Vec<String>) {
        let pages = self
            .graph
            .pages
            .iter()
            .filter(|p| p.gone_in.is_none() && !seen_pages.contains(p.page_id.as_str()))
            .map(|p| p.page_id.clone())
            .collect();
        let steps = self
            .graph
            .transitions
            .iter()
            .filter(|t| t.gone_in.is_none() && !seen_steps.contains(&t.transition_id))
            .filter(|t| {
                seen_pages.contains(t.from_page.as_str()) && seen_pages.contains(t.to_page.as_str())
            })
            .map(|t| t.transition_id.clone())
            .collect();
        (pages, steps)
    }
}

/// The name a screen no page is gets: as `observe_screen` names one.
fn new_page_name(app: &RecordedApp, screen: &str, widgets: &[Widget]) -> String {
    let title = app
        .screens
        .get(screen)
        .and_then(|s| s.name.clone())
        .or_else(|| {
            widgets
                .iter()
                .map(|w| w.text.clone())
                .find(|t| !t.trim().is_empty())
        })
        .unwrap_or_default();
    screen_page_name(&title, widgets)
}

/// Teaches `app` (at the version it reports) as a release of `app_id`; see the module's words.
pub fn teach_release(
    caller: &dyn ToolCaller,
    app_id: &str,
    app: &RecordedApp,
) -> Result<ReleaseTaught, CallError> {
    let version = app.version.name.clone();
    let before = Before::read(caller, app_id)?;
    let previous = before
        .as_ref()
        .and_then(|b| b.graph.versions.last().cloned())
        .filter(|v| *v != version);
    let mut taught = ReleaseTaught {
        version: version.clone(),
        previous: previous.clone(),
        ..Default::default()
    };
    let order = reachable_screens(app);
    taught.screens = order.len();
    let known = match &before {
        Some(before) => before.identify(caller, app_id, app, &order)?,
        None => HashMap::new(),
    };
    // Each screen written with the release's version: the page seen in it, what it shows its
    // face; a screen no known page is, matched among the pages the release made so far.
    for screen in &order {
        let widgets = widgets_of(app, screen);
        let page_name = match known.get(screen.as_str()) {
            Some((_, name)) => {
                taught.pages_matched += 1;
                name.clone()
            }
            None => match match_screen(caller, app_id, &widgets)?.0 {
                Some((_, name)) => name,
                None => {
                    taught.pages_added += 1;
                    new_page_name(app, screen, &widgets)
                }
            },
        };
        let added = ask::<tools::AddPage>(
            caller,
            &AddPageRequest {
                app_id: app_id.to_string(),
                page_name,
                page_type: (*screen == app.launch && previous.is_none()).then(|| "home".into()),
                ui_hierarchy: Some(UiHierarchy {
                    widgets,
                    ..Default::default()
                }),
                app_version: Some(version.clone()),
                ..Default::default()
            },
        )?;
        taught.pages.insert(screen.clone(), added.page_id);
    }
    let seen_steps = report_steps(caller, app_id, app, &order, &mut taught)?;
    let mut mark = RecordAppVersionRequest {
        app_id: app_id.to_string(),
        version: version.clone(),
        source: Some(VersionSource::Device),
        ..Default::default()
    };
    if let (Some(before), Some(_)) = (&before, &previous) {
        let seen_pages: HashSet<&str> = taught.pages.values().map(String::as_str).collect();
        (mark.gone_pages, mark.gone_transitions) = before.gone(&seen_pages, &seen_steps);
    }
    taught.marked_gone = ask::<tools::RecordAppVersion>(caller, &mark)?.marked_gone;
    if let Some(from) = previous {
        taught.diff = Some(ask::<tools::GetAppDiff>(
            caller,
            &AppDiffRequest {
                app_id: app_id.to_string(),
                from_version: Some(from),
                to_version: Some(version),
            },
        )?);
    }
    Ok(taught)
}

/// Reports every recorded step between the release's screens (in a stable order), in the
/// release's version; the transitions they are.
fn report_steps(
    caller: &dyn ToolCaller,
    app_id: &str,
    app: &RecordedApp,
    order: &[String],
    taught: &mut ReleaseTaught,
) -> Result<HashSet<String>, CallError> {
    let screens: HashSet<&str> = order.iter().map(String::as_str).collect();
    let mut steps: Vec<(&(String, Trigger), &String)> = app
        .transitions
        .iter()
        .filter(|((from, _), to)| screens.contains(from.as_str()) && screens.contains(to.as_str()))
        .collect();
    steps.sort_by_cached_key(|((from, trigger), _)| (from.clone(), format!("{trigger:?}")));
    let mut seen = HashSet::new();
    for ((from, trigger), to) in steps {
        let Some(action) = reported(app, from, trigger) else {
            continue;
        };
        let answer = ask::<tools::ReportTransition>(
            caller,
            &ReportTransitionRequest {
                from_page: taught.pages[from].clone(),
                action,
                to_page: taught.pages[to].clone(),
                success: true,
                app_id: Some(app_id.to_string()),
                session_id: Some(format!("release-{}", taught.version)),
                app_version: Some(taught.version.clone()),
                ..Default::default()
            },
        )?;
        seen.insert(answer.transition_id);
        taught.steps += 1;
    }
    Ok(seen)
}

/// One app released again, measured against what its seeded update did: the screens both
/// releases show keeping their pages, the pages the release removed marked gone and no other.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReleaseFigures {
    /// The app.
    pub app: String,
    /// The two versions.
    pub versions: [String; 2],
    /// The update's changes, in a line.
    pub update: String,
    /// The first release taught.
    pub first: ReleaseTaught,
    /// The second.
    pub second: ReleaseTaught,
    /// Screens both releases show from where they start.
    pub screens_in_both: usize,
    /// Of them, those whose page is the same in both.
    pub identity_kept: usize,
    /// Pages only screens the new release no longer shows were taken for: those to mark gone.
    pub pages_to_mark_gone: usize,
    /// Of them, those marked gone.
    pub marked_gone_right: usize,
    /// Pages marked gone that the new release still shows.
    pub marked_gone_wrong: usize,
    /// Pages `get_app_diff` lists as changed.
    pub pages_changed: usize,
    /// Of them, those whose screens the update did not touch (the same views in both).
    pub changed_untouched: usize,
}

/// Teaches `app` and its seeded update `next` as two releases of `app_id`, and measures them
/// against the screens' recorded ids (which the update keeps for what it changed in place).
pub fn measure_release(
    caller: &dyn ToolCaller,
    app_id: &str,
    name: &str,
    app: &RecordedApp,
    next: &RecordedApp,
    update: String,
) -> Result<ReleaseFigures, CallError> {
    let first = teach_release(caller, app_id, app)?;
    let second = teach_release(caller, app_id, next)?;
    let both: Vec<&String> = first
        .pages
        .keys()
        .filter(|s| second.pages.contains_key(*s))
        .collect();
    let identity_kept = both
        .iter()
        .filter(|s| first.pages[**s] == second.pages[**s])
        .count();
    let still: HashSet<&str> = second.pages.values().map(String::as_str).collect();
    let to_gone: BTreeSet<&str> = first
        .pages
        .iter()
        .filter(|(s, _)| !second.pages.contains_key(*s))
        .map(|(_, p)| p.as_str())
        .filter(|p| !still.contains(p))
        .collect();
    let diff = second.diff.clone().unwrap_or_default();
    let removed: HashSet<&str> = diff
        .pages
        .removed
        .iter()
        .map(|p| p.page_id.as_str())
        .collect();
    // A page is untouched when each of its screens shows the same views in both releases.
    let untouched = |page: &str| {
        first
            .pages
            .iter()
            .filter(|(_, p)| p.as_str() == page)
            .all(|(s, _)| {
                let views = |a: &RecordedApp| a.screens.get(s).map(|sc| format!("{:?}", sc.views));
                views(app) == views(next)
            })
    };
    Ok(ReleaseFigures {
        app: name.to_string(),
        versions: [app.version.name.clone(), next.version.name.clone()],
        update,
        screens_in_both: both.len(),
        identity_kept,
        pages_to_mark_gone: to_gone.len(),
        marked_gone_right: to_gone.iter().filter(|p| removed.contains(*p)).count(),
        marked_gone_wrong: removed.iter().filter(|p| still.contains(*p)).count(),
        pages_changed: diff.pages.changed.len(),
        changed_untouched: diff
            .pages
            .changed
            .iter()
            .filter(|c| untouched(&c.page.page_id))
            .count(),
        first,
        second,
    })
}
