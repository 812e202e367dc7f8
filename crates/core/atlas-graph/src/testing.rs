//! What the planner's tests share: pages and transitions made up, random graphs, and
//! petgraph's Dijkstra as the reference.

use atlas_model::{Action, App, Page, Transition};

use crate::AppGraph;
use crate::cost::{Plan, edge_cost};

/// An app of that id with no pages yet.
pub(crate) fn empty_app(app_id: &str) -> AppGraph {
    AppGraph::new(App {
        app_id: app_id.into(),
        home_page: None,
        created_at: String::new(),
        updated_at: String::new(),
        ..Default::default()
    })
}

/// A page named `name` with nothing on it.
pub(crate) fn page(app: &str, name: &str, ordinal: u32) -> Page {
    Page {
        ordinal,
        ..Page::named(app, name)
    }
}

/// A tap on `text` from one page to another, with its successes and failures.
pub(crate) fn edge(app: &str, from: &str, to: &str, text: &str, ok: u64, fail: u64) -> Transition {
    let action = Action {
        action_type: "click".into(),
        widget_text: text.into(),
        ..Default::default()
    };
    let (f, t) = (
        atlas_model::page_id(app, from),
        atlas_model::page_id(app, to),
    );
    Transition {
        transition_id: atlas_model::transition_id(&f, &action, &t),
        app_id: app.into(),
        from_page: f,
        to_page: t,
        action,
        success_count: ok,
        fail_count: fail,
        latency_total_ms: 0.0,
        latency_samples: 0,
        last_failure_reason: String::new(),
        created_at: String::new(),
        updated_at: String::new(),
        ..Default::default()
    }
}

/// A deterministic pseudo-random graph with varied reliabilities.
pub(crate) fn random_graph(pages: usize, edges: usize, seed: u64) -> AppGraph {
    let mut state = seed;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut g = empty_app("r");
    for i in 0..pages {
        g.upsert_page(page("r", &format!("p{i}"), i as u32));
    }
    for e in 0..edges {
        let (f, t) = (next(pages as u64), next(pages as u64));
        let (ok, fail) = (next(30), next(10));
        g.upsert_transition(&edge(
            "r",
            &format!("p{f}"),
            &format!("p{t}"),
            &format!("w{e}"),
            ok,
            fail,
        ))
        .unwrap();
    }
    g
}

/// petgraph's Dijkstra over the same pages and transitions, from page `from` (over the links
/// reversed when `backward`): every page's cost, the reference the planner is checked against.
pub(crate) fn reference_dijkstra(g: &AppGraph, from: usize, backward: bool) -> Vec<Option<f64>> {
    let mut reference = petgraph::graph::DiGraph::<(), f64>::new();
    let nodes: Vec<_> = g.pages().iter().map(|_| reference.add_node(())).collect();
    let slot = |id: &str| g.pages().iter().position(|p| p.page_id == id).unwrap();
    for t in g.transitions() {
        let (a, b) = (slot(t.from_page()), slot(t.to_page()));
        let (a, b) = if backward { (b, a) } else { (a, b) };
        reference.add_edge(nodes[a], nodes[b], edge_cost(t.counts()));
    }
    let costs = petgraph::algo::dijkstra(&reference, nodes[from], None, |e| *e.weight());
    nodes.iter().map(|n| costs.get(n).copied()).collect()
}

/// Walks a plan's steps from `from`, checking they connect, and returns where it ends and
/// what it costs now.
pub(crate) fn walk(g: &AppGraph, from: usize, plan: &Plan) -> (String, f64) {
    let mut at = g.pages()[from].page_id.clone();
    let mut sum = 0.0;
    for step in &plan.steps {
        let tr = g.transition_at(*step);
        assert_eq!(tr.from_page(), at);
        at = tr.to_page().to_string();
        sum += edge_cost(tr.counts());
    }
    (at, sum)
}
