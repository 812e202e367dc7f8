//! The simulated phone and the phone agent on the real binary, through Debian's adb.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

/// A child process that ends with the test, passed or failed (a failed test would otherwise
/// leave it holding the test's output open).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `adb` with these arguments; its standard output.
fn adb(args: &[&str]) -> String {
    let out = Command::new("adb").args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The (text, resource-id, centre) of each node of a uiautomator dump.
fn dump_nodes(xml: &str) -> Vec<(String, String, (i64, i64))> {
    let attribute = |node: &str, name: &str| -> String {
        let key = format!(" {name}=\"");
        node.find(&key)
            .map(|at| {
                let rest = &node[at + key.len()..];
                rest[..rest.find('"').unwrap_or(0)].to_string()
            })
            .unwrap_or_default()
    };
    xml.split("<node")
        .skip(1)
        .map(|node| {
            let n: Vec<i64> = attribute(node, "bounds")
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .map(|s| s.parse().unwrap())
                .collect();
            let centre = ((n[0] + n[2]) / 2, (n[1] + n[3]) / 2);
            (
                attribute(node, "text"),
                attribute(node, "resource-id"),
                centre,
            )
        })
        .collect()
}

#[test]
fn an_app_of_the_graph_plays_as_a_phone_and_its_paths_lead_where_they_say() {
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data, &["--demo"]);
    // The phone reads the folder while the server holds it: no lock is taken.
    let serial = format!("127.0.0.1:{}", free_port());
    let log = dir.path().join("actions.jsonl");
    let sim = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["device", "sim", "--app", "com.meituan.app", "--data"])
        .arg(&data)
        .args(["--listen", &serial, "--log"])
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .dies_with_test()
        .spawn()
        .unwrap();
    let mut sim = KillOnDrop(sim);
    let mut said = String::new();
    {
        use std::io::BufRead;
        std::io::BufReader::new(sim.0.stderr.as_mut().unwrap())
            .read_line(&mut said)
            .unwrap();
    }
    assert!(said.contains("simulated phone com.meituan.app"), "{said}");
    assert!(adb(&["connect", &serial]).contains("connected"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !adb(&["devices"]).contains(&format!("{serial}\tdevice")) {
        assert!(Instant::now() < deadline, "the simulator never came online");
        std::thread::sleep(Duration::from_millis(100));
    }
    let shell = |args: &[&str]| {
        let mut all = vec!["-s", serial.as_str(), "shell"];
        all.extend_from_slice(args);
        adb(&all)
    };
    let last_move = || -> Value {
        let text = std::fs::read_to_string(&log).unwrap();
        text.lines()
            .rev()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|a| a.get("to").is_some())
            .unwrap()
    };
    // An agent follows Atlas's answer on the phone: each step's widget found in the dump and
    // tapped (or typed into, or Back), and each step lands on the page the step expects.
    let mut last_page = String::new();
    for intent in ["点外卖", "查看订单", "我的优惠券", "搜索结果"] {
        shell(&["monkey", "-p", "com.meituan.app", "1"]);
        let (status, answer) = server.call(
            "query_path",
            json!({"app_id": "com.meituan.app", "intent": intent}),
        );
        assert_eq!(status, 200, "{answer}");
        let steps = answer["path"]["steps"].as_array().unwrap().clone();
        assert!(!steps.is_empty(), "{intent}: {answer}");
        for step in &steps {
            let kind = step["action_type"].as_str().unwrap();
            let text = step["widget_text"].as_str().unwrap();
            if kind == "back" {
                shell(&["input", "keyevent", "4"]);
            } else {
                shell(&["uiautomator", "dump", "/sdcard/ui.xml"]);
                let nodes = dump_nodes(&adb(&["-s", &serial, "exec-out", "cat", "/sdcard/ui.xml"]));
                let (_, _, (x, y)) = nodes
                    .iter()
                    .find(|(t, id, _)| t == text || id == step["widget_id"].as_str().unwrap())
                    .unwrap_or_else(|| panic!("{intent}: no {text} on the screen: {nodes:?}"))
                    .clone();
                shell(&["input", "tap", &x.to_string(), &y.to_string()]);
                if kind == "input" {
                    shell(&["ime", "set", "com.android.adbkeyboard/.AdbIME"]);
                    let typed = step["input_text"].as_str().unwrap();
                    shell(&[
                        "am",
                        "broadcast",
                        "-a",
                        "ADB_INPUT_TEXT",
                        "--es",
                        "msg",
                        typed,
                    ]);
                }
            }
            assert_eq!(last_move()["to"], step["expected_page"], "{intent}: {step}");
            last_page = step["expected_page_name"].as_str().unwrap().to_string();
        }
    }
    // What a screen shows names its page, as an agent reading the dump sees it.
    let titles: Vec<String> = dump_nodes(&{
        shell(&["uiautomator", "dump", "/sdcard/ui.xml"]);
        adb(&["-s", &serial, "exec-out", "cat", "/sdcard/ui.xml"])
    })
    .into_iter()
    .map(|(t, _, _)| t)
    .collect();
    assert!(titles.contains(&last_page), "{last_page} in {titles:?}");
    adb(&["disconnect", &serial]);
    drop(sim);
    server.stop();
    // The phone wrote nothing into the data folder it read.
    let (clean, report) = fsck(&data);
    assert!(clean, "{report}");
}

/// `atlas agent parse` on a reply given on standard input.
fn agent_parse(reply: &str) -> (bool, Value) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["agent", "parse"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .dies_with_test()
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(reply.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        serde_json::from_slice(&out.stdout).unwrap(),
    )
}

#[test]
fn agent_parse_prints_the_first_well_formed_action_in_the_seed_s_dict_form() {
    let (ok, action) = agent_parse(
        "<think>先搜索</think><answer>do(action=\"Type\", text=\"你好\")</answer>\ndo(action=\"Back\")",
    );
    assert!(ok);
    assert_eq!(
        action,
        json!({"_metadata": "do", "action": "Type", "text": "你好"})
    );
    let (ok, action) = agent_parse("All done. finish(message='已完成'");
    assert!(ok);
    assert_eq!(action, json!({"_metadata": "finish", "message": "已完成"}));
    let (ok, error) = agent_parse("do(action=\"Tap\", element=[1500, 20])");
    assert!(!ok);
    assert_eq!(error["error"]["code"], "unparseable");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("0..999"),
        "{error}"
    );
}

/// Starts `atlas device sim` on an app of a data folder; its address once it listens.
fn phone_sim(data: &Path, app: &str, log: &Path) -> (KillOnDrop, String) {
    let serial = format!("127.0.0.1:{}", free_port());
    let mut sim = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["device", "sim", "--app", app, "--data"])
            .arg(data)
            .args(["--listen", &serial, "--log"])
            .arg(log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .dies_with_test()
            .spawn()
            .unwrap(),
    );
    let mut said = String::new();
    {
        use std::io::BufRead;
        std::io::BufReader::new(sim.0.stderr.as_mut().unwrap())
            .read_line(&mut said)
            .unwrap();
    }
    assert!(said.contains("simulated phone"), "{said}");
    (sim, serial)
}

#[test]
fn the_agent_answers_a_qq_customer_question_from_the_knowledge_base_through_the_guard() {
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data, &["--demo"]);
    // A chat app as a graph: the message list, and contact 11's chat with a question in it.
    let qq = "com.tencent.mobileqq";
    let home = server.call(
        "add_page",
        json!({"app_id": qq, "page_name": "消息", "page_type": "home",
        "ui_hierarchy": {"widgets": [
            {"id": "contact_11", "text": "11", "type": "button", "bounds": "0,300,1080,450"},
            {"id": "ask_ai", "text": "问AI", "type": "button", "bounds": "0,450,1080,600"}]}}),
    );
    let chat = server.call(
        "add_page",
        json!({"app_id": qq, "page_name": "聊天-11",
        "ui_hierarchy": {"widgets": [
            {"id": "message", "text": "退货运费谁出？", "type": "text", "bounds": "40,400,900,520"},
            {"id": "input", "text": "", "type": "input", "bounds": "0,2200,800,2350"},
            {"id": "send", "text": "发送", "type": "button", "bounds": "800,2200,1080,2350"}]}}),
    );
    let (home, chat) = (
        home.1["page_id"].as_str().unwrap().to_string(),
        chat.1["page_id"].as_str().unwrap().to_string(),
    );
    let (status, said) = server.call(
        "report_transition",
        json!({"app_id": qq, "from_page": home, "to_page": chat,
        "action": {"type": "click", "widget": "contact_11", "widget_text": "11"}, "success": true}),
    );
    assert_eq!(status, 200, "{said}");
    // What the knowledge base answers the contact's question.
    let (_, found) = dify_post(
        &server,
        "/v1/datasets/6f1d7d1e-6b0a-4d1e-9f1e-000000000001/retrieve",
        Some("dataset-demo-key"),
        r#"{"query": "退货运费谁出？"}"#,
    );
    let answer = found["records"][0]["segment"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(answer.contains("运费"), "{answer}");

    let log = dir.path().join("phone.jsonl");
    let (_sim, serial) = phone_sim(&data, qq, &log);
    // The model: prose and two actions, a reply with none, an early finish, a forgotten
    // parenthesis, and the question typed into the chat instead of looked up.
    let script = dir.path().join("model.json");
    let turns = [
        "我先打开QQ。\ndo(action=\"Launch\", app=\"QQ\")\ndo(action=\"Back\")",
        "<think>进入联系人11的聊天</think><answer>do(action=\"Tap\", element=[500,156])</answer>",
        "嗯……让我想想该怎么回答。",
        "<answer>finish(message=\"已经回复了\")</answer>",
        "点击输入框 do(action='Tap', element=[370,947]",
        "<answer>do(action=\"Type\", text=\"退货运费谁出？\")</answer>",
        "<think>已发送答案</think><answer>finish(message=\"已回复11\")</answer>",
    ];
    let turns: Vec<Value> = turns.iter().map(|t| json!({"content": t})).collect();
    std::fs::write(
        &script,
        json!({"conversations": [{"match": "QQ 智能客服", "session": true, "turns": turns}]})
            .to_string(),
    )
    .unwrap();
    let (model, model_url) = model_sim_playing(&script);
    let _model = KillOnDrop(model);
    let report_file = dir.path().join("report.json");
    let run = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args([
            "agent",
            "run",
            "QQ 智能客服回复联系人11的问题",
            "--device",
            &format!("sim:{serial}"),
        ])
        .args([
            "--model-url",
            &format!("{model_url}/v1"),
            "--max-steps",
            "12",
            "--report",
        ])
        .arg(&report_file)
        .env("PHONE_AGENT_KNOWLEDGE_BASE_URL", &server.url)
        .env(
            "PHONE_AGENT_KNOWLEDGE_DATASET_ID",
            "6f1d7d1e-6b0a-4d1e-9f1e-000000000001",
        )
        .env("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN", "dataset-demo-key")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{summary}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_file).unwrap()).unwrap();
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(report["ending"], "finished", "{summary}");
    assert_eq!(steps.len(), 7, "{summary}");
    assert_eq!(
        steps[0]["action"]["action"], "Launch",
        "the first of two actions"
    );
    assert!(
        steps[2]["action"].is_null()
            && steps[2]["observation"]
                .as_str()
                .unwrap()
                .contains("no well-formed action")
    );
    assert_eq!(steps[3]["proposed"]["_metadata"], "finish");
    assert_eq!(
        steps[3]["action"]["action"], "Wait",
        "finish before the lookup is blocked"
    );
    assert_eq!(steps[5]["proposed"]["action"], "Type");
    assert_eq!(
        steps[5]["action"],
        json!({"_metadata": "do", "action": "GET_KNOWLEDGE_DATA", "query": "退货运费谁出？"})
    );
    assert_eq!(steps[5]["chosen_by"], "guard");
    assert_eq!(steps[6]["action"]["_metadata"], "finish");
    assert!(
        steps
            .iter()
            .all(|s| s["model"]["first_token_ms"].as_f64().unwrap() > 0.0)
    );
    // The phone received the knowledge base's answer, typed and sent; never the question.
    let actions: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let typed: Vec<&str> = actions
        .iter()
        .filter(|a| a["action"] == "type")
        .filter_map(|a| a["text"].as_str())
        .collect();
    assert_eq!(typed, [answer.as_str()], "{actions:?}");
    assert!(
        actions
            .iter()
            .any(|a| a["action"] == "key" && a["key"] == "KEYCODE_ENTER")
    );
    // The model was told what happened, and saw only the latest screenshot.
    let requests: Vec<Value> = agent()
        .get(&format!("{model_url}/requests"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    assert_eq!(requests.len(), 7);
    let told = requests[3].to_string();
    assert!(told.contains("no well-formed action"), "{told}");
    assert!(
        requests[4]
            .to_string()
            .contains("Waiting for QQ AI is not allowed")
    );
    assert!(
        requests[6]
            .to_string()
            .contains("GET_KNOWLEDGE_DATA executed successfully")
    );
    for request in &requests {
        let images = request
            .to_string()
            .matches("data:image/png;base64,")
            .count();
        assert_eq!(images, 1, "one screenshot per request");
    }
    adb(&["disconnect", &serial]);
    server.stop();
}

/// `atlas serve --demo` and the demo app's simulated phone on its folder, connected through adb:
/// the server, the phone, its serial and its action log.
fn demo_phone(dir: &Path) -> (Server, KillOnDrop, String, std::path::PathBuf) {
    let data = dir.join("data");
    let server = Server::start(&data, &["--demo"]);
    let log = dir.join("phone.jsonl");
    let (sim, serial) = phone_sim(&data, "com.meituan.app", &log);
    assert!(adb(&["connect", &serial]).contains("connected"));
    (server, sim, serial, log)
}

#[test]
fn a_task_done_once_is_replayed_from_the_graph() {
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, _sim, serial, log) = demo_phone(dir.path());
    let shell = |args: &[&str]| {
        let mut all = vec!["-s", serial.as_str(), "shell"];
        all.extend_from_slice(args);
        adb(&all)
    };
    // Where a person would tap, in the model's 0..999 coordinates of the 1080x2400 screen.
    let relative_of = |label: &str| -> String {
        shell(&["uiautomator", "dump", "/sdcard/ui.xml"]);
        let nodes = dump_nodes(&adb(&["-s", &serial, "exec-out", "cat", "/sdcard/ui.xml"]));
        let (_, _, (x, y)) = nodes.iter().find(|(t, _, _)| t == label).unwrap().clone();
        let (x, y) = (x * 1000 / 1080, y * 1000 / 2400);
        shell(&[
            "input",
            "tap",
            &(x * 1080 / 1000).to_string(),
            &(y * 2400 / 1000).to_string(),
        ]);
        format!("[{x},{y}]")
    };
    let mine = relative_of("我的");
    let orders = relative_of("全部订单");
    // A task the graph was never told: the model does it the first time.
    let task = "看一下账户里存的东西";
    let script = dir.path().join("model.json");
    let turns = [
        format!("<answer>do(action=\"Tap\", element={mine})</answer>"),
        format!("<answer>do(action=\"Tap\", element={orders})</answer>"),
        "<answer>finish(message=\"找到了\")</answer>".to_string(),
    ];
    let turns: Vec<Value> = turns.iter().map(|t| json!({"content": t})).collect();
    std::fs::write(
        &script,
        json!({"conversations": [{"match": task, "session": true, "turns": turns}]}).to_string(),
    )
    .unwrap();
    let (model, model_url) = model_sim_playing(&script);
    let _model = KillOnDrop(model);
    let run = |extra: &[&str]| -> Value {
        shell(&["monkey", "-p", "com.meituan.app", "1"]);
        let report = dir.path().join("report.json");
        report_of(
            Command::new(env!("CARGO_BIN_EXE_atlas"))
                .args([
                    "agent",
                    "run",
                    task,
                    "--device",
                    &format!("sim:{serial}"),
                    "--atlas",
                    &server.url,
                ])
                .args(["--model-url", &format!("{model_url}/v1"), "--report"])
                .arg(&report)
                .args(extra)
                .stdin(Stdio::null()),
            &report,
        )
    };
    // First run: the graph is never trusted (threshold above 1), every step is the model's.
    let first = run(&["--fast-path", "1.01"]);
    assert_eq!(first["model_calls"], 3);
    assert!(
        first["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["chosen_by"] == "model")
    );
    let reached = |from: usize| -> Vec<String> {
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .skip(from)
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|a| a["action"] == "tap")
            .map(|a| a["to"].as_str().unwrap().to_string())
            .collect()
    };
    // The graph remembers the finished session as a way: the next run replays it at once, step
    // by step under check, through the same screens. That the task is done where it ended is
    // only the first run's agent's claim (nobody judged it): the model is asked there once.
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    let second = run(&["--fast-path", "0.95"]);
    assert_eq!(second["ending"], "finished");
    let chosen: Vec<&str> = second["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["chosen_by"].as_str().unwrap())
        .collect();
    assert_eq!(chosen, ["graph", "graph", "model"], "{second}");
    let taps_now = reached(lines);
    // It finished there too: a second decision, and the run after replays the finish as well.
    let third = run(&["--fast-path", "0.95"]);
    assert_eq!(third["ending"], "finished");
    let steps = third["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["chosen_by"] == "graph"), "{third}");
    assert_eq!(third["model_calls"], 0, "{third}");
    assert_eq!(taps_now.len(), 2);
    let first_taps: Vec<String> = reached(0).into_iter().skip(2).take(2).collect();
    assert_eq!(taps_now, first_taps, "the same screens as the first run");
    // The agent's own cost per step (graph calls included, model and device not).
    for s in steps {
        assert!(s["agent_ms"].as_f64().unwrap() < 1000.0, "{s}");
    }
    adb(&["disconnect", &serial]);
    server.stop();
}

#[test]
fn a_planner_chooses_a_route_over_the_map_and_the_agent_walks_it_without_the_screen_model() {
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, _sim, serial, _log) = demo_phone(dir.path());
    let home = || {
        adb(&[
            "-s",
            &serial,
            "shell",
            "monkey",
            "-p",
            "com.meituan.app",
            "1",
        ])
    };
    home();
    adb(&[
        "-s",
        &serial,
        "shell",
        "uiautomator",
        "dump",
        "/sdcard/ui.xml",
    ]);
    let dump = adb(&["-s", &serial, "exec-out", "cat", "/sdcard/ui.xml"]);
    // A task nobody did: the map from the home screen, as the agent will be shown it.
    let task = "查看我的全部订单";
    let (status, seen) = server.call(
        "observe_screen",
        json!({"app_id": "com.meituan.app", "task": task, "session_id": "look",
               "ui_hierarchy": {"dump": dump}, "screen_width": 1080, "screen_height": 2400,
               "fast_path": 1.01, "map": true}),
    );
    assert_eq!(status, 200, "{seen}");
    let routes = seen["map"]["routes"].as_array().expect("a map").clone();
    let route = routes
        .iter()
        .find(|r| r["target_page_name"] == "订单列表")
        .unwrap_or_else(|| panic!("no route to the orders: {routes:?}"));
    let steps = route["steps"].as_array().unwrap().len();
    // The planner takes that route; the screen model finishes where it ends (a session's turn
    // is its step: the walked steps are in its context too, so they have turns it never plays).
    let script = dir.path().join("model.json");
    let mut turns = vec![json!({"content": "（未用 / unused）"}); steps];
    turns.push(json!({"content": "<answer>finish(message=\"订单都在这里\")</answer>"}));
    std::fs::write(
        &script,
        json!({"conversations": [
            {"match": "Routes as JSON", "turns": [{"content": format!("<think>订单在这条路线上</think>route {}", route["route"])}]},
            {"match": task, "session": true, "turns": turns},
        ]})
        .to_string(),
    )
    .unwrap();
    let (model, model_url) = model_sim_playing(&script);
    let _model = KillOnDrop(model);
    home();
    let report = dir.path().join("report.json");
    let run = report_of(
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["agent", "run", task, "--device", &format!("sim:{serial}")])
            .args(["--atlas", &server.url, "--fast-path", "1.01"])
            .args(["--model-url", &format!("{model_url}/v1")])
            .args([
                "--planner-url",
                &format!("{model_url}/v1"),
                "--planner-model",
                "planner",
            ])
            .arg("--report")
            .arg(&report)
            .stdin(Stdio::null()),
        &report,
    );
    assert_eq!(run["ending"], "finished", "{run}");
    assert_eq!(run["message"], "订单都在这里");
    let chosen: Vec<&str> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["chosen_by"].as_str().unwrap())
        .collect();
    let mut expected = vec!["plan"; steps];
    expected.push("model");
    assert_eq!(chosen, expected, "{run}");
    // One call to choose the route, one to finish: every step between walked on the map.
    assert_eq!(
        (run["model_calls"].as_u64(), run["plan_calls"].as_u64()),
        (Some(2), Some(1)),
        "{run}"
    );
    let last = run["steps"].as_array().unwrap().last().unwrap().clone();
    assert!(last["graph"]["page"].is_string(), "{last}");
    adb(&["disconnect", &serial]);
    server.stop();
}

/// Several phones from one `atlas device sim`: two recordings, two phones each, every one its
/// own serial and its own state, driven by adb in parallel.
#[test]
fn one_simulator_serves_several_phones_each_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks");
    if !root.join("notes/states").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("actions.jsonl");
    let mut sim = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["device", "sim"])
            .arg(root.join("notes"))
            .arg(root.join("clock"))
            .args(["--phones", "2", "--listen", "127.0.0.1:0", "--log"])
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .dies_with_test()
            .spawn()
            .unwrap(),
    );
    let mut phones = Vec::new();
    {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(sim.0.stderr.as_mut().unwrap()).lines();
        for _ in 0..4 {
            let line = lines.next().unwrap().unwrap();
            let addr = line
                .rsplit("adb connect ")
                .next()
                .unwrap()
                .trim()
                .to_string();
            phones.push((line, addr));
        }
    }
    let packages: Vec<&str> = phones
        .iter()
        .map(|(line, _)| line.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(packages[0], packages[1]);
    assert_eq!(packages[2], packages[3]);
    assert_ne!(packages[0], packages[2]);
    for (_, addr) in &phones {
        assert!(adb(&["connect", addr]).contains("connected"));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while !phones
        .iter()
        .all(|(_, addr)| adb(&["devices"]).contains(&format!("{addr}\tdevice")))
    {
        assert!(Instant::now() < deadline, "not every phone came online");
        std::thread::sleep(Duration::from_millis(100));
    }
    // In parallel: each phone answers its own commands.
    let answers: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = phones
            .iter()
            .map(|(_, addr)| {
                scope.spawn(move || {
                    let mut said = String::new();
                    for i in 0..5 {
                        said += &adb(&[
                            "-s",
                            addr,
                            "shell",
                            &format!("echo {i} && dumpsys window | grep mFocusedApp"),
                        ]);
                    }
                    said
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((_, _), (answer, package)) in phones.iter().zip(answers.iter().zip(&packages)) {
        assert_eq!(answer.lines().count(), 10, "{answer}");
        assert!(answer.contains(package), "{answer}");
    }
    // A tap on one phone moves that phone only.
    let app = atlas_device_sim::RecordedApp::read(&root.join("notes")).unwrap();
    let bounds = app
        .transitions
        .keys()
        .find_map(|(from, trigger)| match trigger {
            atlas_device_sim::app::Trigger::Tap(b) if *from == app.launch => Some(*b),
            _ => None,
        })
        .expect("a recorded tap on the launch screen");
    let (x, y) = (
        (bounds[0][0] + bounds[1][0]) / 2,
        (bounds[0][1] + bounds[1][1]) / 2,
    );
    let dump = |addr: &str| adb(&["-s", addr, "shell", "uiautomator dump /dev/tty"]);
    let (a, b) = (&phones[0].1, &phones[1].1);
    assert_eq!(dump(a), dump(b));
    adb(&[
        "-s",
        a,
        "shell",
        "input",
        "tap",
        &x.to_string(),
        &y.to_string(),
    ]);
    assert_ne!(dump(a), dump(b), "the tap moved both phones, or neither");
    // The shared log names the phone of each action.
    let text = std::fs::read_to_string(&log).unwrap();
    let taps: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["action"] == "tap")
        .collect();
    assert_eq!(taps.len(), 1, "{text}");
    assert_eq!(taps[0]["phone"], a.as_str());
    for (_, addr) in &phones {
        adb(&["disconnect", addr]);
    }
}
