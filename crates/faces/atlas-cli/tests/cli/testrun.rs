//! `atlas test run`: DroidTask's `notes` tasks as a suite on simulated phones, DroidTask's ideal
//! model served over HTTP by `atlas model-sim --droidtask`, the reports read by a JUnit parser
//! from PyPI and the HTML page opened in headless Chromium; a phone killed mid-suite, and a
//! suite stopped by SIGTERM.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

/// DroidTask's `notes` recording, or none (skipped) where the data is not here.
fn notes() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks/notes");
    let here = dir.join("states").is_dir();
    if !here {
        eprintln!("no DroidTask folder: skipped");
    }
    here.then_some(dir)
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `atlas test droidtask-suite DIR`, keeping the tests `keep` names (all when empty).
fn droidtask_suite(dir: &Path, keep: &[&str]) -> serde_yaml::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["test", "droidtask-suite"])
        .arg(dir)
        .args(["--name", "notes"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut suite: serde_yaml::Value = serde_yaml::from_slice(&out.stdout).unwrap();
    if !keep.is_empty() {
        let tests = suite["tests"].as_sequence_mut().unwrap();
        tests.retain(|t| keep.contains(&t["name"].as_str().unwrap()));
        assert_eq!(tests.len(), keep.len());
    }
    suite
}

/// `atlas device sim RECORDING` on a free port, logging to `log`, once it says it is up; its
/// address.
fn simulated_phone(recording: &Path, log: &Path) -> (Killed, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["device", "sim"])
        .arg(recording)
        .args(["--listen", &addr, "--log"])
        .arg(log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .dies_with_test()
        .spawn()
        .unwrap();
    let mut said = String::new();
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap());
    while !said.contains("simulated phone") {
        said.clear();
        assert!(
            lines.read_line(&mut said).unwrap() > 0,
            "the simulator did not start"
        );
    }
    (Killed(child), addr)
}

/// `atlas test run SUITE --devices DEVICES` with the model at `model_url` (in English), its JSON
/// report written to `json`, nothing on stdin; each test adds what else it needs.
fn test_run(suite: &Path, devices: &str, model_url: &str, json: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_atlas"));
    command
        .args(["test", "run"])
        .arg(suite)
        .args(["--devices", devices])
        .args(["--model-url", &format!("{model_url}/v1"), "--lang", "en"])
        .arg("--json")
        .arg(json)
        .stdin(Stdio::null());
    command
}

/// Waits until the simulated phone logging to `log` is tapped: a test has begun on it.
fn until_tapped(log: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(log).is_ok_and(|l| l.contains("\"tap\"")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the phone never began a test"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write_suite(dir: &Path, suite: &serde_yaml::Value) -> PathBuf {
    let path = dir.join("suite.yaml");
    std::fs::write(&path, serde_yaml::to_string(suite).unwrap()).unwrap();
    path
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_suite_on_four_simulated_phones_reports_junit_html_and_json() {
    let Some(notes) = notes() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut suite = droidtask_suite(&notes, &[]);
    let tests = suite["tests"].as_sequence_mut().unwrap();
    let total = tests.len();
    assert!(total >= 10, "{total} notes tasks");
    // One test that must fail: a text the notes app never shows.
    let mut impossible = tests[0].clone();
    impossible["name"] = "notes/impossible".into();
    impossible["expect"]["text"] = "这段文字不会出现 & <never>".into();
    tests.push(impossible);
    let suite_path = write_suite(dir.path(), &suite);
    let (model, model_url) = model_sim_with(&["--droidtask", notes.to_str().unwrap()]);
    let _model = Killed(model);
    let (json, junit, html) = (
        dir.path().join("r.json"),
        dir.path().join("r.xml"),
        dir.path().join("r.html"),
    );
    let devices = format!("simulate:{}*4", notes.display());
    let out = test_run(&suite_path, &devices, &model_url, &json)
        .arg("--data")
        .arg(dir.path().join("data"))
        .arg("--junit")
        .arg(&junit)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    // A failed test fails the run.
    assert_eq!(out.status.code(), Some(1), "{said}");
    let report = read_json(&json);
    let summary = &report["summary"];
    let results = report["tests"].as_array().unwrap();
    assert_eq!(results.len(), total + 1);
    assert_eq!(summary["errors"], 0, "{summary}");
    assert_eq!(
        summary["passed"].as_u64().unwrap() + summary["failed"].as_u64().unwrap(),
        total as u64 + 1,
        "{summary}"
    );
    // DroidTask's ideal model completes most notes tasks (12 of 14 in process).
    assert!(
        summary["passed"].as_u64().unwrap() as usize >= total - 3,
        "{summary}"
    );
    let failed = results
        .iter()
        .find(|t| t["name"] == "notes/impossible")
        .unwrap();
    assert_eq!(failed["status"], "failed");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("does not show"),
        "{failed}"
    );
    let phones: std::collections::HashSet<&str> = results
        .iter()
        .filter_map(|t| t["device"].as_str())
        .collect();
    assert_eq!(
        phones.len(),
        4,
        "the tests spread over the four phones: {phones:?}"
    );
    for t in results {
        for field in [
            "name",
            "status",
            "steps",
            "model_calls",
            "graph_steps",
            "seconds",
            "device",
        ] {
            assert!(!t[field].is_null(), "{field} in {t}");
        }
    }
    let calls: u64 = results
        .iter()
        .map(|t| t["model_calls"].as_u64().unwrap())
        .sum();
    assert_eq!(summary["model_calls"], calls);
    // The graph learned from the run: its data folder has the app's pages.
    assert!(
        std::fs::read_dir(dir.path().join("data")).unwrap().count() > 0,
        "the graph was written"
    );

    // The JUnit XML, read by a parser CI servers use.
    if required(
        Command::new("python3").args(["-c", "import junitparser"]),
        "python3 module junitparser",
    ) {
        let read = Command::new("python3")
            .arg("-c")
            .arg(
                "import json,sys\nfrom junitparser import JUnitXml, Failure\nx = JUnitXml.fromfile(sys.argv[1])\nout = []\nfor suite in x:\n    for case in suite:\n        props = {p.name: p.value for p in case.properties()} if hasattr(case, 'properties') else {}\n        out.append({'name': case.name, 'time': case.time, 'failed': any(isinstance(r, Failure) for r in case.result), 'message': [r.message for r in case.result], 'props': props})\nprint(json.dumps(out))",
            )
            .arg(&junit)
            .output()
            .unwrap();
        assert!(
            read.status.success(),
            "{}",
            String::from_utf8_lossy(&read.stderr)
        );
        let cases: Value = serde_json::from_slice(&read.stdout).unwrap();
        let cases = cases.as_array().unwrap();
        assert_eq!(cases.len(), total + 1);
        let bad = cases
            .iter()
            .find(|c| c["name"] == "notes/impossible")
            .unwrap();
        assert_eq!(bad["failed"], true, "{bad}");
        assert!(
            bad["message"][0]
                .as_str()
                .unwrap()
                .contains("这段文字不会出现 & <never>"),
            "{bad}"
        );
        for case in cases {
            assert!(case["time"].as_f64().unwrap() > 0.0, "{case}");
        }
    }

    // The HTML page in a real browser: the tests, their steps and screenshots, nothing fetched.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "the page fetches nothing"
    );
    let Some(chromium) = chromium() else { return };
    let profile = tempfile::tempdir().unwrap();
    let dom = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("notes/impossible"),
        "the browser shows the tests"
    );
    assert!(
        dom.contains("这段文字不会出现 &amp; &lt;never&gt;"),
        "escaped Chinese text"
    );
    let steps: u64 = results.iter().map(|t| t["steps"].as_u64().unwrap()).sum();
    let images = dom.matches("role=\"img\"").count() as u64;
    assert!(images >= steps, "{images} screenshots for {steps} steps");
    // Each picture embedded once, however many steps show it.
    let pictures: Vec<&str> = dom
        .split("data:image/png;base64,")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap_or_default())
        .collect();
    assert!(!pictures.is_empty());
    let distinct: std::collections::HashSet<&&str> = pictures.iter().collect();
    assert_eq!(distinct.len(), pictures.len(), "a picture embedded twice");
    assert!(
        (pictures.len() as u64) < images,
        "{} pictures for {images} screenshots",
        pictures.len()
    );
}

#[test]
fn a_phone_killed_mid_suite_loses_its_test_to_another_phone() {
    let Some(notes) = notes() else { return };
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Tasks the ideal model completes; a hosted model's pace, so the kill lands mid-test.
    let keep = [
        "notes/task1",
        "notes/task3",
        "notes/task4",
        "notes/task5",
        "notes/task6",
        "notes/task9",
    ];
    let suite_path = write_suite(dir.path(), &droidtask_suite(&notes, &keep));
    let (model, model_url) =
        model_sim_with(&["--droidtask", notes.to_str().unwrap(), "--delay-ms", "300"]);
    let _model = Killed(model);
    let (keeps, a) = simulated_phone(&notes, &dir.path().join("keeps.log"));
    let doomed_log = dir.path().join("doomed.log");
    let (mut doomed, b) = simulated_phone(&notes, &doomed_log);
    let json = dir.path().join("r.json");
    let mut run = Killed(
        test_run(&suite_path, &format!("sim:{a},sim:{b}"), &model_url, &json)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .dies_with_test()
            .spawn()
            .unwrap(),
    );
    // The phone is killed once its test has begun (its log shows a tap): mid-test, since each
    // test takes a few model calls of 300 ms.
    until_tapped(&doomed_log);
    let _ = doomed.0.kill();
    let _ = doomed.0.wait();
    let status = run.0.wait().unwrap();
    drop(keeps);
    let report = read_json(&json);
    let results = report["tests"].as_array().unwrap();
    assert_eq!(results.len(), keep.len());
    let lost: Vec<&Value> = results
        .iter()
        .filter(|t| t["lost"].as_array().is_some_and(|l| !l.is_empty()))
        .collect();
    assert_eq!(
        lost.len(),
        1,
        "one test was under way on the killed phone: {report}"
    );
    assert_eq!(lost[0]["lost"][0]["device"], b.as_str());
    assert_eq!(
        lost[0]["device"],
        a.as_str(),
        "it ran again on the other phone"
    );
    assert_eq!(lost[0]["status"], "passed", "{}", lost[0]);
    // After the kill every test ran on the phone left, and none was lost to the fleet.
    assert_eq!(report["summary"]["passed"], keep.len() as u64, "{report}");
    assert!(status.success());
}

#[test]
fn a_task_that_opens_another_app_is_remembered_whole_and_replayed() {
    // applauncher/task1 ends by opening another app (the clock): a screen of another package
    // reached by a tap in the launcher. Run twice on one graph, the second run replays the whole
    // task from memory — it neither stops where the launcher was last seen (a step short, as
    // when the step into the clock went unreported) nor asks the model.
    let Some(notes) = notes() else { return };
    let launcher = notes.with_file_name("applauncher");
    let dir = tempfile::tempdir().unwrap();
    let suite_path = write_suite(
        dir.path(),
        &droidtask_suite(&launcher, &["applauncher/task1"]),
    );
    let (model, model_url) = model_sim_with(&["--droidtask", launcher.to_str().unwrap()]);
    let _model = Killed(model);
    let run = |k: usize, fast_path: &str| -> Value {
        let json = dir.path().join(format!("r{k}.json"));
        let devices = format!("simulate:{}", launcher.display());
        let out = test_run(&suite_path, &devices, &model_url, &json)
            .args(["--fast-path", fast_path])
            .arg("--data")
            .arg(dir.path().join("data"))
            .output()
            .unwrap();
        let report = read_json(&json);
        assert!(out.status.success(), "run {k}: {report}");
        report
    };
    let first = run(1, "0.95");
    assert_eq!(first["tests"][0]["model_calls"], 4, "{first}");
    // The way the first run confirmed is replayed whole on the next, the step into the other
    // app included: no model call.
    let second = run(2, "0.95");
    assert_eq!(second["tests"][0]["status"], "passed", "{second}");
    assert_eq!(second["tests"][0]["model_calls"], 0, "{second}");
}

#[test]
fn the_same_task_on_two_phones_at_once_passes_on_both() {
    // Two runs of one task at the same moment send the model the same requests step for step;
    // each must go on from its own last answer (the model's note in its reasoning), not from
    // the other's.
    let Some(notes) = notes() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut suite = droidtask_suite(&notes, &["notes/task5"]);
    let tests = suite["tests"].as_sequence_mut().unwrap();
    let mut again = tests[0].clone();
    again["name"] = "notes/task5 again".into();
    tests.push(again);
    let suite_path = write_suite(dir.path(), &suite);
    let (model, model_url) =
        model_sim_with(&["--droidtask", notes.to_str().unwrap(), "--delay-ms", "100"]);
    let _model = Killed(model);
    let json = dir.path().join("r.json");
    let devices = format!("simulate:{}*2", notes.display());
    let out = test_run(&suite_path, &devices, &model_url, &json)
        .arg("--data")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    let report = read_json(&json);
    assert!(out.status.success(), "{report}");
    let results = report["tests"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_ne!(
        results[0]["device"], results[1]["device"],
        "at once, on two phones: {report}"
    );
    for result in results {
        assert_eq!(result["status"], "passed", "{result}");
    }
    // Each went its own way step for step: as many steps, each decided once, by the model or
    // (where the other run had already finished the task, confirming its way) by the graph.
    let decided =
        |r: &Value| r["model_calls"].as_u64().unwrap() + r["graph_steps"].as_u64().unwrap();
    assert_eq!(results[0]["steps"], results[1]["steps"], "{report}");
    assert_eq!(decided(&results[0]), decided(&results[1]), "{report}");
}

#[test]
fn a_suite_that_does_not_fit_the_phones_is_refused_before_any_phone_moves() {
    let Some(notes) = notes() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut suite = droidtask_suite(&notes, &["notes/task1", "notes/task3"]);
    let tests = suite["tests"].as_sequence_mut().unwrap();
    tests[0]["app"] = "clock".into();
    tests[1]["start"] = "state_that_was_never_recorded".into();
    let suite_path = write_suite(dir.path(), &suite);
    let (model, model_url) = model_sim_with(&["--droidtask", notes.to_str().unwrap()]);
    let _model = Killed(model);
    let json = dir.path().join("r.json");
    let log = dir.path().join("phone.log");
    // A simulated phone of its own (`sim:`), asked over adb, and two in this process.
    let (_sim, addr) = simulated_phone(&notes, &log);
    let mut devices = format!("simulate:{}*2", notes.display());
    if adb_installed() {
        devices.push_str(&format!(",sim:{addr}"));
    }
    let out = test_run(&suite_path, &devices, &model_url, &json)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("does not fit the phones"), "{said}");
    assert!(
        said.contains(r#"test "notes/task1": sim-1 has no app "clock""#),
        "{said}"
    );
    assert!(
        said.contains(
            r#"test "notes/task3": sim-2's notes has no screen state_that_was_never_recorded"#
        ),
        "{said}"
    );
    if adb_installed() {
        assert!(
            said.contains(&format!(
                r#"test "notes/task3": {addr} has no screen state_that_was_never_recorded"#
            )),
            "{said}"
        );
    }
    // Nothing ran: no report, no model asked, the phone over adb never reset.
    assert!(!json.exists());
    let asked: Value = serde_json::from_str(
        &agent()
            .get(&format!("{model_url}/requests"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(asked, serde_json::json!([]));
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!logged.contains("\"reset\""), "{logged}");
}

/// A suite with its graph served over `--data`, stopped by SIGTERM mid-test: the test under way
/// ends after its step, the run says it stopped and exits with SIGTERM's status, its report
/// says what ran, the folder is clean for fsck, and the same suite runs again on it.
#[test]
fn a_suite_stopped_by_sigterm_mid_test_says_so_and_its_folder_serves_the_next_run() {
    let Some(notes) = notes() else { return };
    let dir = tempfile::tempdir().unwrap();
    let keep = ["notes/task1", "notes/task3", "notes/task4"];
    let suite_path = write_suite(dir.path(), &droidtask_suite(&notes, &keep));
    let (model, model_url) =
        model_sim_with(&["--droidtask", notes.to_str().unwrap(), "--delay-ms", "300"]);
    let _model = Killed(model);
    let phone_log = dir.path().join("phone.log");
    let (_phone, addr) = simulated_phone(&notes, &phone_log);
    let data = dir.path().join("data");
    let json = dir.path().join("r.json");
    let run = |log: &Path| {
        test_run(&suite_path, &format!("sim:{addr}"), &model_url, &json)
            .arg("--data")
            .arg(&data)
            .args(["--addr", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .dies_with_test()
            .spawn()
            .unwrap()
    };
    let log = dir.path().join("run.log");
    let mut first = Killed(run(&log));
    until_tapped(&phone_log);
    send_signal(&first.0, libc::SIGTERM);
    let status = first.0.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), None, "died of the signal: {said}");
    assert_eq!(status.code(), Some(143), "{said}");
    assert!(
        said.contains("stopped by SIGTERM before the suite's end"),
        "{said}"
    );
    let report = read_json(&json);
    let passed = report["summary"]["passed"].as_u64().unwrap();
    assert!(passed < keep.len() as u64, "the whole suite ran: {report}");
    let (clean, fsck_said) = fsck(&data);
    assert!(clean, "{fsck_said}");

    let log = dir.path().join("again.log");
    let status = Killed(run(&log)).0.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{said}");
    assert_eq!(
        read_json(&json)["summary"]["passed"],
        keep.len() as u64,
        "{said}"
    );
}

#[test]
fn a_run_whose_model_finished_early_is_not_replayed_and_the_next_run_passes() {
    // The issue's case: a model that says `finish` early (as real ones do) fails its tests; the
    // next run, with a model that does not, must pass every test the model alone passes — not
    // replay the early finish from the graph with no model call, failing again for ever.
    let Some(notes) = notes() else { return };
    let dir = tempfile::tempdir().unwrap();
    let keep = ["notes/task1", "notes/task3", "notes/task6", "notes/task13"];
    let suite_path = write_suite(dir.path(), &droidtask_suite(&notes, &keep));
    let devices = format!("simulate:{}*2", notes.display());
    let run = |model_url: &str, data: &str, k: usize| -> Value {
        let json = dir.path().join(format!("r{k}.json"));
        test_run(&suite_path, &devices, model_url, &json)
            .arg("--data")
            .arg(dir.path().join(data))
            .output()
            .unwrap();
        read_json(&json)
    };
    let passed = |report: &Value| -> Vec<String> {
        let mut names: Vec<String> = report["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["status"] == "passed")
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let path = notes.to_str().unwrap();
    let (honest, honest_url) = model_sim_with(&["--droidtask", path]);
    let _honest = Killed(honest);
    // The model alone (a graph of its own that replays nothing yet for these tasks).
    let alone = passed(&run(&honest_url, "alone", 0));
    assert!(!alone.is_empty());
    // An erring model: on every step one mistake, of a kind its seed decides — early finishes
    // and wrong choices kept among them, which fail their tests.
    let (erring, erring_url) =
        model_sim_with(&["--droidtask", path, "--mistakes", "1", "--seed", "7"]);
    let _erring = Killed(erring);
    let first = run(&erring_url, "data", 1);
    let failed_finishing = first["tests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["status"] == "failed" && t["ending"] == "finished");
    assert!(failed_finishing, "a test the model finished early: {first}");
    // Then the honest model on the same graph: every test the model alone passes passes.
    let second = run(&honest_url, "data", 2);
    let now = passed(&second);
    for name in &alone {
        assert!(
            now.contains(name),
            "{name} lost after the early finishes: {second}"
        );
    }
}
