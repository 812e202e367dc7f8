//! The live board: a run told to an Atlas server as it goes (`report_test_run`), for the
//! viewer's runs page — each phone's test and step with a shrunk screenshot, each result.
//!
//! The board is for watching, never in the way: a server that refuses or cannot be reached is
//! logged once and the run goes on; the run's own reports are the record.

use std::sync::atomic::{AtomicBool, Ordering};

use atlas_client::ToolCaller;
use base64::Engine;
use serde_json::{Value, json};

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
        board.send(json!({
            "event": "run_started",
            "suite": suite.name,
            "tests": suite.tests.iter().map(|t| &t.name).collect::<Vec<_>>(),
            "devices": phones,
        }));
        board
    }

    /// The run's id on the board.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Tells the server the run is over.
    pub fn end(&self) {
        self.send(json!({"event": "run_ended"}));
    }

    fn send(&self, mut event: Value) {
        event["run_id"] = json!(self.run_id);
        if let Err(e) = self.caller.call("report_test_run", event)
            && !self.failed.swap(true, Ordering::SeqCst)
        {
            tracing::warn!("the runs board did not take the run's progress (the run goes on): {e}");
        }
    }
}

impl Progress for Board<'_> {
    fn started(&self, device: &str, test: &str) {
        self.send(json!({"event": "test_started", "device": device, "test": test}));
    }

    fn step(&self, device: &str, test: &str, step: usize, screen: &[u8]) {
        let small = thumbnail(screen, BOARD_WIDTH);
        let png = small.as_deref().unwrap_or(screen);
        self.send(json!({
            "event": "step", "device": device, "test": test,
            "step": {"step": step, "screenshot": base64::engine::general_purpose::STANDARD.encode(png)},
        }));
    }

    fn ended(&self, result: &TestResult, lost: bool) {
        let status = match (lost, result.status) {
            (true, _) => "lost",
            (false, Status::Passed) => "passed",
            (false, Status::Failed) => "failed",
            (false, Status::Error) => "error",
        };
        let trail: Vec<Value> = result
            .trail
            .iter()
            .map(|s| json!({"step": s.step, "chosen_by": s.chosen_by, "action": clip(&s.action), "page": s.page.as_deref().map(clip)}))
            .collect();
        self.send(json!({
            "event": "test_ended", "device": result.device, "test": result.name,
            "result": {
                "status": status, "message": clip(&result.message), "steps": result.steps,
                "model_calls": result.model_calls, "graph_steps": result.graph_steps,
                "seconds": result.seconds, "trail": trail,
            },
        }));
    }
}

/// Text as the board takes it (4,000 characters at most).
fn clip(text: &str) -> String {
    text.chars().take(4_000).collect()
}
