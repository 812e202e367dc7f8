//! Planning over the map (as GraphPilot does): on a screen the graph is not sure of, one call to
//! a planning model that reads the routes Atlas knows from the screen and names one (and how many
//! of its steps); the agent takes its first step at once and walks the rest without asking while
//! each screen is the page the route expects (`observe_screen` checks it).
//!
//! The planner may be a text-only model of its own (`--planner-url`), cheaper than the screen
//! model: it sees words, never a screenshot.

use atlas_action::Action;
use atlas_api::navigation::PathStep;
use atlas_api::plan::{PLANNER_SYSTEM, PlanChoice, ScreenMap, parse_plan_reply};
use atlas_device::Point;
use atlas_llm::Model;
use serde_json::json;

use crate::report::ModelCall;

/// What the planner chose: the route's first step (and the point to tap first when it types),
/// and the steps to walk after it.
pub struct Planned {
    /// The route's first step, resolved on the screen.
    pub first: Action,
    /// For a first step that types: the field to tap first.
    pub focus: Option<Point>,
    /// The steps after the first that the planner chose to take.
    pub rest: Vec<PathStep>,
}

/// One planner call: its reply, its timing, and the route it chose (`None`: none fits, or the
/// reply named no route of the map).
pub struct PlanAnswer {
    /// The reply as it came.
    pub reply: String,
    /// The call.
    pub call: ModelCall,
    /// The chosen route.
    pub planned: Option<Planned>,
}

/// Asks `planner` to choose a route of `map`.
pub fn ask(planner: &dyn Model, map: &ScreenMap) -> Result<PlanAnswer, atlas_llm::ModelError> {
    let body = json!({
        "messages": [
            {"role": "system", "content": PLANNER_SYSTEM},
            {"role": "user", "content": map.prompt},
        ],
        "stream": true, "temperature": 0, "max_tokens": 300,
    });
    let completion = planner.complete(&body, &mut |_| {})?;
    let planned = match parse_plan_reply(&completion.content) {
        PlanChoice::None => None,
        PlanChoice::Route { route, steps } => chosen(map, route, steps),
    };
    Ok(PlanAnswer {
        call: ModelCall {
            first_token_ms: completion.first_token_ms,
            total_ms: completion.total_ms,
            prompt_tokens: completion.prompt_tokens,
            completion_tokens: completion.completion_tokens,
            attempts: completion.attempts,
        },
        reply: completion.content,
        planned,
    })
}

/// Route `number` of the map, its first `steps` steps (all when `None`); `None` when the map has
/// no such route.
fn chosen(map: &ScreenMap, number: usize, steps: Option<usize>) -> Option<Planned> {
    let route = map.routes.iter().find(|r| r.route == number)?;
    let first = route.first.clone();
    let taken = steps.unwrap_or(route.steps.len()).min(route.steps.len());
    Some(Planned {
        first,
        focus: route.focus.map(|[x, y]| Point { x, y }),
        rest: route
            .steps
            .iter()
            .skip(1)
            .take(taken.saturating_sub(1))
            .cloned()
            .collect(),
    })
}
