//! The evaluations: how good the graph's answers are on DroidTask (`atlas eval droidtask`), how
//! the phone agent fares with them (`atlas eval agent`), the leave-one-app-out fitting of the
//! grounding model, teaching recordings through the tool interfaces, DroidTask's ideal model
//! served over HTTP ([`ideal_server`]) for test runs, and retrieval on labelled sets
//! ([`retrieval`]: intents, knowledge bases, the business graph).
//!
//! Key design decision: **an evaluation measures what the server answers.** It starts a real
//! server on loopback (or talks to one at a URL) and goes through HTTP as an agent would
//! ([`server::EvalServer`]); the agent it runs is the runtime `atlas agent run` uses, on a
//! simulated phone through the device trait. Living apart from the runtime, the evaluations may
//! depend on the simulator, the dataset readers and the ranker; the agent and the service do not.

pub mod agent;
pub mod droidtask;
pub mod fleet;
pub mod ideal_server;
pub mod judge;
pub mod loao;
pub mod look;
pub mod mistakes;
mod planner;
pub mod release;
pub mod retrieval;
pub mod same_screens;
pub mod server;
pub mod task_run;
pub mod teach;
pub mod truth;
