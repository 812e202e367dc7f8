//! An app's graph as one of its versions had it, and what changed between two
//! ([`atlas_model::versions`] says what a version of an entity is).
//!
//! The planner's own routes leave out what is gone (its links cost infinity); a version's routes
//! are searched here on the transitions seen in that version, gone since or not, by a plain
//! Dijkstra: a diff or a question about history is asked rarely, and keeping remembered trees per
//! version would cost memory on every app for it.

use std::collections::{BTreeSet, BinaryHeap, HashMap};

use atlas_model::{
    AppDiff, DiffPage, DiffTransition, IntentPathChange, Page, PageChange, Versioned, face_in,
};

use crate::cost::edge_cost;
use crate::plan::Queued;
use crate::{AppGraph, TransitionRef};

/// Why two versions cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// The app has no such version.
    #[error("{app} has no version {version:?} (it has {known})")]
    UnknownVersion {
        /// The app.
        app: String,
        /// The version asked for.
        version: String,
        /// Its versions, listed.
        known: String,
    },
    /// The app has fewer than two versions, and none was named to compare.
    #[error("{0} has one version or none: nothing to compare")]
    OneVersion(String),
}

impl AppGraph {
    /// The position of `version` among the app's versions.
    pub fn version_order(&self, version: &str) -> Option<usize> {
        self.app.versions.iter().position(|v| v.version == version)
    }

    /// Whether a page was seen in `version`.
    pub fn page_in(&self, page: &Page, version: &str) -> bool {
        page.seen_in_version(version, &self.app.versions)
    }

    /// Whether an entity found gone in a version was gone by `version` (gone in it or before).
    fn gone_by(&self, gone_in: Option<&str>, version: &str) -> bool {
        let at = self.version_order(version);
        gone_in
            .and_then(|g| self.version_order(g))
            .is_some_and(|g| at.is_some_and(|at| g <= at))
    }

    /// The cheapest route from `from` to `to` over the transitions `keep` takes (by the
    /// planner's costs, what is gone included when `keep` takes it); none when there is none.
    pub fn route_where(
        &self,
        from: &str,
        to: &str,
        keep: impl Fn(TransitionRef<'_>) -> bool,
    ) -> Option<Vec<usize>> {
        let (start, goal) = (self.node(from)?, self.node(to)?);
        let n = self.links.node_count();
        let mut dist = vec![f64::INFINITY; n];
        let mut via: Vec<Option<(u32, u32)>> = vec![None; n];
        let mut heap = BinaryHeap::from([Queued {
            cost: 0.0,
            node: start,
        }]);
        dist[start as usize] = 0.0;
        while let Some(Queued { cost, node }) = heap.pop() {
            if node == goal {
                break;
            }
            if cost > dist[node as usize] {
                continue;
            }
            for link in self.links.outgoing(node) {
                let t = TransitionRef::new(self, link.edge);
                if !keep(t) {
                    continue;
                }
                let candidate = cost + edge_cost(t.counts());
                if candidate < dist[link.node as usize] {
                    dist[link.node as usize] = candidate;
                    via[link.node as usize] = Some((node, link.edge));
                    heap.push(Queued {
                        cost: candidate,
                        node: link.node,
                    });
                }
            }
        }
        if !dist[goal as usize].is_finite() {
            return None;
        }
        let mut steps = Vec::new();
        let mut at = goal;
        while let Some((prev, edge)) = via[at as usize] {
            steps.push(edge as usize);
            at = prev;
        }
        steps.reverse();
        Some(steps)
    }

    /// The cheapest route in `version`: over the transitions seen in it.
    pub fn route_in_version(&self, from: &str, to: &str, version: &str) -> Option<Vec<usize>> {
        self.route_where(from, to, |t| t.seen_in_version(version))
    }

    /// A transition's action and target, in words: `点击'Search' → Search`.
    pub fn step_words(&self, t: TransitionRef<'_>) -> String {
        let to = self.page(t.to_page()).map_or(t.to_page(), |p| &p.page_name);
        format!("{} → {to}", t.action().label())
    }

    fn summary(page: &Page) -> DiffPage {
        DiffPage {
            page_id: page.page_id.clone(),
            page_name: page.page_name.clone(),
            url: page.url.clone(),
        }
    }

    /// What changed between versions `from` and `to` (by default the one before `to`, and the
    /// current one).
    pub fn diff(&self, from: Option<&str>, to: Option<&str>) -> Result<AppDiff, DiffError> {
        let versions = &self.app.versions;
        let known = || {
            versions
                .iter()
                .map(|v| v.version.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let check = |v: &str| {
            self.version_order(v)
                .ok_or_else(|| DiffError::UnknownVersion {
                    app: self.app_id().to_string(),
                    version: v.to_string(),
                    known: if versions.is_empty() {
                        "none".into()
                    } else {
                        known()
                    },
                })
        };
        let to_at = match to {
            Some(v) => check(v)?,
            None => versions
                .len()
                .checked_sub(1)
                .ok_or_else(|| DiffError::OneVersion(self.app_id().to_string()))?,
        };
        let from_at = match from {
            Some(v) => check(v)?,
            None => to_at
                .checked_sub(1)
                .ok_or_else(|| DiffError::OneVersion(self.app_id().to_string()))?,
        };
        let (from, to) = (
            versions[from_at].version.clone(),
            versions[to_at].version.clone(),
        );
        let mut diff = AppDiff {
            app_id: self.app_id().to_string(),
            versions: versions.clone(),
            from: from.clone(),
            to: to.clone(),
            ..Default::default()
        };
        self.diff_pages(&mut diff);
        self.diff_transitions(&mut diff);
        self.diff_intents(&mut diff);
        Ok(diff)
    }

    /// The actions a page has in a version, in words.
    fn actions_in(&self, page: &Page, version: &str) -> BTreeSet<String> {
        self.outgoing(&page.page_id)
            .filter(|t| t.seen_in_version(version))
            .map(|t| self.step_words(t))
            .collect()
    }

    fn diff_pages(&self, diff: &mut AppDiff) {
        let (from, to) = (diff.from.as_str(), diff.to.as_str());
        let versions = &self.app.versions;
        let changes = &mut diff.pages;
        for page in &self.pages {
            match (self.page_in(page, from), self.page_in(page, to)) {
                (false, true) => changes.added.push(Self::summary(page)),
                (true, false) if self.gone_by(page.gone_in(), to) => {
                    changes.removed.push(Self::summary(page))
                }
                (true, false) => changes.unchecked.push(Self::summary(page)),
                (true, true) => {
                    let mut change = PageChange {
                        page: Self::summary(page),
                        ..Default::default()
                    };
                    let faces = (
                        face_in(&page.faces, from, versions),
                        face_in(&page.faces, to, versions),
                    );
                    if let (Some(old), Some(new)) = faces {
                        if old.title != new.title {
                            change.title = Some([old.title.clone(), new.title.clone()]);
                        }
                        let (a, b): (BTreeSet<&String>, BTreeSet<&String>) =
                            (old.texts.iter().collect(), new.texts.iter().collect());
                        change.texts_added = b.difference(&a).map(|t| t.to_string()).collect();
                        change.texts_removed = a.difference(&b).map(|t| t.to_string()).collect();
                    }
                    let (a, b) = (self.actions_in(page, from), self.actions_in(page, to));
                    change.actions_added = b.difference(&a).cloned().collect();
                    change.actions_removed = a.difference(&b).cloned().collect();
                    let same = change.title.is_none()
                        && change.texts_added.is_empty()
                        && change.texts_removed.is_empty()
                        && change.actions_added.is_empty()
                        && change.actions_removed.is_empty();
                    if same {
                        changes.unchanged += 1;
                    } else {
                        changes.changed.push(change);
                    }
                }
                (false, false) => {}
            }
        }
    }

    fn diff_transitions(&self, diff: &mut AppDiff) {
        let (from, to) = (diff.from.as_str(), diff.to.as_str());
        let changes = &mut diff.transitions;
        for t in self.transitions() {
            let words = || {
                let name = |id: &str| {
                    self.page(id)
                        .map_or(id.to_string(), |p| p.page_name.clone())
                };
                DiffTransition {
                    transition_id: t.transition_id().to_string(),
                    from: name(t.from_page()),
                    action: t.action().label(),
                    to: name(t.to_page()),
                }
            };
            match (t.seen_in_version(from), t.seen_in_version(to)) {
                (false, true) => changes.added.push(words()),
                (true, false) if self.gone_by(t.gone_in(), to) => changes.removed.push(words()),
                (true, true) => changes.kept += 1,
                _ => {}
            }
        }
    }

    fn diff_intents(&self, diff: &mut AppDiff) {
        let (from, to) = (diff.from.as_str(), diff.to.as_str());
        let versions = &self.app.versions;
        let home = self.home_page().map(|p| p.page_id.clone());
        let mut intents: Vec<_> = self.intents.values().collect();
        intents.sort_by(|a, b| a.intent_text.cmp(&b.intent_text));
        let mut routes: HashMap<(&str, &str), Option<Vec<String>>> = HashMap::new();
        for intent in intents {
            // An intent registered without a version is the target page's.
            let served_in = |version: &str| match (&intent.target_page, intent.seen_in.is_empty()) {
                (Some(page), true) => self.page(page).is_some_and(|p| self.page_in(p, version)),
                _ => intent.seen_in_version(version, versions),
            };
            let (was, is) = (served_in(from), served_in(to));
            match (was, is) {
                (false, true) => diff.intents.added.push(intent.intent_text.clone()),
                (true, false) if self.gone_by(intent.gone_in(), to) => {
                    diff.intents.removed.push(intent.intent_text.clone())
                }
                (true, true) => {
                    let (Some(home), Some(target)) = (&home, &intent.target_page) else {
                        continue;
                    };
                    let mut way = |version| {
                        routes
                            .entry((version, target.as_str()))
                            .or_insert_with(|| {
                                self.route_in_version(home, target, version).map(|steps| {
                                    steps
                                        .iter()
                                        .map(|s| self.step_words(self.transition_at(*s)))
                                        .collect()
                                })
                            })
                            .clone()
                    };
                    let (old, new) = (way(from), way(to));
                    if old != new {
                        diff.intents.path_changed.push(IntentPathChange {
                            intent: intent.intent_text.clone(),
                            target_page: self
                                .page(target)
                                .map_or(target.clone(), |p| p.page_name.clone()),
                            from: old,
                            to: new,
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use atlas_model::{Action, AppVersion, PageFace, Transition, Versioned};

    use crate::AppGraph;
    use crate::testing::{empty_app, page};

    /// An app of two versions: 首页 → 搜索 in both; 首页 → 旧页 in 1 only (gone in 2);
    /// 首页 → 新页 → 搜索 in 2 only, the new way to 搜索 that its intent takes.
    fn two_versions() -> AppGraph {
        let mut g = empty_app("a");
        g.app.versions = ["1", "2"]
            .iter()
            .map(|v| AppVersion {
                version: v.to_string(),
                ..Default::default()
            })
            .collect();
        for (i, (name, seen, gone)) in [
            ("首页", &["1", "2"][..], None),
            ("搜索", &["1", "2"][..], None),
            ("旧页", &["1"][..], Some("2")),
            ("新页", &["2"][..], None),
        ]
        .iter()
        .enumerate()
        {
            let mut p = page("a", name, i as u32);
            p.seen_in = seen.iter().map(|s| s.to_string()).collect();
            p.gone_in = gone.map(str::to_string);
            if *name == "搜索" {
                p.faces = vec![
                    PageFace::of("1", "Search", ["Go"]),
                    PageFace::of("2", "Search issues", ["Go", "Advanced"]),
                ];
            }
            g.upsert_page(p);
        }
        g.app.home_page = Some(atlas_model::page_id("a", "首页"));
        let id = |n: &str| atlas_model::page_id("a", n);
        for (from, text, to, seen, gone) in [
            ("首页", "搜索", "搜索", &["1"][..], Some("2")),
            ("首页", "旧", "旧页", &["1"][..], Some("2")),
            ("首页", "新", "新页", &["2"][..], None),
            ("新页", "搜索", "搜索", &["2"][..], None),
        ] {
            let action = Action {
                action_type: "click".into(),
                widget_text: text.into(),
                ..Default::default()
            };
            let t = Transition {
                transition_id: atlas_model::transition_id(&id(from), &action, &id(to)),
                app_id: "a".into(),
                from_page: id(from),
                to_page: id(to),
                action,
                created_at: "2026-11-28T00:00:00Z".into(),
                updated_at: "2026-11-28T00:00:00Z".into(),
                seen_in: seen.iter().map(|s| s.to_string()).collect(),
                gone_in: gone.map(str::to_string),
                ..Default::default()
            };
            g.upsert_transition(&t).unwrap();
        }
        let mut intent = atlas_model::Intent {
            intent_id: "i".into(),
            app_id: "a".into(),
            intent_text: "搜索问题".into(),
            target_page: Some(id("搜索")),
            ..Default::default()
        };
        intent.saw("1");
        intent.saw("2");
        g.upsert_intent(intent);
        g
    }

    #[test]
    fn the_planner_leaves_out_what_is_gone_and_a_version_keeps_it() {
        let g = two_versions();
        let id = |n: &str| atlas_model::page_id("a", n);
        assert_eq!(
            g.plan(&id("首页"), &id("旧页"), 10),
            Err(crate::PlanError::NoPath)
        );
        let now = g.plan(&id("首页"), &id("搜索"), 10).unwrap();
        assert_eq!(now.steps.len(), 2, "through 新页: the direct step is gone");
        let then = g.route_in_version(&id("首页"), &id("搜索"), "1").unwrap();
        assert_eq!(then.len(), 1);
        assert!(g.route_in_version(&id("首页"), &id("旧页"), "1").is_some());
        assert!(g.route_in_version(&id("首页"), &id("旧页"), "2").is_none());
        assert!(
            !g.hop_distances(&id("首页"))
                .contains_key(id("旧页").as_str())
        );
    }

    #[test]
    fn a_diff_lists_what_the_release_added_removed_and_changed() {
        let g = two_versions();
        let d = g.diff(None, None).unwrap();
        assert_eq!((d.from.as_str(), d.to.as_str()), ("1", "2"));
        let names =
            |v: &[atlas_model::DiffPage]| v.iter().map(|p| p.page_name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&d.pages.added), ["新页"]);
        assert_eq!(names(&d.pages.removed), ["旧页"]);
        let changed: Vec<_> = d.pages.changed.iter().map(|c| &c.page.page_name).collect();
        assert_eq!(changed, ["首页", "搜索"]);
        let search = &d.pages.changed[1];
        assert_eq!(
            search.title,
            Some(["Search".to_string(), "Search issues".to_string()])
        );
        assert_eq!(search.texts_added, ["Advanced"]);
        let home = &d.pages.changed[0];
        assert_eq!(home.actions_added, ["点击'新' → 新页"]);
        assert_eq!(home.actions_removed.len(), 2);
        assert_eq!(d.transitions.added.len(), 2);
        assert_eq!(d.transitions.removed.len(), 2);
        let path = &d.intents.path_changed[0];
        assert_eq!(
            path.from.as_deref(),
            Some(&["点击'搜索' → 搜索".to_string()][..])
        );
        assert_eq!(path.to.as_ref().map(Vec::len), Some(2));
        assert!(g.diff(Some("1"), Some("9")).is_err());
    }

    #[test]
    fn a_page_alike_in_both_versions_is_not_changed() {
        let mut g = two_versions();
        let mut search = g.page(&atlas_model::page_id("a", "搜索")).unwrap().clone();
        search.faces.pop();
        g.upsert_page(search);
        let d = g.diff(Some("1"), Some("2")).unwrap();
        assert!(d.pages.changed.iter().all(|c| c.page.page_name != "搜索"));
        assert_eq!(d.pages.unchanged, 1);
    }
}
