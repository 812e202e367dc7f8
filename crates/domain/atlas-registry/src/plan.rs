//! The user message a planning model reads over `observe_screen`'s map: the task, the page and
//! the routes from it. The map's types, the planner's system prompt and the grammar of its reply
//! are the interface's (`atlas_api::plan`).

use atlas_service::MapRoute;
use serde_json::Value;

/// The planner's user message: the task, the page, and each route in words and as JSON.
pub(crate) fn prompt(task: &str, page_name: &str, routes: &[MapRoute]) -> String {
    let mut text = format!(
        "Task / 任务: {task}\nThe phone is on page / 当前页面: {page_name}\nRoutes from it / 可走的路线:\n"
    );
    for route in routes {
        let steps: Vec<String> = route
            .steps
            .iter()
            .map(|s| format!("{}. {}", s.step, s.description))
            .collect();
        text.push_str(&format!(
            "route {} (to {}): {}\n",
            route.route,
            route.target_page_name,
            steps.join(" → ")
        ));
    }
    let listed: Vec<Value> = routes
        .iter()
        .map(|r| {
            serde_json::json!({
                "route": r.route,
                "steps": r.steps.iter().map(|s| serde_json::json!({
                    "action_type": s.action_type, "widget_id": s.widget_id,
                    "widget_text": s.widget_text, "input_text": s.input_text,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    text.push_str(&format!(
        "Routes as JSON: {}\nAnswer with one line: `route N`, `route N steps M` or `none`.",
        Value::Array(listed)
    ));
    text
}
