//! Running a suite: one thread per phone, each taking the next test from one queue, so a fast
//! phone runs more tests and no phone waits for another; every agent talks to the same graph, so
//! what one phone learns the next test on any phone uses at once.
//!
//! A test that ends in an error on a phone that no longer answers was lost to the phone, not
//! failed: the phone leaves the run and the test goes back in the queue for another (its lost
//! attempt stays in its result). Only when no phone is left does a test end without a run.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use atlas_agent::graph::GraphLink;
use atlas_agent::knowledge::KnowledgeConfig;
use atlas_agent::phone::{AgentConfig, Chooser, Ending, PhoneAgent, RunReport, Unattended};
use atlas_api::pages::{MatchPageRequest, UiHierarchy};
use atlas_client::{GraphClient, ToolCaller};
use atlas_device::{DeviceError, Screenshot, Watched};
use atlas_guard::{Guard, RuleSet};
use atlas_model::Widget;

use crate::phones::TestPhone;
use crate::report::{LostAttempt, Status, StepShot, SuiteReport, TestResult};
use crate::suite::{Finish, Suite, Test};

/// How a run's agents work: `atlas agent run`'s options.
pub struct RunConfig {
    /// The screen model.
    pub model: atlas_llm::ModelConfig,
    /// The planner over the graph's map, with a graph.
    pub planner: Option<atlas_llm::ModelConfig>,
    /// Steps a test may take when it does not say.
    pub max_steps: usize,
    /// `zh` or `en`: the system prompt's language.
    pub lang: String,
    /// The run's guard rules (the shipped ones included); a test's own come beside them.
    pub rules: Vec<RuleSet>,
    /// The graph's calibrated confidence at which its action is taken without the model.
    pub fast_path: f64,
    /// The app's id in the graph for every test (default: each screen's app, as `atlas agent
    /// run` takes it).
    pub app_id: Option<String>,
    /// Where a test's `knowledge` (a dataset id) is asked: a Dify-compatible base URL and its
    /// token.
    pub knowledge_base: Option<(String, Option<String>)>,
    /// Confirm sensitive taps (nobody is at the phones).
    pub yes: bool,
    /// Runs of a test lost to phones before it ends as an error.
    pub max_attempts: usize,
    /// Set from outside (Ctrl-C): tests under way stop after their step, no test starts.
    pub stop: Arc<AtomicBool>,
}

/// What a run tells as it goes (a progress bar, a live page).
pub trait Progress: Sync {
    /// A test started on a phone.
    fn started(&self, _device: &str, _test: &str) {}
    /// A test's step began on this screen (a PNG).
    fn step(&self, _device: &str, _test: &str, _step: usize, _screen: &[u8]) {}
    /// A test ended (or was lost, with the phone, and goes back in the queue).
    fn ended(&self, _result: &TestResult, _lost: bool) {}
}

/// Tells nothing.
pub struct Quiet;
impl Progress for Quiet {}

struct Queue {
    waiting: VecDeque<(usize, Vec<LostAttempt>)>,
    running: usize,
    phones: usize,
}

/// Runs `suite` on `phones` (each test on one phone, the phones in parallel), with the graph of
/// `graph` when given.
pub fn run_suite(
    suite: &Suite,
    phones: Vec<Box<dyn TestPhone>>,
    config: &RunConfig,
    graph: Option<&(dyn ToolCaller + Sync)>,
    progress: &dyn Progress,
) -> SuiteReport {
    let started = Instant::now();
    let queue = Mutex::new(Queue {
        waiting: (0..suite.tests.len()).map(|i| (i, Vec::new())).collect(),
        running: 0,
        phones: phones.len(),
    });
    let changed = Condvar::new();
    let results: Mutex<Vec<Option<TestResult>>> = Mutex::new(vec![None; suite.tests.len()]);
    std::thread::scope(|scope| {
        for mut phone in phones {
            let (queue, changed, results) = (&queue, &changed, &results);
            scope.spawn(move || {
                while let Some((index, lost)) = next(queue, changed, config) {
                    let test = &suite.tests[index];
                    progress.started(&phone.name(), &test.name);
                    let mut result =
                        run_test(&suite.name, test, phone.as_mut(), config, graph, progress);
                    result.lost = lost;
                    let gone = result.status == Status::Error && !phone.alive();
                    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
                    q.running -= 1;
                    if gone {
                        q.phones -= 1;
                        let mut lost = std::mem::take(&mut result.lost);
                        lost.push(LostAttempt {
                            device: result.device.clone(),
                            message: result.message.clone(),
                            seconds: result.seconds,
                        });
                        progress.ended(&result, true);
                        if q.phones > 0 && lost.len() < config.max_attempts.max(1) {
                            q.waiting.push_front((index, lost));
                        } else {
                            result.lost = lost;
                            result.message = format!(
                                "{} (the phone was lost; no phone left to run it again)",
                                result.message
                            );
                            store(results, index, result);
                        }
                        changed.notify_all();
                        break;
                    }
                    progress.ended(&result, false);
                    store(results, index, result);
                    changed.notify_all();
                }
            });
        }
    });
    let queue = queue.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    // Tests no phone was left to run, or that a stop kept from starting.
    for (index, lost) in queue.waiting {
        let test = &suite.tests[index];
        let why = if config.stop.load(Ordering::SeqCst) {
            "not run: the run was stopped"
        } else {
            "not run: every phone was lost"
        };
        results[index] = Some(TestResult::not_run(test, why, lost));
    }
    SuiteReport::new(
        &suite.name,
        results
            .into_iter()
            .zip(&suite.tests)
            .map(|(r, t)| r.unwrap_or_else(|| TestResult::not_run(t, "not run", Vec::new())))
            .collect(),
        started.elapsed().as_secs_f64(),
        &config.lang,
    )
}

fn store(results: &Mutex<Vec<Option<TestResult>>>, index: usize, result: TestResult) {
    results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
}

/// The next test for a phone: waits while others run tests that may come back; `None` when
/// there is nothing left (or the run was stopped).
fn next(
    queue: &Mutex<Queue>,
    changed: &Condvar,
    config: &RunConfig,
) -> Option<(usize, Vec<LostAttempt>)> {
    let mut q = queue.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if config.stop.load(Ordering::SeqCst) {
            return None;
        }
        if let Some(next) = q.waiting.pop_front() {
            q.running += 1;
            return Some(next);
        }
        if q.running == 0 {
            return None;
        }
        q = changed
            .wait_timeout(q, Duration::from_millis(200))
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// One test on one phone.
fn run_test(
    suite: &str,
    test: &Test,
    phone: &mut dyn TestPhone,
    config: &RunConfig,
    graph: Option<&(dyn ToolCaller + Sync)>,
    progress: &dyn Progress,
) -> TestResult {
    let started = Instant::now();
    let device_name = phone.name();
    let mut result = TestResult::not_run(test, "", Vec::new());
    result.device = device_name.clone();
    if let Err(e) = phone.prepare(&test.app, test.start.as_deref()) {
        result.status = Status::Error;
        result.message = format!("could not start the app: {e}");
        result.seconds = started.elapsed().as_secs_f64();
        return result;
    }
    // Each step's screenshot (the agent takes one as a step begins), for the report and the
    // progress.
    let shots: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    let recorder = Watched {
        inner: phone.device(),
        on_screenshot: Box::new(|shot: &Screenshot| {
            let step = {
                let mut shots = shots.lock().unwrap_or_else(|e| e.into_inner());
                shots.push(shot.png.clone());
                shots.len()
            };
            progress.step(&device_name, &test.name, step, &shot.png);
        }),
        skip_waits: false,
    };
    let knowledge = match (&test.knowledge, &config.knowledge_base) {
        (Some(dataset), Some((base, token))) => Some(KnowledgeConfig {
            base_url: base.trim_end_matches('/').to_string(),
            dataset_id: dataset.clone(),
            token: token.clone(),
            timeout: Duration::from_secs(10),
        }),
        _ => KnowledgeConfig::from_env(),
    };
    let agent_config = AgentConfig {
        model: Box::new(config.model.clone()),
        planner: graph
            .and(config.planner.clone())
            .map(|p| Box::new(p) as Box<dyn atlas_llm::Model>),
        max_steps: test.max_steps.unwrap_or(config.max_steps).max(1),
        lang: config.lang.clone(),
        knowledge,
        stop: config.stop.clone(),
    };
    let person = Unattended { yes: config.yes };
    let rules = config.rules.iter().chain(&test.rules).cloned().collect();
    let session = format!(
        "test-{suite}-{}-{}",
        test.name,
        chrono::Utc::now().format("%Y%m%dT%H%M%S%.3f")
    );
    let graph_caller: Option<&dyn ToolCaller> = graph.map(|g| g as &dyn ToolCaller);
    let mut agent = PhoneAgent::new(
        &recorder,
        &agent_config,
        &person,
        Guard::new(rules, &test.task),
    );
    if let Some(caller) = graph_caller {
        agent = agent.with_graph(GraphLink::new(
            caller,
            config.app_id.clone(),
            config.fast_path,
            &session,
        ));
    }
    let report = agent.run(&test.task);
    let end = EndScreen::take(phone, graph_caller);
    judge(&mut result, test, &report, &end);
    send_verdict(graph_caller, &report, &result, test);
    drop(recorder);
    let mut shots = shots.into_inner().unwrap_or_else(|e| e.into_inner());
    result.trail = report
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| StepShot {
            step: s.step,
            chosen_by: chooser(s.chosen_by).into(),
            action: s
                .action
                .as_ref()
                .map_or_else(String::new, |a| a.to_dict().to_string()),
            page: s
                .graph
                .as_ref()
                .and_then(|g| g["page"].as_str())
                .map(String::from),
            basis: s
                .graph
                .as_ref()
                .and_then(|g| g["basis"].as_str())
                .map(String::from),
            rules: s.rules.clone(),
            png: shots.get_mut(i).map(std::mem::take),
        })
        .collect();
    result.end_png = end.png;
    result.seconds = started.elapsed().as_secs_f64();
    result
}

fn chooser(c: Chooser) -> &'static str {
    match c {
        Chooser::Model => "model",
        Chooser::Graph => "graph",
        Chooser::Guard => "guard",
        Chooser::Plan => "plan",
    }
}

/// What the phone shows when the run is over.
struct EndScreen {
    widgets: Result<Vec<Widget>, DeviceError>,
    /// The recorded screen, on a simulator.
    screen: Option<String>,
    /// The graph's page for it: id and name.
    page: Option<(String, String)>,
    png: Option<Vec<u8>>,
}

impl EndScreen {
    fn take(phone: &dyn TestPhone, graph: Option<&dyn ToolCaller>) -> EndScreen {
        let device = phone.device();
        let widgets = device.hierarchy();
        let page = match (graph, &widgets, device.current_app()) {
            (Some(caller), Ok(widgets), Ok(app)) => GraphClient::new(caller)
                .match_current_page(&MatchPageRequest {
                    app_id: app.package,
                    ui_hierarchy: Some(UiHierarchy {
                        widgets: widgets.clone(),
                        ..Default::default()
                    }),
                    page_title: None,
                    page_screenshot: None,
                })
                .ok()
                .and_then(|m| m.page)
                .map(|p| (p.page_id, p.page_name)),
            _ => None,
        };
        EndScreen {
            screen: phone.screen(),
            page,
            png: device.screenshot().ok().map(|s| s.png),
            widgets,
        }
    }
}

/// The test's status from how the run ended and what its end shows.
fn judge(result: &mut TestResult, test: &Test, report: &RunReport, end: &EndScreen) {
    result.steps = report.steps.len();
    result.model_calls = report.model_calls;
    result.graph_steps = report
        .steps
        .iter()
        .filter(|s| matches!(s.chosen_by, Chooser::Graph | Chooser::Plan))
        .count();
    result.ending = Some(report.ending);
    let (status, message) = match report.ending {
        Ending::Error | Ending::TakeOver | Ending::Stopped => {
            (Status::Error, report.message.clone())
        }
        ending => match unmet(test, ending, &report.message, end) {
            Some(why) => (Status::Failed, why),
            None => (Status::Passed, report.message.clone()),
        },
    };
    result.status = status;
    result.message = message;
    result.end_page = end
        .page
        .as_ref()
        .map(|(_, name)| name.clone())
        .or_else(|| end.screen.clone());
}

/// Tells the graph the test's verdict on its session, which outranks the agent's word: a
/// failed test confirms no way, and a way it replayed is doubted. A test that ended in an error
/// (the model unreachable, a person taking over, a stop) judged nothing of the app: no verdict.
fn send_verdict(
    graph: Option<&dyn ToolCaller>,
    report: &RunReport,
    result: &TestResult,
    test: &Test,
) {
    let (Some(caller), Some(session)) = (graph, &report.session) else {
        return;
    };
    let passed = match result.status {
        Status::Passed => true,
        Status::Failed => false,
        _ => return,
    };
    let judge = format!("atlas test run: {}", test.name);
    let verdict = session.verdict(&test.task, passed, &result.message, &judge);
    if let Err(e) = GraphClient::new(caller).report_verdict(&verdict) {
        tracing::warn!("the graph did not take the test's verdict: {e}");
    }
}

/// Why the end is not what the test expects; `None` when it is.
fn unmet(test: &Test, ending: Ending, said: &str, end: &EndScreen) -> Option<String> {
    let expect = &test.expect;
    let finished = ending == Ending::Finished;
    match &expect.finish {
        Some(Finish::Yes(false)) => {}
        Some(Finish::Saying(words)) if finished && !said.contains(words.as_str()) => {
            return Some(format!("the model finished saying {said:?}, not {words:?}"));
        }
        _ if !finished => return Some(said.to_string()),
        _ => {}
    }
    if let Some(pages) = &expect.page {
        let names = pages.names();
        let is = |name: &str| {
            end.screen.as_deref() == Some(name)
                || end
                    .page
                    .as_ref()
                    .is_some_and(|(id, page)| id == name || page == name)
        };
        if !names.iter().any(|n| is(n)) {
            let shown = match (&end.page, &end.screen) {
                (Some((id, name)), _) => format!("page {name} ({id})"),
                (None, Some(screen)) => format!("screen {screen}"),
                (None, None) => "a page the graph does not know".into(),
            };
            return Some(format!("ended on {shown}, not on {}", names.join(" or ")));
        }
    }
    if let Some(text) = &expect.text {
        let shown = match &end.widgets {
            Ok(widgets) => widgets.iter().any(|w| w.text.contains(text.as_str())),
            Err(e) => return Some(format!("could not read the final screen: {e}")),
        };
        if !shown {
            return Some(format!("the final screen does not show {text:?}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Expect, OneOrMany};

    fn test_expecting(expect: Expect) -> Test {
        Test {
            name: "t".into(),
            task: "task".into(),
            app: "notes".into(),
            start: None,
            expect,
            max_steps: None,
            tags: Vec::new(),
            rules: Vec::new(),
            knowledge: None,
        }
    }

    fn end(page: Option<(&str, &str)>, screen: Option<&str>, texts: &[&str]) -> EndScreen {
        EndScreen {
            widgets: Ok(texts
                .iter()
                .map(|t| Widget {
                    text: t.to_string(),
                    ..Default::default()
                })
                .collect()),
            screen: screen.map(String::from),
            page: page.map(|(id, name)| (id.to_string(), name.to_string())),
            png: None,
        }
    }

    #[test]
    fn the_end_is_judged_by_the_finish_the_page_and_the_text_expected() {
        let here = end(Some(("p1", "笔记列表")), Some("s1"), &["购物清单", "OK"]);
        let finished = Ending::Finished;
        let plain = test_expecting(Expect::default());
        assert_eq!(unmet(&plain, finished, "done", &here), None);
        assert!(unmet(&plain, Ending::MaxSteps, "no finish within 3 steps", &here).is_some());
        let no_finish = test_expecting(Expect {
            finish: Some(Finish::Yes(false)),
            text: Some("购物".into()),
            ..Default::default()
        });
        assert_eq!(unmet(&no_finish, Ending::MaxSteps, "", &here), None);
        let saying = test_expecting(Expect {
            finish: Some(Finish::Saying("saved".into())),
            ..Default::default()
        });
        assert!(
            unmet(&saying, finished, "done", &here)
                .unwrap()
                .contains("saved")
        );
        for (page, passes) in [
            (OneOrMany::One("笔记列表".into()), true),
            (OneOrMany::One("p1".into()), true),
            (OneOrMany::Many(vec!["x".into(), "s1".into()]), true),
            (OneOrMany::One("设置".into()), false),
        ] {
            let t = test_expecting(Expect {
                page: Some(page.clone()),
                ..Default::default()
            });
            assert_eq!(
                unmet(&t, finished, "done", &here).is_none(),
                passes,
                "{page:?}"
            );
        }
        let text = test_expecting(Expect {
            text: Some("已保存".into()),
            ..Default::default()
        });
        assert!(
            unmet(&text, finished, "done", &here)
                .unwrap()
                .contains("已保存")
        );
    }
}
