//! An app's trust borrows its prior from every other app's checks, kept as sessions change.

use atlas_graph::Graph;
use atlas_model::{AnswerKind, App, Check, Trace};

fn app(id: &str) -> App {
    App {
        app_id: id.into(),
        home_page: None,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
        ..Default::default()
    }
}

fn trace(app: &str, id: &str, rights: &[bool]) -> Trace {
    Trace {
        trace_id: id.into(),
        app_id: app.into(),
        session_id: id.into(),
        intent: "t".into(),
        steps: vec![],
        finished: None,
        finish_message: None,
        app_version: None,
        checks: rights
            .iter()
            .map(|&right| Check {
                at: 0,
                ..Check::now(AnswerKind::Labels, right, "")
            })
            .collect(),
        ends_on: None,
        verdict: None,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
    }
}

#[test]
fn the_prior_is_the_other_apps_checks_as_they_change() {
    let mut graph = Graph::new();
    graph.upsert_app(app("a"));
    graph.upsert_app(app("b"));
    let bound = |g: &Graph| g.trust("a", None, AnswerKind::Labels, "").bound;
    assert_eq!(bound(&graph), 0.0, "nothing checked anywhere");
    // B's clean record lends A a prior (at most four checks), never enough alone.
    graph.upsert_trace(trace("b", "b1", &[true; 50])).unwrap();
    let lent = bound(&graph);
    assert!(lent > 0.0 && lent < 0.7, "{lent}");
    // A's own checks are its own, not counted again as another's.
    graph.upsert_trace(trace("a", "a1", &[true; 60])).unwrap();
    let own = graph.trust("a", None, AnswerKind::Labels, "");
    assert_eq!((own.checked, own.wrong), (60, 0));
    assert!(own.bound >= 0.95, "{own:?}");
    // B's record turns bad: the prior A borrows follows it.
    graph
        .change_trace(
            "b",
            "b1",
            || unreachable!(),
            |t| t.checks.iter_mut().for_each(|c| c.right = false),
        )
        .unwrap();
    assert!(graph.trust("a", None, AnswerKind::Labels, "").bound < own.bound);
    assert_eq!(graph.trust("b", None, AnswerKind::Labels, "").wrong, 50);
}
