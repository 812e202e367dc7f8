//! The agent's side of Atlas: what an agent tells Atlas about the screens it sees and the steps it
//! takes, what it asks, and the DroidTask evaluation that measures how good the answers are.
//!
//! Key design decision: **everything here goes through the tool interfaces by name** (the
//! [`ToolCaller`] trait, served by HTTP or by the in-process registry), never through the
//! service's internals. An import teaches exactly what a live agent could have reported, and the
//! evaluation measures exactly what an agent would get over the wire.

pub mod agent_eval;
pub mod caller;
pub mod droidtask_eval;
pub mod graph;
pub mod guard;
pub mod knowledge;
pub mod loao;
pub mod phone;
pub mod teach;

pub use caller::{CallError, HttpCaller, ServiceCaller, ToolCaller};
