//! The live board: a run told to an Atlas server as it goes (`report_test_run`), for the
//! viewer's runs page — each phone's test and step with a shrunk screenshot, each result.
//!
//! The board is for watching, never in the way: a server that refuses or cannot be reached is
//! logged once and the run goes on; the run's own reports are the record.

use std::sync::atomic::{AtomicBool, Ordering};

use atlas_api::test_runs::{ReportTestRunRequest, TestOutcome, TestRunEvent, TestStep};
use atlas_api::{ToolCaller, tools};
use base64::Engine;

use crate::report::{Status, TestResult, thumbnail};
use crate::run::Progress;
use crate::suite::Suite;

/// Screenshots on the board are smaller than the HTML report's: many arrive each second.
const BOARD_WIDTH: u32 = 240;

/// A run reported to the server behind `caller`.
pub struct Board<'a> {
    caller: &'a (dyn ToolCaller + Sync),
    run_id: String,
    failed: AtomicBool,
}

impl<'a> Board<'a> {
    /// Tells the server a run of `suite` on `phones` begins.
    pub fn start(
        caller: &'a (dyn ToolCaller + Sync),
        suite: &Suite,
        phones: &[String],
    ) -> Board<'a> {
        let board = Board {
            caller,
            run_id: format!(
                "{}-{}",
                chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f"),
                std::process::id()
            ),
            failed: AtomicBool::new(false),
        };
        board.send(ReportTestRunRequest {
            suite: Some(suite.name.clone()),
            tests: suite.tests.iter().map(|t| t.name.clone()).collect(),
            devices: phones.to_vec(),
            ..board.event(TestRunEvent::RunStarted)
        });
        board
    }

    /// The run's id on the board.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Tells the server the run is over.
    pub fn end(&self) {
        self.send(self.event(TestRunEvent::RunEnded));
    }

    /// An event of the run, its fields still to fill.
    fn event(&self, event: TestRunEvent) -> ReportTestRunRequest {
        ReportTestRunRequest {
            run_id: self.run_id.clone(),
            event,
            suite: None,
            tests: Vec::new(),
            devices: Vec::new(),
            device: None,
            test: None,
            step: None,
            result: None,
        }
    }

    /// An event of `test` on `device`.
    fn of_test(&self, event: TestRunEvent, device: &str, test: &str) -> ReportTestRunRequest {
        ReportTestRunRequest {
            device: Some(device.to_string()),
            test: Some(test.to_string()),
            ..self.event(event)
        }
    }

    fn send(&self, event: ReportTestRunRequest) {
        if let Err(e) = atlas_api::ask::<tools::ReportTestRun>(self.caller, &event)
            && !self.failed.swap(true, Ordering::SeqCst)
        {
            tracing::warn!("the runs board did not take the run's progress (the run goes on): {e}");
        }
    }
}

impl Progress for Board<'_> {
    fn started(&self, device: &str, test: &str) {
        self.send(self.of_test(TestRunEvent::TestStarted, device, test));
    }

    fn step(&self, device: &str, test: &str, step: usize, screen: &[u8]) {
        let small = thumbnail(screen, BOARD_WIDTH);
        let png = small.as_deref().unwrap_or(screen);
        self.send(ReportTestRunRequest {
            step: Some(TestStep {
                step,
                screenshot: Some(base64::engine::general_purpose::STANDARD.encode(png)),
                ..TestStep::default()
            }),
            ..self.of_test(TestRunEvent::Step, device, test)
        });
    }

    fn ended(&self, result: &TestResult, lost: bool) {
        let status = match (lost, result.status) {
            (true, _) => "lost",
            (false, Status::Passed) => "passed",
            (false, Status::Failed) => "failed",
            (false, Status::Error) => "error",
        };
        let trail = result
            .trail
            .iter()
            .map(|s| TestStep {
                step: s.step,
                chosen_by: s.chosen_by.clone(),
                action: clip(&s.action),
                page: s.page.as_deref().map(clip),
                screenshot: None,
            })
            .collect();
        self.send(ReportTestRunRequest {
            result: Some(TestOutcome {
                status: status.to_string(),
                message: clip(&result.message),
                steps: result.steps,
                model_calls: result.model_calls,
                graph_steps: result.graph_steps,
                seconds: result.seconds,
                trail,
            }),
            ..self.of_test(TestRunEvent::TestEnded, &result.device, &result.name)
        });
    }
}

/// Text as the board takes it (4,000 characters at most).
fn clip(text: &str) -> String {
    text.chars().take(4_000).collect()
}
