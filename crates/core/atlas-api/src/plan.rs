//! Planning over the map `observe_screen` answers where the graph is unsure: the routes from the
//! screen, the prompt a planning model reads, and the grammar of its reply.
//!
//! A planner answers one line: `route N` (take route N to its end), `route N steps M` (take its
//! first M steps) or `none`. Anything else is read as `none`, so a planner's slip costs the call
//! and never an action the map did not offer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::navigation::PathStep;

/// What a planner is told it does (its system message).
pub const PLANNER_SYSTEM: &str = "You plan a task on a phone app over a map of the app. You are shown the task, the page the phone is on and numbered routes from it, each a list of steps in words. Choose the route that does the task (or how many of its first steps do a part of it), or none. Answer with exactly one line: `route N`, `route N steps M`, or `none`.\n你在应用的地图上为手机任务做规划：给出任务、手机当前所在页面和从该页面出发的编号路线（每条路线是用文字描述的步骤）。选择完成任务的路线（或它的前几步），或者都不选。只回答一行：`route N`、`route N steps M` 或 `none`。";

/// The map around a screen, for a planner.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScreenMap {
    /// The routes, numbered from 1, most like the task first.
    pub routes: Vec<ScreenRoute>,
    /// The user message for a planning model (the task, the page, the routes in words and as
    /// JSON); its system message is the planner prompt of docs/evaluations.md.
    pub prompt: String,
}

/// One route of a screen's map.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScreenRoute {
    /// Its number.
    pub route: usize,
    /// The page it ends on.
    pub target_page_name: String,
    /// How alike its words and the task's are (0..1).
    pub relevance: f64,
    /// Its steps from this screen's page.
    pub steps: Vec<PathStep>,
    /// Its first step resolved on this screen, in the grammar's dict form.
    pub first: atlas_action::Action,
    /// For a first step that types: the point (pixels) to tap first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<[u32; 2]>,
}

/// What a planner's reply chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanChoice {
    /// Take the first `steps` steps of route `route` (all of them when `steps` is `None`).
    Route {
        /// The route's number.
        route: usize,
        /// How many of its steps.
        steps: Option<usize>,
    },
    /// No route fits (or the reply said nothing readable).
    None,
}

/// Reads a planner's reply: the last `route N [steps M]` or `none` in it (a model may think
/// aloud before it answers).
pub fn parse_plan_reply(reply: &str) -> PlanChoice {
    let lower = reply.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let number = |i: usize| words.get(i).and_then(|w| w.parse::<usize>().ok());
    let mut choice = PlanChoice::None;
    for (i, word) in words.iter().enumerate() {
        match *word {
            "route" => {
                if let Some(route) = number(i + 1).filter(|n| *n > 0) {
                    let steps = (words.get(i + 2) == Some(&"steps"))
                        .then(|| number(i + 3))
                        .flatten()
                        .filter(|m| *m > 0);
                    choice = PlanChoice::Route { route, steps };
                }
            }
            "none" => choice = PlanChoice::None,
            _ => {}
        }
    }
    choice
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_names_a_route_part_of_one_or_none() {
        let route = |route, steps| PlanChoice::Route { route, steps };
        assert_eq!(parse_plan_reply("route 2"), route(2, None));
        assert_eq!(parse_plan_reply("Route 3 steps 2"), route(3, Some(2)));
        assert_eq!(
            parse_plan_reply("<think>route 1 is long</think> `route 2 steps 1`"),
            route(2, Some(1))
        );
        assert_eq!(parse_plan_reply("none"), PlanChoice::None);
        assert_eq!(
            parse_plan_reply("route 1, or rather none"),
            PlanChoice::None
        );
        assert_eq!(parse_plan_reply("我选 route 4"), route(4, None));
        for unreadable in ["", "route", "route zero", "route 0", "do(action=\"Back\")"] {
            assert_eq!(
                parse_plan_reply(unreadable),
                PlanChoice::None,
                "{unreadable}"
            );
        }
        assert_eq!(parse_plan_reply("route 2 steps 0"), route(2, None));
    }
}
