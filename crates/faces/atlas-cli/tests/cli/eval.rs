//! `atlas eval` and `atlas import` on the real binary.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

/// A DroidTask folder with one app: an exploration and two demonstrations of one template.
pub(crate) fn tiny_droidtask(root: &Path) {
    let list = "<p id=0>Notes</p>\n <button id=1 text='New note'></button>\n <button id=2 text='Settings'></button>\n <button id=3>go back</button>";
    let dialog = |label: &str| {
        format!(
            "<input id=0 >{label}</input>\n <button id=1>OK</button>\n <button id=2>Cancel</button>\n <button id=3>go back</button>"
        )
    };
    let record = |choice: i64, input: &str, state: &str| {
        format!(
            "- Choice: {choice}\n  Input: {input}\n  State: {}\n  new_state_str: x\n",
            serde_json::to_string(state).unwrap()
        )
    };
    std::fs::create_dir_all(root.join("raw_utgs")).unwrap();
    std::fs::create_dir_all(root.join("user_tasks/notes")).unwrap();
    std::fs::write(
        root.join("raw_utgs/notes.yaml"),
        format!(
            "records:\n{}{}{}",
            record(1, "'null'", list),
            record(2, "'null'", &dialog("Label")),
            record(2, "'null'", list)
        ),
    )
    .unwrap();
    for (n, name) in [(1, "alpha"), (2, "beta")] {
        let task = format!(
            "records:\n{}{}{}{}step_num: 4\ntask_name: create a note named '{name}'\n",
            record(1, "'null'", list),
            record(0, name, &dialog("Label")),
            record(1, "'null'", &dialog(name)),
            record(-1, "'null'", list)
        );
        std::fs::write(root.join(format!("user_tasks/notes/task{n}.yaml")), task).unwrap();
    }
}

#[test]
fn eval_droidtask_scores_leave_one_task_out_over_http_and_import_teaches_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("droidtask");
    tiny_droidtask(&bench);
    let report = dir.path().join("eval.json");
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["eval", "droidtask"])
        .arg(&bench)
        .arg("--json")
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.lines().any(|l| l.starts_with("total")), "{stdout}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    // Each task is taught by the other one (the same template, another value): all 8 steps right.
    assert_eq!(report["total"]["tasks"], 2);
    assert_eq!(report["total"]["all"]["steps"], 8);
    assert_eq!(
        report["total"]["all"]["correct"],
        8,
        "{}",
        serde_json::to_string_pretty(&report["tasks"]).unwrap()
    );
    assert_eq!(report["total"]["completed"], 2);
    assert_eq!(
        report["tasks"][1]["steps"][1]["answer"],
        json!({ "kind": "input", "element": 0, "text": "beta" })
    );

    let data = dir.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["import", "droidtask", "--data"])
        .arg(&data)
        .arg(&bench)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("droidtask.notes")
            && stdout.contains("2 pages")
            && stdout.contains("2 intents"),
        "{stdout}"
    );
    // Importing again adds nothing new.
    let again = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["import", "droidtask", "--data"])
        .arg(&data)
        .arg(&bench)
        .output()
        .unwrap();
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.contains("already imported")
            && again.contains("2 pages")
            && again.contains("2 intents"),
        "{again}"
    );
    assert!(fsck(&data).0);
}

#[test]
fn eval_agent_runs_demonstrated_tasks_on_the_simulated_phone_as_a_fleet_meets_the_app_and_after_an_update()
 {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
    if !root.join("user_tasks/applauncher").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    let (said, report) = eval_agent(
        &root,
        &[
            "--apps",
            "applauncher",
            "--embedder",
            "hash",
            "--update",
            "3",
            "--reruns",
            "2",
        ],
    );
    let condition = |name: &str| report["conditions"][name].clone();
    let model_only = condition("model_only");
    let tasks = model_only["tasks"].as_u64().unwrap();
    assert!(tasks >= 3, "{report}");
    // The ideal model through the agent, the in-process backend and the simulator does every
    // linked task, with no graph.
    assert_eq!(model_only["succeeded"], tasks, "{said}");
    assert_eq!(model_only["fast_path_steps"], 0);
    assert!(model_only["model_calls"].as_u64().unwrap() >= tasks * 2);
    // The fleet's conditions: half the tasks new on an app with no record, the other half new on
    // an app with one, each rerun; then the update's.
    let count = |name: &str| condition(name)["tasks"].as_u64().unwrap_or(0);
    assert_eq!(
        count("graph_new_app") + count("graph_new_task"),
        tasks,
        "{report}"
    );
    assert_eq!(count("graph_repeat"), tasks, "{report}");
    assert_eq!(count("model_only_updated"), tasks, "{report}");
    assert_eq!(count("after_update"), tasks, "{report}");
    for name in ["graph_new_app", "graph_repeat", "after_update"] {
        let c = condition(name);
        for key in [
            "succeeded",
            "model_calls",
            "fast_path_steps",
            "wrong_fast_path_steps",
        ] {
            assert!(c[key].is_u64(), "{name}.{key}: {c}");
        }
    }
    // The update changes the app and leaves its tasks doable: the model alone does each one it
    // did before, and each run after it says what changed, every kind of change at least once.
    assert_eq!(
        condition("model_only_updated")["succeeded"],
        model_only["succeeded"],
        "{said}"
    );
    let after = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["condition"] == "after_update")
        .unwrap();
    assert_eq!(after["update"].as_object().unwrap().len(), 7, "{after}");
    // A rerun replays the way its first run confirmed: at most a tenth of the model alone's
    // calls, every fast-path step judged or compared with the model alone.
    let repeat = condition("graph_repeat");
    assert!(
        repeat["model_calls"].as_u64().unwrap() * 10
            <= repeat["model_only_calls"].as_u64().unwrap(),
        "{said}"
    );
    let judged = &repeat["judged"];
    assert_eq!(
        judged["judged"].as_u64().unwrap() + judged["unjudged"].as_u64().unwrap(),
        repeat["fast_path_steps"].as_u64().unwrap(),
        "{repeat}"
    );
    assert!(said.contains("judged"), "{said}");
    assert!(
        report["per_app"]["applauncher"]["model_only"].is_object(),
        "{report}"
    );
    // Each task once more in the fleet: in order, on a graph taught only by the runs before.
    let runs = report["runs"].as_array().unwrap().len() as u64;
    let passes = 1 + 2;
    assert_eq!(runs, tasks * (1 + passes + 1 + passes + 1), "{said}");
    // Each run of each sequence in order, measured against the model alone on the same tasks.
    let by_run = report["by_run"]["all"].as_array().unwrap();
    for sequence in ["first_half", "after_update"] {
        let each: Vec<&Value> = by_run
            .iter()
            .filter(|r| r["sequence"] == sequence)
            .collect();
        let order: Vec<u64> = each.iter().map(|r| r["run"].as_u64().unwrap()).collect();
        assert_eq!(order, [0, 1, 2], "{sequence}: {by_run:?}");
        for r in each {
            assert!(r["totals"]["model_only_calls"].as_u64().unwrap() > 0, "{r}");
        }
    }
    assert!(said.contains("each run of the tasks, in order"), "{said}");
    let fleet = report["fleet"].as_array().unwrap();
    let all: Vec<&Value> = fleet.iter().filter(|h| h["app"] == "all").collect();
    assert_eq!(all.len(), 2, "{fleet:?}");
    assert_eq!(
        all[0]["tasks"].as_u64().unwrap() + all[1]["tasks"].as_u64().unwrap(),
        tasks
    );
    for h in all {
        assert!(h["model_calls"].is_u64() && h["offered"].is_f64(), "{h}");
    }
    // The agent's offers beside eval droidtask's answers on the same steps.
    let same = &report["same_screens"];
    assert!(same["steps"].as_u64().unwrap() > 0, "{same}");
    assert_eq!(
        same["agent"].as_array().unwrap().len(),
        same["droidtask"].as_array().unwrap().len()
    );
}

#[test]
fn eval_agent_with_an_erring_model_loses_no_task_and_reruns_the_clean_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
    if !root.join("user_tasks/applauncher").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    let erring = [
        "--apps",
        "applauncher",
        "--embedder",
        "hash",
        "--reruns",
        "1",
        "--mistakes",
        "0.3",
        "--seed",
        "2",
    ];
    let (said, report) = eval_agent(&root, &erring);
    let solvable = report["solvable"].as_object().unwrap();
    let model_only = &solvable["model_only"];
    let mistaken = |c: &Value| c["mistaken_steps"].as_u64().unwrap();
    // The model errs, and still gets through its tasks (each mistake undone within a step).
    assert!(mistaken(model_only) >= 2, "{said}");
    assert!(model_only["tasks"].as_u64().unwrap() >= 3, "{said}");
    for (name, c) in solvable {
        assert_eq!(
            c["lost"], 0,
            "{name} lost a task the model alone completes: {said}"
        );
    }
    // A rerun replays the way without the model's stumbles: fewer wrong steps than the model
    // alone makes, and at most a tenth of its calls.
    let repeat = &solvable["graph_repeat"];
    assert!(mistaken(repeat) < mistaken(model_only), "{said}");
    assert!(
        repeat["model_calls"].as_u64().unwrap() * 10
            <= repeat["model_only_calls"].as_u64().unwrap(),
        "{said}"
    );
    // The same seed makes the same mistakes: the model alone's runs are the same again.
    let (_, again) = eval_agent(&root, &erring);
    let trails = |r: &Value| -> Vec<Value> {
        r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|run| run["condition"] == "model_only")
            .map(|run| run["model_steps"].clone())
            .collect()
    };
    assert_eq!(trails(&report), trails(&again));
}

/// `atlas eval agent ROOT ARGS… --json FILE`, which must succeed: what it printed, and its JSON
/// report.
fn eval_agent(root: &Path, args: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("agent.json");
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["eval", "agent"])
        .arg(root)
        .args(args)
        .arg("--json")
        .arg(&json_path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    (said, report)
}
