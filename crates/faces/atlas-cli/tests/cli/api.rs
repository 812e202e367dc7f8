//! The graph's HTTP API on the real binary: seed errors, the token, durability under SIGKILL,
//! the OpenAPI document against what answers, what numbers and texts are taken.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::*;

#[test]
fn bad_input_gets_seed_errors_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &["--demo"]);
    let before = server.call("get_graph_stats", json!({}));
    assert_eq!(before.0, 200);

    assert_error(
        &server.post("report_transition", b"{not json"),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.post("report_transition", b"[1,2]"),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call("query_path", json!({"app_id": 5, "intent": "点外卖"})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call("query_path", json!({"intent": "点外卖"})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "query_path",
            json!({"app_id": "com.meituan.app", "intent": "  "}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "query_path",
            json!({"app_id": "com.meituan.app", "intent": "点外卖", "max_steps": 0}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "add_page",
            json!({"app_id": "com.x", "page_name": "a\u{0}b"}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "add_page",
            json!({"app_id": "com.x", "page_name": "p", "page_type": "castle"}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "get_available_actions",
            json!({"page_id": "../../etc/passwd"}),
        ),
        404,
        "PAGE_NOT_FOUND",
    );
    assert_error(
        &server.call("report_transition", json!({"from_page": "../../etc/passwd", "to_page": "x", "action": {"type": "click"}, "success": true})),
        404,
        "PAGE_NOT_FOUND",
    );
    assert_error(
        &server.call("no_such_interface", json!({})),
        404,
        "NOT_FOUND",
    );
    assert_error(&server.oversize_post("add_page"), 413, "PAYLOAD_TOO_LARGE");
    // query_path keeps its own failure shape.
    let unknown = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "current_page": "nope"}),
    );
    assert_eq!(unknown.0, 200);
    assert_eq!(unknown.1["success"], json!(false));
    assert_eq!(unknown.1["message"], json!("当前页面不在图谱中"));

    let after = server.call("get_graph_stats", json!({}));
    assert_eq!(before.1["pages"], after.1["pages"]);
    assert_eq!(before.1["transitions"], after.1["transitions"]);
    server.stop();
    // Nothing was written outside the data folder, and what is inside is consistent.
    let entries: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("data")]);
    assert!(!data.join("apps").join("com_x").exists());
    let (clean, out) = fsck(&data);
    assert!(clean, "{out}");
}

#[test]
fn a_second_server_on_the_same_folder_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args([
            "serve",
            "--data",
            tmp.path().to_str().unwrap(),
            "--addr",
            &format!("127.0.0.1:{}", free_port()),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("in use by another atlas process"),
        "{stderr}"
    );
    server.stop();
}

#[test]
fn bearer_token_is_required_when_set() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--token", "s3cret"]);
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer s3cret")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 200);
    server.stop();
}

#[test]
fn every_acknowledged_report_survives_sigkill() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &["--checkpoint-secs", "1"]);
    let a = server.call(
        "add_page",
        json!({"app_id": "com.kill", "page_name": "首页", "page_type": "home"}),
    );
    let b = server.call(
        "add_page",
        json!({"app_id": "com.kill", "page_name": "详情"}),
    );
    let (from, to) = (
        a.1["page_id"].as_str().unwrap().to_string(),
        b.1["page_id"].as_str().unwrap().to_string(),
    );

    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let url = server.url.clone();
    let workers: Vec<_> = (0..16)
        .map(|w| {
            let (acked, stop, url, from, to) = (acked.clone(), stop.clone(), url.clone(), from.clone(), to.clone());
            std::thread::spawn(move || {
                let agent = agent();
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let text = format!("按钮-{w}-{i}");
                    let body = json!({"from_page": from, "to_page": to, "action": {"type": "click", "widget_text": text}, "success": true, "latency_ms": 5});
                    match agent.post(&format!("{url}/api/v1/report_transition")).header("Content-Type", "application/json").send(body.to_string()) {
                        Ok(r) if r.status() == 200 => acked.lock().unwrap().push(text),
                        _ => break, // the server is gone
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(2500));
    server.kill9();
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() > 100,
        "too few reports before the kill: {}",
        acked.len()
    );

    let server = Server::start(&data, &[]);
    let (status, actions) = server.call("get_available_actions", json!({"page_id": from}));
    assert_eq!(status, 200);
    let present: std::collections::HashSet<String> = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["widget_text"].as_str().unwrap().to_string())
        .collect();
    let lost: Vec<&String> = acked.iter().filter(|t| !present.contains(*t)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged reports lost, e.g. {:?}",
        lost.len(),
        acked.len(),
        &lost[..lost.len().min(5)]
    );
    server.stop();
    let (clean, out) = fsck(&data);
    assert!(clean, "{out}");
}

#[test]
fn openapi_document_and_tool_list_describe_every_route_that_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &["--demo"]);
    let mut r = agent()
        .get(&format!("{}/api/v1/openapi.json", server.url))
        .call()
        .unwrap();
    assert_eq!(r.status(), 200);
    let doc: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    let mut r = agent()
        .get(&format!("{}/api/v1/tools", server.url))
        .call()
        .unwrap();
    let tools: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    let tools = tools
        .as_array()
        .or_else(|| tools["tools"].as_array())
        .expect("a list of tools")
        .clone();
    assert!(tools.len() >= 11, "seed 000's eleven interfaces at least");
    for tool in &tools {
        let function = &tool["function"];
        assert_eq!(tool["type"], "function");
        let name = function["name"].as_str().unwrap();
        assert!(
            !function["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{name} has a description"
        );
        assert_eq!(
            function["parameters"]["type"], "object",
            "{name}'s parameters are an object schema"
        );
        let path = format!("/api/v1/{name}");
        assert!(
            paths.get(&path).and_then(|p| p.get("post")).is_some(),
            "{path} is in the OpenAPI document"
        );
        // The route exists: an empty object is either enough or a parameter error, never 404.
        let (status, body) = server.call(name, json!({}));
        assert!(
            status == 200 || (status == 400 && body["error"]["code"] == "INVALID_PARAMETER"),
            "{name}: {status} {body}"
        );
    }
    for name in [
        "query_path",
        "get_next_action",
        "match_current_page",
        "get_rag_context",
        "report_transition",
        "end_session",
        "add_page",
        "register_intent",
        "get_available_actions",
        "find_similar_intents",
        "get_graph_stats",
        "batch_add_transitions",
    ] {
        assert!(
            tools.iter().any(|t| t["function"]["name"] == name),
            "{name} is listed"
        );
    }
    server.stop();
}

#[test]
fn control_characters_in_queries_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo"]);
    for (tool, body) in [
        ("search_businesses", json!({"query": "开卡\u{0}流程"})),
        ("search_implementations", json!({"query": "订单\u{1b}[31m"})),
        ("search_data_resources", json!({"query": "表\u{7}"})),
        (
            "retrieve_knowledge",
            json!({"dataset_id": DEMO_DATASET, "query": "退货\u{0}", "api_key": "dataset-demo-key"}),
        ),
    ] {
        let (status, answer) = server.call(tool, body);
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_PARAMETER")),
            "{tool}: {answer}"
        );
    }
    let (status, answer) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/retrieve"),
        Some("dataset-demo-key"),
        &json!({"query": "退货\u{0}运费"}).to_string(),
    );
    assert_eq!(
        (status, answer["code"].as_str()),
        (400, Some("invalid_param")),
        "{answer}"
    );
    server.stop();
}

#[test]
fn numbers_and_texts_are_read_as_the_openapi_document_states() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo"]);
    // Python and JavaScript send whole floats where a count is wanted.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "max_steps": 5.0}),
    );
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = server.call(
        "find_similar_intents",
        json!({"query": "外卖", "top_k": 2.5}),
    );
    assert_eq!(status, 400, "a fraction is not a count: {answer}");
    // Beyond 2^53 - 1 an integer is not carried exactly by JSON: refused where one is named.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "max_steps": 9007199254740993u64}),
    );
    assert_eq!(
        (status, answer["error"]["details"]["field"].as_str()),
        (400, Some("max_steps")),
        "{answer}"
    );
    // A control character in a named text is refused; in a field no interface reads, ignored.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点\u{1}外卖"}),
    );
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "note\u{1}": "\u{7f}", "n": 1e300}),
    );
    assert_eq!(status, 200, "{answer}");
    // No body is `{}` (enough for get_graph_stats); `null` is not an object.
    let (status, _) = server.post("get_graph_stats", b"");
    assert_eq!(status, 200);
    let (status, answer) = server.post("get_graph_stats", b"null");
    assert_eq!(status, 400, "{answer}");
    // Every operation's answer has its schema in the document.
    let (_, doc) = dify_request(&server, "GET", "/api/v1/openapi.json", None, "", b"");
    let answer = &doc["paths"]["/api/v1/query_path"]["post"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    assert!(
        answer["properties"]["success"].is_object(),
        "query_path's answer is described: {answer}"
    );
    for path in [
        "/v1/datasets/{dataset_id}/retrieve",
        "/mcp",
        "/retrieval",
        "/api/v1/chat",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is documented");
    }
    server.stop();
}
