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

use atlas_graph::{Graph, TransitionRef};
use atlas_model::{Action, Transition};
use atlas_store::{Counts, Record};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How far back "recent" reaches.
pub const WINDOW: Duration = Duration::from_secs(3600);
/// Most reports remembered per app (older ones go first, even within the hour).
pub const KEPT_PER_APP: usize = 10_000;

/// One report (or, from another replica, the reports on one edge since the last look).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecentReport {
    /// When this server learned of it (RFC 3339).
    pub at: String,
    /// The app.
    pub app_id: String,
    /// The transition's id.
    pub transition_id: String,
    /// The page the step started on (its id).
    pub from_page: String,
    /// The page the step led to (its id).
    pub to_page: String,
    /// click, input, swipe, back…
    pub action_type: String,
    /// The widget's text or label.
    pub widget_text: String,
    /// Reports it stands for (1 for a report made here).
    pub reports: u64,
    /// Reports of the step that worked.
    pub succeeded: u64,
    /// Reports of the step that failed.
    pub failed: u64,
    /// Mean latency reported, when any was.
    pub latency_ms: Option<f64>,
}

impl RecentReport {
    /// A report on an edge the graph holds.
    pub(crate) fn new(t: &TransitionRef<'_>, added: &Counts, at: &str) -> RecentReport {
        let ends = [t.app_id(), t.transition_id(), t.from_page(), t.to_page()];
        RecentReport::with(ends, t.action(), added, at)
    }

    /// A report on a transition as the model has it.
    pub(crate) fn of(t: &Transition, added: &Counts, at: &str) -> RecentReport {
        let ends = [&t.app_id, &t.transition_id, &t.from_page, &t.to_page].map(String::as_str);
        RecentReport::with(ends, &t.action, added, at)
    }

    /// `[app, transition, from page, to page]`.
    fn with(ids: [&str; 4], action: &Action, added: &Counts, at: &str) -> RecentReport {
        let [app_id, transition_id, from_page, to_page] = ids.map(str::to_string);
        RecentReport {
            at: at.to_string(),
            app_id,
            transition_id,
            from_page,
            to_page,
            action_type: action.action_type.clone(),
            widget_text: action.widget_text.clone(),
            reports: added.success + added.fail,
            succeeded: added.success,
            failed: added.fail,
            latency_ms: (added.latency_samples > 0)
                .then(|| added.latency_total_ms / added.latency_samples as f64),
        }
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
    latest: VecDeque<(Instant, RecentReport)>,
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
    /// The reports among followed `records` (see [`as_reports`]), by app.
    pub(crate) fn reports_of(records: &[Record]) -> Vec<RecentReport> {
        let at = atlas_model::now_rfc3339();
        records
            .iter()
            .filter_map(|record| match record {
                Record::Counted { transition, added } if added.success + added.fail > 0 => {
                    Some(RecentReport::of(transition, added, &at))
                }
                _ => None,
            })
            .collect()
    }

    pub(crate) fn remember(&self, reports: Vec<RecentReport>) {
        if reports.is_empty() {
            return;
        }
        let (now, minute) = (Instant::now(), minute_now());
        let mut apps = self.apps.lock();
        for report in reports {
            let app = apps.entry(report.app_id.clone()).or_default();
            match app.minutes.back_mut() {
                Some((m, count)) if *m == minute => *count += report.reports,
                _ => app.minutes.push_back((minute, report.reports)),
            }
            app.latest.push_back((now, report));
            if app.latest.len() > KEPT_PER_APP {
                app.latest.pop_front();
            }
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

    /// The latest reports (newest first, at most `n`) of steps from or to a page.
    pub(crate) fn on_page(&self, app_id: &str, page_id: &str, n: usize) -> Vec<RecentReport> {
        self.recent(app_id, |app| {
            app.latest
                .iter()
                .rev()
                .map(|(_, r)| r)
                .filter(|r| r.from_page == page_id || r.to_page == page_id)
                .take(n)
                .cloned()
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

    fn report(app: &str, from: &str, n: u64) -> RecentReport {
        RecentReport {
            at: String::new(),
            app_id: app.into(),
            transition_id: format!("{from}-t"),
            from_page: from.into(),
            to_page: "q".into(),
            action_type: "click".into(),
            widget_text: String::new(),
            reports: n,
            succeeded: n,
            failed: 0,
            latency_ms: None,
        }
    }

    #[test]
    fn the_hour_counts_every_report_and_keeps_the_latest_by_page() {
        let activity = Activity::default();
        let many = KEPT_PER_APP + 500;
        for i in 0..many {
            activity.remember(vec![report("a", if i % 2 == 0 { "p" } else { "r" }, 1)]);
        }
        activity.remember(vec![report("a", "p", 5), report("b", "p", 2)]);
        // Past what is kept of the reports themselves, the count is still whole.
        assert_eq!(activity.last_hour("a"), many as u64 + 5);
        assert_eq!(activity.last_hour("b"), 2);
        assert_eq!(activity.last_hour("c"), 0);
        let latest = activity.on_page("a", "p", 3);
        assert_eq!(latest.len(), 3);
        assert_eq!(latest[0].reports, 5, "newest first");
        assert!(activity.on_page("a", "nowhere", 3).is_empty());
    }
}
