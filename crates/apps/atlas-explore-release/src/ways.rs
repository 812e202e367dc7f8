//! The recorded ways to a site's states (each state's `path`, replayed by its navigation script
//! `scripts/nav_<state>.py`) checked on a new release, as test-repair tools re-locate a broken
//! GUI test's steps.
//!
//! A step is the same action on the new release when the page it was taken on still offers an
//! action that sends what it sent ([`atlas_explore::tasks::action_key`]: a link's target, a form's
//! address and field names): then only its locators may have moved, and the step takes the new
//! ones (the values it typed kept). Checking this on the pages the re-exploration has already
//! read costs no browser time; the release test replays the scripts in Playwright to see that
//! a re-located way still ends where it should. A way with a step no page offers any more is
//! replaced by the state's address (signed in first, as the site signs in now, when the way
//! signed in).

use std::collections::HashMap;

use atlas_explore::tasks::{Task, action_key, task_key};
use atlas_explore::{State, Step};

/// What a new release did to a state's recorded way.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WayOutcome {
    /// Every step is still offered, where it was, as it was.
    Kept,
    /// Every step is still offered; some moved: the way with their new locators.
    Repaired(Vec<Step>),
    /// A step is no longer offered; the state is still there: the way by its address.
    Replaced(Vec<Step>),
    /// The state is gone with the release.
    Lost,
}

/// A step's key across releases.
fn step_key(step: &Step) -> String {
    action_key(&step.action, &step.selector, &step.parameters)
}

/// `old` taken by what the new release offers for it: the new task's locators, the values the
/// old step typed (by field name).
fn relocated(old: &Step, now: &Task) -> Step {
    let mut step = Step::of(now);
    if let (Some(fields), Some(before)) = (
        step.parameters
            .get_mut("fields")
            .and_then(serde_json::Value::as_array_mut),
        old.parameters["fields"].as_array(),
    ) {
        for field in fields {
            let typed = before
                .iter()
                .find(|b| b["name"] == field["name"])
                .and_then(|b| b.get("value"));
            if let Some(value) = typed {
                field["value"] = value.clone();
            }
        }
    }
    step
}

/// The way to a state by its address, after signing in when `sign_in` is given.
fn by_address(state: &State, sign_in: Option<&Task>) -> Vec<Step> {
    let mut steps: Vec<Step> = sign_in.map(Step::of).into_iter().collect();
    steps.push(Step {
        action: "navigate".into(),
        selector: state.url.clone(),
        parameters: serde_json::json!({ "url": state.url }),
    });
    steps
}

/// Checks every state's recorded way on the new release: `reached[i]` says whether state `i` is
/// still there, `offered[i]` what its page offers now (read by the re-exploration), `sign_in`
/// the sign-in the start page offers now.
pub(crate) fn check(
    states: &[State],
    reached: &[bool],
    offered: &HashMap<usize, Vec<Task>>,
    sign_in: Option<&Task>,
) -> Vec<WayOutcome> {
    // A way's steps were taken on the states whose own ways are its beginnings.
    let by_path: HashMap<String, usize> = states
        .iter()
        .enumerate()
        .rev()
        .map(|(i, s)| (path_text(&s.path), i))
        .collect();
    states
        .iter()
        .enumerate()
        .map(|(index, state)| {
            if !reached[index] {
                return WayOutcome::Lost;
            }
            let mut way = Vec::with_capacity(state.path.len());
            for (i, step) in state.path.iter().enumerate() {
                let on = by_path.get(&path_text(&state.path[..i])).copied();
                let key = step_key(step);
                let now = on
                    .filter(|&on| reached[on])
                    .and_then(|on| offered.get(&on))
                    .and_then(|tasks| {
                        let same: Vec<&Task> =
                            tasks.iter().filter(|t| task_key(t) == key).collect();
                        same.iter()
                            .find(|t| t.selector == step.selector)
                            .or(same.first())
                            .copied()
                    });
                match now {
                    Some(task) => way.push(relocated(step, task)),
                    None => {
                        let signed_in = state.path.iter().any(|s| s.parameters["sign_in"] == true);
                        return WayOutcome::Replaced(by_address(
                            state,
                            sign_in.filter(|_| signed_in),
                        ));
                    }
                }
            }
            if way == state.path {
                WayOutcome::Kept
            } else {
                WayOutcome::Repaired(way)
            }
        })
        .collect()
}

fn path_text(path: &[Step]) -> String {
    serde_json::to_string(path).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn link(selector: &str, href: &str) -> Step {
        Step {
            action: "click".into(),
            selector: selector.into(),
            parameters: json!({"label": "Issues", "href": href}),
        }
    }

    fn form(selector: &str, field: &str, value: Option<&str>) -> Step {
        let mut f = json!({"name": "q", "type": "text", "selector": field});
        if let Some(v) = value {
            f["value"] = json!(v);
        }
        Step {
            action: "type".into(),
            selector: selector.into(),
            parameters: json!({"label": "Search", "action": "http://x/search", "fields": [f]}),
        }
    }

    fn task(step: &Step) -> Task {
        atlas_explore::tasks::pending(&step.selector, &step.action, step.parameters.clone())
    }

    fn state(name: &str, url: &str, path: Vec<Step>) -> State {
        State {
            page_id: name.into(),
            name: name.into(),
            url: url.into(),
            path,
            ..Default::default()
        }
    }

    #[test]
    fn a_way_whose_steps_are_still_offered_is_kept_or_takes_their_new_locators() {
        let to_issues = link("table a:nth-child(2)", "http://x/issue");
        let search = form("form#s", "#q", Some("测试"));
        let states = vec![
            state("home", "http://x/", vec![]),
            state("issues", "http://x/issue", vec![to_issues.clone()]),
            state(
                "found",
                "http://x/search?q=x",
                vec![to_issues.clone(), search.clone()],
            ),
        ];
        let reached = [true, true, true];
        // The release kept the home page's link where it was, and moved the search form.
        let moved = form("main form", "main input[name=q]", None);
        let offered = HashMap::from([(0, vec![task(&to_issues)]), (1, vec![task(&moved)])]);
        let routes = check(&states, &reached, &offered, None);
        assert_eq!(routes[0], WayOutcome::Kept);
        assert_eq!(routes[1], WayOutcome::Kept);
        let WayOutcome::Repaired(way) = &routes[2] else {
            panic!("{:?}", routes[2])
        };
        assert_eq!(way[0], to_issues);
        assert_eq!(way[1].selector, "main form");
        let field = &way[1].parameters["fields"][0];
        assert_eq!(field["selector"], "main input[name=q]");
        assert_eq!(field["value"], "测试", "what it typed is kept");
    }

    #[test]
    fn a_way_with_a_step_no_longer_offered_goes_by_the_address_signed_in_as_the_site_asks_now() {
        let mut sign_in = form("#login", "#user", Some("admin"));
        sign_in.parameters["sign_in"] = json!(true);
        let to_admin = link("a.admin", "http://x/admin");
        let states = vec![
            state("home", "http://x/", vec![]),
            state("signed", "http://x/", vec![sign_in.clone()]),
            state("admin", "http://x/admin", vec![sign_in.clone(), to_admin]),
            state("old", "http://x/old", vec![link("a.old", "http://x/old")]),
        ];
        let mut moved = form("header form", "#username", None);
        moved.parameters["sign_in"] = json!(true);
        moved.parameters["fields"][0]["name"] = json!("__login_name");
        let offered = HashMap::from([(0, vec![task(&moved)]), (1, vec![])]);
        let routes = check(
            &states,
            &[true, true, true, false],
            &offered,
            Some(&task(&moved)),
        );
        let WayOutcome::Replaced(way) = &routes[2] else {
            panic!("{:?}", routes[2])
        };
        assert_eq!(way.len(), 2);
        assert_eq!(
            way[0].selector, "header form",
            "signed in as the site asks now"
        );
        assert_eq!(way[1].action, "navigate");
        assert_eq!(way[1].parameters["url"], "http://x/admin");
        assert!(matches!(&routes[1], WayOutcome::Replaced(w) if w.len() == 2));
        assert_eq!(routes[3], WayOutcome::Lost);
    }
}
