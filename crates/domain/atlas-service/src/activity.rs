//! Recent reports, per app, for people watching agents work: how many steps were reported in the
//! last hour, and the latest reports on a page.
//!
//! Kept in memory only: this process's `report_transition` calls once durable, and (on a shared
//! store) the counters that grew on other replicas as they are followed (there a
//! `batch_add_transitions` with statistics counts too, since only the growth is seen). The
//! counters of a transition say how often it was used, never when, and a per-report log in the
//! store would double what every report writes for a figure that only matters while someone
//! looks. So after a restart the hour starts empty.
//!
//! The hour's count is exact to the minute however many reports arrive (a count per minute); the
//! reports themselves are kept for the pages' "latest reports", the app's last [`KEPT_PER_APP`].

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use atlas_graph::{AppGraph, Graph};
use atlas_store::{Counts, Record};
use parking_lot::Mutex;

pub use atlas_api::view::RecentReport;

/// How far back "recent" reaches.
pub const WINDOW: Duration = Duration::from_secs(3600);
/// Most reports remembered per app (older ones go first, even within the hour).
pub const KEPT_PER_APP: usize = 10_000;

/// A report as remembered: when, on which edge, what it added. The edge's pages and action are
/// read from the graph when someone looks, so a report costs one small allocation, not seven
/// texts and a formatted time.
#[derive(Debug, Clone)]
pub(crate) struct Reported {
    /// Seconds since 1970 (UTC).
    pub(crate) at: i64,
    pub(crate) transition_id: String,
    pub(crate) added: Counts,
}

impl Reported {
    /// The report as the API shows it, when the app still has its edge.
    fn shown(&self, app: &AppGraph) -> Option<RecentReport> {
        let t = app.transition(&self.transition_id)?;
        let (added, action) = (&self.added, t.action());
        Some(RecentReport {
            at: atlas_model::rfc3339_of_seconds(self.at),
            app_id: t.app_id().to_string(),
            transition_id: self.transition_id.clone(),
            from_page: t.from_page().to_string(),
            to_page: t.to_page().to_string(),
            action_type: action.action_type.clone(),
            widget_text: action.widget_text.clone(),
            reports: added.success + added.fail,
            succeeded: added.success,
            failed: added.fail,
            latency_ms: (added.latency_samples > 0)
                .then(|| added.latency_total_ms / added.latency_samples as f64),
        })
    }
}

#[derive(Default)]
pub(crate) struct Activity {
    apps: Mutex<HashMap<String, AppActivity>>,
}

#[derive(Default)]
struct AppActivity {
    /// Reports per minute since the process started (minute, count), the oldest first.
    minutes: VecDeque<(u64, u64)>,
    /// The latest reports, the oldest first.
    latest: VecDeque<(Instant, Reported)>,
}

impl AppActivity {
    /// Forgets what is older than the window; whether anything is left.
    fn trim(&mut self, minute: u64) -> bool {
        let window = WINDOW.as_secs() / 60;
        while self
            .minutes
            .front()
            .is_some_and(|(m, _)| m + window <= minute)
        {
            self.minutes.pop_front();
        }
        while self
            .latest
            .front()
            .is_some_and(|(at, _)| at.elapsed() > WINDOW)
        {
            self.latest.pop_front();
        }
        !self.minutes.is_empty()
    }
}

/// Minutes since an origin of this process's own.
fn minute_now() -> u64 {
    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs() / 60
}

impl Activity {
    /// The reports among followed `records` (see [`as_reports`]), with their apps.
    pub(crate) fn reports_of(records: &[Record]) -> Vec<(String, Reported)> {
        let now = atlas_model::unix_seconds_now();
        records
            .iter()
            .filter_map(|record| {
                let (app_id, transition_id, added, at) = match record {
                    Record::Counted {
                        transition: t,
                        added,
                    } => (&t.app_id, &t.transition_id, *added, now),
                    Record::Added(a) => (&a.app_id, &a.transition_id, a.added, a.at),
                    _ => return None,
                };
                let reported = Reported {
                    at,
                    transition_id: transition_id.clone(),
                    added,
                };
                (added.success + added.fail > 0).then(|| (app_id.clone(), reported))
            })
            .collect()
    }

    /// Remembers a report on an edge of `app_id`.
    pub(crate) fn remember(&self, app_id: &str, report: Reported) {
        let (now, minute) = (Instant::now(), minute_now());
        let mut apps = self.apps.lock();
        let app = match apps.get_mut(app_id) {
            Some(app) => app,
            None => apps.entry(app_id.to_string()).or_default(),
        };
        let reports = report.added.success + report.added.fail;
        match app.minutes.back_mut() {
            Some((m, count)) if *m == minute => *count += reports,
            _ => app.minutes.push_back((minute, reports)),
        }
        app.latest.push_back((now, report));
        if app.latest.len() > KEPT_PER_APP {
            app.latest.pop_front();
        }
    }

    fn recent<R>(&self, app_id: &str, read: impl FnOnce(&AppActivity) -> R) -> Option<R> {
        let mut apps = self.apps.lock();
        let app = apps.get_mut(app_id)?;
        if !app.trim(minute_now()) {
            apps.remove(app_id);
            return None;
        }
        Some(read(app))
    }

    /// Reports on the app's transitions within the last hour (to the minute).
    pub(crate) fn last_hour(&self, app_id: &str) -> u64 {
        self.recent(app_id, |app| app.minutes.iter().map(|(_, n)| n).sum())
            .unwrap_or(0)
    }

    /// The latest reports (newest first, at most `n`) of steps from or to a page of `app`.
    pub(crate) fn on_page(&self, app: &AppGraph, page_id: &str, n: usize) -> Vec<RecentReport> {
        self.recent(app.app_id(), |recent| {
            recent
                .latest
                .iter()
                .rev()
                .filter_map(|(_, r)| r.shown(app))
                .filter(|r| r.from_page == page_id || r.to_page == page_id)
                .take(n)
                .collect()
        })
        .unwrap_or_default()
    }
}

/// Followed entities with the reports they carry made explicit: a transition whose counters grew
/// beyond what this replica holds was reported on elsewhere, by that much. (This replica's own
/// reports are in memory already, so they add nothing here.)
pub(crate) fn as_reports(graph: &Graph, records: Vec<Record>) -> Vec<Record> {
    records
        .into_iter()
        .map(|record| match record {
            Record::Transition(t) => {
                let held = graph
                    .app(&t.app_id)
                    .and_then(|app| app.transition(&t.transition_id))
                    .map(|held| held.counts())
                    .unwrap_or_default();
                let now = Counts::of(&t);
                if now.success + now.fail > held.success + held.fail {
                    Record::Counted {
                        transition: t,
                        added: now.since(&held),
                    }
                } else {
                    Record::Transition(t)
                }
            }
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_model::{Action, App, Page, Transition};

    /// An app whose edges `p → q` and `r → q` are `p-t` and `r-t`.
    fn app() -> Graph {
        let mut graph = Graph::default();
        graph.upsert_app(App {
            app_id: "a".into(),
            home_page: None,
            created_at: String::new(),
            updated_at: String::new(),
            ..Default::default()
        });
        for name in ["p", "q", "r"] {
            graph
                .upsert_page(Page {
                    page_id: name.into(),
                    ..Page::named("a", name)
                })
                .unwrap();
        }
        for from in ["p", "r"] {
            let t = Transition {
                transition_id: format!("{from}-t"),
                app_id: "a".into(),
                from_page: from.into(),
                to_page: "q".into(),
                action: Action {
                    action_type: "click".into(),
                    ..Action::default()
                },
                ..Transition::default()
            };
            graph.upsert_transition(&t).unwrap();
        }
        graph
    }

    fn report(from: &str, n: u64) -> Reported {
        Reported {
            at: 0,
            transition_id: format!("{from}-t"),
            added: Counts {
                success: n,
                ..Counts::default()
            },
        }
    }

    #[test]
    fn the_hour_counts_every_report_and_keeps_the_latest_by_page() {
        let graph = app();
        let activity = Activity::default();
        let many = KEPT_PER_APP + 500;
        for i in 0..many {
            activity.remember("a", report(if i % 2 == 0 { "p" } else { "r" }, 1));
        }
        activity.remember("a", report("p", 5));
        activity.remember("b", report("p", 2));
        // Past what is kept of the reports themselves, the count is still whole.
        assert_eq!(activity.last_hour("a"), many as u64 + 5);
        assert_eq!(activity.last_hour("b"), 2);
        assert_eq!(activity.last_hour("c"), 0);
        let app = graph.app("a").unwrap();
        let latest = activity.on_page(app, "p", 3);
        assert_eq!(latest.len(), 3);
        assert_eq!(latest[0].reports, 5, "newest first");
        assert_eq!(
            (latest[0].from_page.as_str(), latest[0].to_page.as_str()),
            ("p", "q")
        );
        assert_eq!(
            activity.on_page(app, "q", 100).len(),
            100,
            "from or to the page"
        );
        assert!(activity.on_page(app, "nowhere", 3).is_empty());
    }
}
