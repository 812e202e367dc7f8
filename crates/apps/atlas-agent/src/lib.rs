//! The phone agent: it looks at a screen, asks the graph first, asks its model when the graph is
//! unsure, acts on the phone within the guard's rules, and tells Atlas what each step did.
//!
//! Key design decision: **everything here goes through the tool interfaces** (the typed client
//! of `atlas-client`, over HTTP or the in-process registry), never through the service's
//! internals, so an agent in process and one across the network get the same answers; the graph
//! in the loop is one interface, `observe_screen` ([`graph`]).
//! The runtime knows no dataset, simulator or ranker: the evaluations that measure it
//! (`atlas-eval`) drive it from outside, through the same [`Device`](atlas_device::Device) and
//! model traits a real phone and a real model use.

mod error;
pub mod graph;
pub mod knowledge;
pub mod phone;
pub mod plan;
pub mod report;

pub use atlas_client::{CallError, HttpCaller, ToolCaller};
pub use error::{ActionError, KnowledgeError, StepError};
