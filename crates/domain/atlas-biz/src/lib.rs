//! The business graph of seed 003: business processes and their steps, the implementations
//! (APIs, services, jobs) behind the steps, and the data resources (tables) they read and write.
//!
//! Key design decision: **an imported graph is a value, checked whole and swapped whole.** The
//! seed's users keep this graph in Neo4j and export it; Atlas imports the export, checks that
//! every relation joins existing entities of the right types, and only then replaces what it
//! served. A half-imported graph, where a path could end at a missing table, never answers.
//! Every answer is computed from the graph by rules (search, summaries, contexts, paths), never
//! by a model, so the same question gets the same answer and an LLM on top can rely on it.

pub mod answers;
pub mod demo;
mod error;
mod graph;
pub mod import;
mod model;
mod requests;
mod search;
mod store;
mod tools;

pub use error::BizError;
pub use graph::{BusinessGraph, Node};
pub use model::*;
pub use requests::*;
pub use store::{BizStore, ImportReport};
pub use tools::{BizSnapshot, MAX_LIST, MAX_NEIGHBOURS, is_write};
