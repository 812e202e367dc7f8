//! Test runs (`atlas test run`): a suite of agent tests — a task, where it starts, what its end
//! must be — run on a fleet of phones at once, every agent on one shared graph, reported as JUnit
//! XML, a self-contained HTML page and JSON.
//!
//! Key design decision: **a test is an agent run, unchanged.** Each test is the same
//! [`PhoneAgent`](atlas_agent::phone::PhoneAgent) `atlas agent run` drives, with the same options,
//! on a [`TestPhone`](phones::TestPhone) that adds only what a runner needs around it (the app
//! started afresh, the phone's health); so a suite measures what a test engineer's agents do, and
//! what the graph learns from one test's run the next test on any phone gets.
//!
//! - [`suite`]: the suite file, checked whole before any phone moves.
//! - [`phones`]: `adb:`, `hdc:`, `sim:` and `simulate:` devices.
//! - [`check`]: every test's app and start asked of every phone before any phone moves.
//! - [`run`]: the queue the phones take tests from, a lost phone's test run again elsewhere.
//! - [`report`]: JSON and JUnit XML; [`html`]: the page, in the run's language.
//! - [`board`]: the run told live to an Atlas server, for the viewer's runs page.

pub mod board;
pub mod check;
pub mod html;
pub mod phones;
pub mod report;
pub mod run;
pub mod suite;

pub use check::{Misfit, check_suite};
pub use phones::{DeviceSpec, PhonesError, SpecError, TestPhone};
pub use report::{Status, SuiteReport, TestResult};
pub use run::{Progress, Quiet, RunConfig, run_suite};
pub use suite::{RulesError, Suite, SuiteError, SuiteProblem, read_rules};
