//! The graph engine: every app's pages and transitions in memory, and the planner that turns
//! "from here to there" into the steps an agent should take.
//!
//! Key design decision: **the graph is a cache of the store, rebuilt at start-up, and the planner
//! reads only it.** Each app keeps, beside its [`Page`]s and its transitions (compact rows, see
//! `transitions.rs`, read through [`TransitionRef`]), every
//! page's outgoing and incoming links in one array each (`links.rs`), numbered like those vectors
//! and holding the planning cost precomputed from the success statistics, so a query touches no
//! hash map and no disk while it searches. Pages and transitions are never removed, which keeps
//! those numbers stable.
//!
//! Path cost is `-ln(smoothed success rate) + STEP_COST` per step: the most reliable route wins,
//! but among equally reliable routes the shorter one does, and one failing edge weighs like several
//! extra steps. A transition a release was found without (gone, see [`atlas_model::versions`])
//! costs infinity: kept, and on no route; a version's own routes are searched apart (`versions.rs`).

mod app_graph;
mod cost;
mod id_index;
mod image;
mod intern;
mod links;
mod plan;
mod route_cache;
#[cfg(test)]
mod testing;
mod traces;
mod transitions;
mod versions;

pub use app_graph::{AppGraph, Graph, GraphError};
pub use cost::{Plan, STEP_COST};
pub use plan::PlanError;
pub use route_cache::{ASKER_BUILDS_UP_TO, CacheStats, TOLERANCE, TreeWanted};
pub use traces::MAX_TRACES_PER_APP;
pub use transitions::TransitionRef;
pub use versions::DiffError;
