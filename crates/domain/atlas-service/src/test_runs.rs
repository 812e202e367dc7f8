//! Test runs as their runner reports them (`atlas test run` → `report_test_run`), for the
//! viewer's live runs page (`get_test_runs`): each phone's test and step, each test's result and
//! the model calls the graph saved, a test's steps with their screenshots.
//!
//! Kept in memory only, the last [`MAX_RUNS`] runs: what a run proves is in the runner's own
//! reports (`--json`, `--junit`, `--html`), written where the test engineer asked; this board is
//! for watching, and after a restart it starts empty, as [`crate::activity`] does.

use std::collections::VecDeque;

use atlas_model::{AtlasError, Result};

pub use atlas_api::test_runs::{
    DeviceNow, MAX_SCREENSHOT, PNG_BASE64, ReportTestRunRequest, ReportTestRunResponse, RunSummary,
    TestOutcome, TestRunEvent, TestRunView, TestRunsRequest, TestRunsResponse, TestStep, TestView,
};
use base64::Engine;
use parking_lot::Mutex;

/// Runs remembered (the oldest goes first).
pub const MAX_RUNS: usize = 20;
pub use atlas_api::test_runs::MAX_TESTS;
use atlas_api::test_runs::{MAX_RUN_ID, MAX_TEXT};
/// Steps kept of one test.
pub const MAX_STEPS: usize = 500;
/// The most the board holds, in bytes of screenshots and texts over every run: past it the
/// oldest screenshots are dropped first (their steps stay, without a picture), then the oldest
/// runs. A run's own reports (`--html`) keep every screenshot; the board is for watching.
pub const MAX_BOARD_BYTES: usize = 128 << 20;
/// Steps one `get_test_runs` answer holds at most (`steps_from` pages through the rest).
pub const MAX_STEPS_ANSWERED: usize = 100;

struct Run {
    view: TestRunView,
    tests: Vec<(TestView, Vec<TestStep>)>,
}

/// The runs reported to this process.
#[derive(Default)]
pub struct TestRuns {
    board: Mutex<Board>,
}

/// The runs, newest first, and the bytes they hold (see [`MAX_BOARD_BYTES`]).
#[derive(Default)]
struct Board {
    runs: VecDeque<Run>,
    bytes: usize,
}

/// What a step holds, in bytes.
fn step_bytes(step: &TestStep) -> usize {
    step.screenshot.as_ref().map_or(0, String::len)
        + step.action.len()
        + step.chosen_by.len()
        + step.page.as_ref().map_or(0, String::len)
        + 64
}

/// What a run holds, in bytes.
fn run_bytes(run: &Run) -> usize {
    run.tests
        .iter()
        .map(|(t, steps)| {
            t.name.len()
                + t.result.as_ref().map_or(0, |r| r.message.len())
                + 128
                + steps.iter().map(step_bytes).sum::<usize>()
        })
        .sum()
}

impl Board {
    /// Drops the oldest screenshots, then the oldest runs but the newest, when the board holds
    /// more than its budget: down to three quarters of it, so that the scan comes once in
    /// many reports rather than at each.
    fn trim(&mut self, budget: usize) {
        if self.bytes <= budget {
            return;
        }
        let budget = budget / 4 * 3;
        'screenshots: for run in self.runs.iter_mut().rev() {
            for (_, steps) in &mut run.tests {
                for step in steps.iter_mut() {
                    if self.bytes <= budget {
                        break 'screenshots;
                    }
                    if let Some(shot) = step.screenshot.take() {
                        self.bytes = self.bytes.saturating_sub(shot.len());
                    }
                }
            }
        }
        while self.bytes > budget && self.runs.len() > 1 {
            if let Some(run) = self.runs.pop_back() {
                self.bytes = self.bytes.saturating_sub(run_bytes(&run));
            }
        }
    }
}

fn text(field: &str, value: &str) -> Result<()> {
    if value.chars().count() > MAX_TEXT {
        return Err(AtlasError::invalid(
            field,
            format!("{field} is over {MAX_TEXT} characters"),
        ));
    }
    Ok(())
}

fn check(request: &ReportTestRunRequest) -> Result<()> {
    let id = request.run_id.trim();
    if id.is_empty() || id.chars().count() > MAX_RUN_ID {
        return Err(AtlasError::invalid(
            "run_id",
            format!("run_id must be 1 to {MAX_RUN_ID} characters"),
        ));
    }
    if request.tests.len() > MAX_TESTS || request.devices.len() > MAX_TESTS {
        return Err(AtlasError::invalid(
            "tests",
            format!("a run has at most {MAX_TESTS} tests and phones"),
        ));
    }
    for (field, value) in [
        ("suite", request.suite.as_deref()),
        ("device", request.device.as_deref()),
        ("test", request.test.as_deref()),
    ] {
        text(field, value.unwrap_or_default())?;
    }
    for name in request.tests.iter().chain(&request.devices) {
        text("tests", name)?;
    }
    let steps = request
        .step
        .iter()
        .chain(request.result.iter().flat_map(|r| r.trail.iter()));
    for step in steps {
        text("step.action", &step.action)?;
        text("step.chosen_by", &step.chosen_by)?;
        text("step.page", step.page.as_deref().unwrap_or_default())?;
        if let Some(shot) = &step.screenshot {
            if shot.len() > MAX_SCREENSHOT {
                return Err(AtlasError::invalid(
                    "step.screenshot",
                    format!("a screenshot is at most {MAX_SCREENSHOT} base64 characters"),
                ));
            }
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot)
                .map_err(|e| AtlasError::invalid("step.screenshot", format!("not base64: {e}")))?;
            if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
                return Err(AtlasError::invalid(
                    "step.screenshot",
                    "the screenshot is not a PNG",
                ));
            }
        }
    }
    if let Some(result) = &request.result {
        text("result.message", &result.message)?;
        if !matches!(
            result.status.as_str(),
            "passed" | "failed" | "error" | "lost"
        ) {
            return Err(AtlasError::invalid(
                "result.status",
                "status is passed, failed, error or lost",
            ));
        }
        if !result.seconds.is_finite() || result.seconds < 0.0 {
            return Err(AtlasError::invalid(
                "result.seconds",
                "seconds is a finite number ≥ 0",
            ));
        }
    }
    Ok(())
}

impl TestRuns {
    /// Takes one event of a run; an event naming a run, a test or a phone the run does not have
    /// is refused, and changes nothing.
    pub fn report(&self, request: ReportTestRunRequest) -> Result<ReportTestRunResponse> {
        check(&request)?;
        let now = chrono::Utc::now().to_rfc3339();
        let mut board = self.board.lock();
        let answer = Self::take(&mut board, request, now);
        board.trim(MAX_BOARD_BYTES);
        answer
    }

    fn take(
        board: &mut Board,
        request: ReportTestRunRequest,
        now: String,
    ) -> Result<ReportTestRunResponse> {
        let Board { runs, bytes } = board;
        if request.event == TestRunEvent::RunStarted {
            runs.retain(|r| {
                let keep = r.view.run_id != request.run_id;
                if !keep {
                    *bytes = bytes.saturating_sub(run_bytes(r));
                }
                keep
            });
            if runs.len() >= MAX_RUNS
                && let Some(run) = runs.pop_back()
            {
                *bytes = bytes.saturating_sub(run_bytes(&run));
            }
            let tests: Vec<(TestView, Vec<TestStep>)> = request
                .tests
                .iter()
                .map(|name| {
                    (
                        TestView {
                            name: name.clone(),
                            status: "pending".into(),
                            device: None,
                            result: None,
                            lost: 0,
                            steps: Vec::new(),
                            steps_total: 0,
                        },
                        Vec::new(),
                    )
                })
                .collect();
            runs.push_front(Run {
                view: TestRunView {
                    run_id: request.run_id.clone(),
                    suite: request.suite.clone().unwrap_or_default(),
                    started_at: now,
                    ended_at: None,
                    summary: RunSummary {
                        tests: tests.len(),
                        ..Default::default()
                    },
                    devices: request
                        .devices
                        .iter()
                        .map(|d| DeviceNow {
                            device: d.clone(),
                            test: None,
                            step: None,
                        })
                        .collect(),
                    tests: Vec::new(),
                },
                tests,
            });
            *bytes += run_bytes(&runs[0]);
            return Ok(ReportTestRunResponse {
                remaining: runs[0].tests.len(),
            });
        }
        let run = runs
            .iter_mut()
            .find(|r| r.view.run_id == request.run_id)
            .ok_or_else(|| {
                AtlasError::NotFound(format!(
                    "no run {} (report run_started first)",
                    request.run_id
                ))
            })?;
        if request.event == TestRunEvent::RunEnded {
            run.view.ended_at = Some(now);
            for device in &mut run.view.devices {
                device.test = None;
                device.step = None;
            }
            return Ok(ReportTestRunResponse {
                remaining: remaining(run),
            });
        }
        let device_name = request
            .device
            .clone()
            .ok_or_else(|| AtlasError::invalid("device", "the event's phone is missing"))?;
        let test_name = request
            .test
            .clone()
            .ok_or_else(|| AtlasError::invalid("test", "the event's test is missing"))?;
        let device = run
            .view
            .devices
            .iter()
            .position(|d| d.device == device_name)
            .ok_or_else(|| AtlasError::NotFound(format!("no phone {device_name} in the run")))?;
        let test = run
            .tests
            .iter()
            .position(|(t, _)| t.name == test_name)
            .ok_or_else(|| AtlasError::NotFound(format!("no test {test_name} in the run")))?;
        let (view, steps) = &mut run.tests[test];
        let now_on = &mut run.view.devices[device];
        match request.event {
            TestRunEvent::TestStarted => {
                view.status = "running".into();
                view.device = Some(device_name);
                *bytes = bytes.saturating_sub(steps.iter().map(step_bytes).sum::<usize>());
                steps.clear();
                now_on.test = Some(test_name);
                now_on.step = None;
            }
            TestRunEvent::Step => {
                let step = request
                    .step
                    .ok_or_else(|| AtlasError::invalid("step", "a step event carries its step"))?;
                now_on.test = Some(test_name);
                now_on.step = Some(step.step);
                keep(steps, step, bytes);
            }
            TestRunEvent::TestEnded => {
                let mut result = request.result.ok_or_else(|| {
                    AtlasError::invalid("result", "test_ended carries its result")
                })?;
                for step in std::mem::take(&mut result.trail) {
                    keep(steps, step, bytes);
                }
                *bytes += result.message.len();
                if let Some(earlier) = &view.result {
                    *bytes = bytes.saturating_sub(earlier.message.len());
                }
                if result.status == "lost" {
                    view.lost += 1;
                    view.status = "pending".into();
                } else {
                    view.status = result.status.clone();
                }
                view.result = Some(result);
                now_on.test = None;
                now_on.step = None;
            }
            TestRunEvent::RunStarted | TestRunEvent::RunEnded => {}
        }
        Ok(ReportTestRunResponse {
            remaining: remaining(run),
        })
    }

    /// The runs, newest first (without their tests), or one run with its tests, and one test's
    /// steps.
    pub fn get(&self, request: TestRunsRequest) -> Result<TestRunsResponse> {
        let board = self.board.lock();
        let runs = &board.runs;
        let Some(run_id) = &request.run_id else {
            return Ok(TestRunsResponse {
                runs: runs.iter().map(|r| view_of(r, false, None)).collect(),
            });
        };
        let run = runs
            .iter()
            .find(|r| &r.view.run_id == run_id)
            .ok_or_else(|| AtlasError::NotFound(format!("no run {run_id}")))?;
        if let Some(test) = &request.test
            && !run.tests.iter().any(|(t, _)| &t.name == test)
        {
            return Err(AtlasError::NotFound(format!("no test {test} in the run")));
        }
        let steps_of = request.test.as_deref().map(|t| (t, request.steps_from));
        Ok(TestRunsResponse {
            runs: vec![view_of(run, true, steps_of)],
        })
    }
}

/// A step into a test's steps: merged with its earlier report, or added while there is room;
/// `bytes` follows what the steps hold.
fn keep(steps: &mut Vec<TestStep>, step: TestStep, bytes: &mut usize) {
    if let Some(kept) = steps.iter_mut().find(|s| s.step == step.step) {
        *bytes = bytes.saturating_sub(step_bytes(kept));
        merge(kept, step);
        *bytes += step_bytes(kept);
    } else if steps.len() < MAX_STEPS {
        *bytes += step_bytes(&step);
        steps.push(step);
    }
}

/// A step's later report fills in what the earlier lacked (the action after the screenshot).
fn merge(kept: &mut TestStep, new: TestStep) {
    if !new.chosen_by.is_empty() {
        kept.chosen_by = new.chosen_by;
    }
    if !new.action.is_empty() {
        kept.action = new.action;
    }
    if new.page.is_some() {
        kept.page = new.page;
    }
    if new.screenshot.is_some() {
        kept.screenshot = new.screenshot;
    }
}

fn remaining(run: &Run) -> usize {
    run.tests
        .iter()
        .filter(|(t, _)| matches!(t.status.as_str(), "pending" | "running"))
        .count()
}

/// A run as answered: its tests when `with_tests`, and the steps of `steps_of`'s test from its
/// step index on.
fn view_of(run: &Run, with_tests: bool, steps_of: Option<(&str, usize)>) -> TestRunView {
    let mut view = run.view.clone();
    let mut summary = RunSummary {
        tests: run.tests.len(),
        ..Default::default()
    };
    for (t, _) in &run.tests {
        match t.status.as_str() {
            "passed" => summary.passed += 1,
            "failed" => summary.failed += 1,
            "error" => summary.errors += 1,
            "running" => summary.running += 1,
            _ => {}
        }
        if let Some(r) = &t.result {
            summary.model_calls += r.model_calls;
            summary.graph_steps += r.graph_steps;
        }
    }
    view.summary = summary;
    if with_tests {
        view.tests = run
            .tests
            .iter()
            .map(|(t, steps)| {
                let mut t = t.clone();
                if let Some((name, from)) = steps_of
                    && name == t.name
                {
                    t.steps_total = steps.len();
                    t.steps = steps
                        .iter()
                        .skip(from)
                        .take(MAX_STEPS_ANSWERED)
                        .cloned()
                        .collect();
                }
                t
            })
            .collect();
    }
    view
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: TestRunEvent) -> ReportTestRunRequest {
        ReportTestRunRequest {
            run_id: "r1".into(),
            event: kind,
            suite: None,
            tests: Vec::new(),
            devices: Vec::new(),
            device: Some("sim-1".into()),
            test: Some("登录".into()),
            step: None,
            result: None,
        }
    }

    /// 2,100 steps of 511 KiB screenshots once took a gigabyte: the board keeps its budget,
    /// the newest screenshots stay, and an answer holds one page of steps.
    #[test]
    fn the_board_keeps_within_its_bytes_and_answers_a_page_of_steps_at_a_time() {
        let runs = TestRuns::default();
        let mut start = event(TestRunEvent::RunStarted);
        start.tests = (0..3).map(|t| format!("test {t}")).collect();
        start.devices = vec!["sim-1".into()];
        runs.report(start).unwrap();
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.resize(380 * 1024, 7);
        let shot = base64::engine::general_purpose::STANDARD.encode(&png);
        assert!(shot.len() > 500 * 1024 && shot.len() <= MAX_SCREENSHOT);
        for t in 0..3 {
            let mut started = event(TestRunEvent::TestStarted);
            started.test = Some(format!("test {t}"));
            runs.report(started).unwrap();
            for n in 1..=MAX_STEPS {
                let mut step = event(TestRunEvent::Step);
                step.test = Some(format!("test {t}"));
                step.step = Some(TestStep {
                    step: n,
                    action: "tap(540, 960)".into(),
                    screenshot: Some(shot.clone()),
                    ..Default::default()
                });
                runs.report(step).unwrap();
            }
        }
        let held = runs.board.lock().bytes;
        let counted: usize = runs.board.lock().runs.iter().map(run_bytes).sum();
        assert_eq!(held, counted, "the board's count follows what it holds");
        assert!(held <= MAX_BOARD_BYTES, "{held} bytes held");
        let page = |test: &str, from: usize| {
            runs.get(TestRunsRequest {
                run_id: Some("r1".into()),
                test: Some(test.into()),
                steps_from: from,
            })
            .unwrap()
            .runs[0]
                .tests
                .iter()
                .find(|t| t.name == test)
                .unwrap()
                .clone()
        };
        let newest = page("test 2", MAX_STEPS - MAX_STEPS_ANSWERED);
        assert_eq!(newest.steps_total, MAX_STEPS);
        assert_eq!(newest.steps.len(), MAX_STEPS_ANSWERED);
        assert!(newest.steps.iter().all(|s| s.screenshot.is_some()));
        let oldest = page("test 0", 0);
        assert!(oldest.steps.iter().all(|s| s.screenshot.is_none()));
        assert_eq!(oldest.steps[0].action, "tap(540, 960)", "the step stays");
    }

    #[test]
    fn a_run_is_followed_from_its_start_to_its_end_and_bad_events_change_nothing() {
        let runs = TestRuns::default();
        assert!(
            runs.report(event(TestRunEvent::TestStarted)).is_err(),
            "no run yet"
        );
        let mut start = event(TestRunEvent::RunStarted);
        start.suite = Some("冒烟".into());
        start.tests = vec!["登录".into(), "搜索".into()];
        start.devices = vec!["sim-1".into(), "sim-2".into()];
        assert_eq!(runs.report(start).unwrap().remaining, 2);
        runs.report(event(TestRunEvent::TestStarted)).unwrap();
        let mut step = event(TestRunEvent::Step);
        step.step = Some(TestStep {
            step: 1,
            screenshot: Some(
                base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest"),
            ),
            ..Default::default()
        });
        runs.report(step.clone()).unwrap();
        let one = runs
            .get(TestRunsRequest {
                run_id: Some("r1".into()),
                test: None,
                steps_from: 0,
            })
            .unwrap();
        assert_eq!(one.runs[0].devices[0].test.as_deref(), Some("登录"));
        assert_eq!(one.runs[0].devices[0].step, Some(1));
        assert_eq!(one.runs[0].summary.running, 1);
        // Refused, and nothing changed: a phone or a test the run lacks, a screenshot not a PNG.
        let mut stranger = step.clone();
        stranger.device = Some("sim-9".into());
        assert!(runs.report(stranger).is_err());
        let mut not_png = step.clone();
        not_png.step.as_mut().unwrap().screenshot = Some("aGVsbG8=".into());
        assert!(runs.report(not_png).is_err());
        // The schema's pattern says what the check takes: every length's remainder, a damaged
        // signature, stray bits in the last symbol, a line break.
        let pattern = regex::Regex::new(PNG_BASE64).unwrap();
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
        let mut shots: Vec<String> = (0..12)
            .flat_map(|n| {
                let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
                png.extend((0..n).map(|i| (i * 37 + 200) as u8));
                let mut broken = png.clone();
                broken[3] = b'J';
                [b64(&png), b64(&broken), format!("{}\n", b64(&png))]
            })
            .collect();
        shots.extend([
            "iVBORw0KGgp=".into(),
            "iVBORw0KGgoAAB==".into(),
            "iVBORw0KGgo".into(),
        ]);
        for shot in shots {
            let mut sent = step.clone();
            sent.step.as_mut().unwrap().screenshot = Some(shot.clone());
            let taken = check(&sent).is_ok();
            assert_eq!(pattern.is_match(&shot), taken, "{shot:?}");
        }
        let mut ended = event(TestRunEvent::TestEnded);
        ended.result = Some(TestOutcome {
            status: "passed".into(),
            steps: 1,
            model_calls: 0,
            graph_steps: 1,
            seconds: 0.5,
            trail: vec![TestStep {
                step: 1,
                chosen_by: "graph".into(),
                action: "{\"action\":\"Tap\"}".into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        assert_eq!(runs.report(ended).unwrap().remaining, 1);
        let run = runs
            .get(TestRunsRequest {
                run_id: Some("r1".into()),
                test: Some("登录".into()),
                steps_from: 0,
            })
            .unwrap();
        let test = &run.runs[0].tests[0];
        assert_eq!(test.status, "passed");
        assert_eq!(test.steps[0].chosen_by, "graph");
        assert!(
            test.steps[0].screenshot.is_some(),
            "the step's screenshot kept"
        );
        assert_eq!(run.runs[0].summary.graph_steps, 1);
        assert_eq!(run.runs[0].devices[0].test, None);
        assert!(
            runs.get(TestRunsRequest {
                run_id: Some("r2".into()),
                test: None,
                steps_from: 0,
            })
            .is_err()
        );
    }
}
