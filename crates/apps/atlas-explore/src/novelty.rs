//! Which pending task goes first: the one likeliest to show what the map lacks.
//!
//! Judged from what a task says beforehand of where it leads (a link's target, a form sent by
//! GET), because loading the page to find out is the cost being saved. A kind of page not yet
//! known comes first (a new path before a new query on a known path: another view, format or
//! revision of a known page is less often a new page), then another item of a known kind while
//! the kind has room for examples (an item of a list may link where its first did not), then an
//! address already seen, which only records a way between known pages.

use std::collections::HashSet;

use crate::state::State;
use atlas_browser::template::normalize_url;

/// How new a task's target is to the map.
pub(crate) struct Novelty<'f> {
    known: HashSet<&'f str>,
    known_paths: HashSet<&'f str>,
    seen: HashSet<String>,
    room: HashSet<&'f str>,
}

impl<'f> Novelty<'f> {
    /// From the routes known (the states' and those tasks already led to), the states, and how
    /// many examples a kind keeps.
    pub(crate) fn new(known: HashSet<&'f str>, states: &'f [State], max_similar: usize) -> Self {
        Novelty {
            known_paths: known.iter().map(|r| path_of(r)).collect(),
            known,
            seen: states
                .iter()
                .flat_map(|s| std::iter::once(&s.url).chain(s.examples.iter().map(|e| &e.url)))
                .map(|u| normalize_url(u))
                .collect(),
            room: states
                .iter()
                .filter(|s| s.examples.len() < max_similar)
                .map(|s| s.route.as_str())
                .collect(),
        }
    }

    /// 3 for a kind not known (or a target not known beforehand), 2 for a new query on a known
    /// path, 1 for a new item of a known kind with room for examples, 0 otherwise.
    pub(crate) fn of(&self, task: &crate::tasks::Task) -> u8 {
        let Some(route) = task.leads_to.as_deref() else {
            return 3;
        };
        if !self.known.contains(route) {
            return if self.known_paths.contains(path_of(route)) {
                2
            } else {
                3
            };
        }
        let address = task.parameters["href"]
            .as_str()
            .or_else(|| task.parameters["url"].as_str());
        match address {
            Some(a) if self.room.contains(route) && !self.seen.contains(&normalize_url(a)) => 1,
            _ => 0,
        }
    }
}

/// A route's path, without its query and fragment.
fn path_of(route: &str) -> &str {
    route.split(['?', '#']).next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Example;
    use crate::tasks::Task;

    fn link(href: &str) -> Task {
        Task {
            leads_to: Some(atlas_browser::template::route_template(href)),
            ..crate::tasks::pending("a", "click", serde_json::json!({ "href": href }))
        }
    }

    fn state(url: &str, examples: &[&str]) -> State {
        State {
            url: url.into(),
            route: atlas_browser::template::route_template(url),
            examples: examples
                .iter()
                .map(|u| Example {
                    url: (*u).into(),
                    title: String::new(),
                })
                .collect(),
            ..State::default()
        }
    }

    #[test]
    fn a_new_kind_then_a_new_query_then_another_item_then_a_known_address() {
        let states = vec![
            state("http://h/orders/1", &["http://h/orders/2"]),
            state(
                "http://h/tickets/1",
                &["http://h/tickets/2", "http://h/tickets/3"],
            ),
        ];
        let known = states.iter().map(|s| s.route.as_str()).collect();
        let novelty = Novelty::new(known, &states, 2);
        assert_eq!(novelty.of(&link("http://h/wiki/Start")), 3);
        assert_eq!(novelty.of(&link("http://h/orders/1?format=csv")), 2);
        assert_eq!(novelty.of(&link("http://h/orders/7")), 1);
        // Seen, as the state or as an example: a way between known pages.
        assert_eq!(novelty.of(&link("http://h/orders/1")), 0);
        assert_eq!(novelty.of(&link("http://h/orders/2")), 0);
        // The tickets keep as many examples as they may.
        assert_eq!(novelty.of(&link("http://h/tickets/9")), 0);
        let unknown = Task {
            leads_to: None,
            ..link("http://h/x")
        };
        assert_eq!(novelty.of(&unknown), 3);
    }
}
