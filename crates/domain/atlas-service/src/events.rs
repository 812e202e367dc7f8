//! What the graph learns, as events for live viewers: a report on an edge, a new edge, a page,
//! an intent, an app.

use atlas_graph::Graph;
use atlas_store::Record;
use serde_json::{Value, json};

/// Events kept per receiver before a slow one is told it lagged (and dropped by the server).
pub const BUFFERED: usize = 1024;

/// The events of `records`, as `graph` holds their entities once they are applied; none when
/// nobody listens (`wanted` false), so writes pay nothing.
pub(crate) fn of(graph: &Graph, records: &[Record], wanted: bool) -> Vec<Value> {
    if !wanted {
        return Vec::new();
    }
    let at = atlas_model::now_rfc3339();
    records
        .iter()
        .filter_map(|record| {
            Some(match record {
                Record::App(a) => json!({ "type": "app", "app_id": a.app_id, "at": at }),
                Record::Page(p) => json!({
                    "type": "page", "app_id": p.app_id, "page_id": p.page_id,
                    "page_name": p.page_name, "at": at
                }),
                Record::Intent(i) => json!({
                    "type": "intent", "app_id": i.app_id, "intent_id": i.intent_id,
                    "intent_text": i.intent_text, "at": at
                }),
                Record::Counted {
                    transition: t,
                    added,
                } => json!({
                    "type": "report", "app_id": t.app_id, "transition_id": t.transition_id,
                    "from_page": t.from_page, "to_page": t.to_page,
                    "widget_text": t.action.widget_text, "success": added.success > 0,
                    "success_count": t.success_count, "fail_count": t.fail_count, "at": at
                }),
                Record::Transition(t) => json!({
                    "type": "transition", "app_id": t.app_id, "transition_id": t.transition_id,
                    "from_page": t.from_page, "to_page": t.to_page,
                    "widget_text": t.action.widget_text,
                    "success_count": t.success_count, "fail_count": t.fail_count, "at": at
                }),
                Record::Added(a) => {
                    let t = graph.app(&a.app_id)?.transition(&a.transition_id)?;
                    json!({
                        "type": "report", "app_id": a.app_id, "transition_id": a.transition_id,
                        "from_page": t.from_page(), "to_page": t.to_page(),
                        "widget_text": t.action().widget_text, "success": a.added.success > 0,
                        "success_count": t.success_count(), "fail_count": t.fail_count(), "at": at
                    })
                }
                Record::Trace(_) | Record::Stepped(_) => return None,
            })
        })
        .collect()
}
