//! The real `atlas` binary on loopback: bad input, the writer lock, and durability under SIGKILL.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{Server, agent, free_port, fsck, unsafe_terminate};

impl Server {
    /// Announces an 11 MB body and reads the answer without sending it: the server must refuse
    /// from the header alone (a client streaming the body could see the connection closed first).
    fn oversize_post(&self, name: &str) -> (u16, Value) {
        self.announce_oversize(&format!("/api/v1/{name}"), "application/json", None)
    }

    /// Sends only the head of a POST announcing 11 MB (and one byte of it) and reads the answer.
    fn announce_oversize(&self, path: &str, content_type: &str, key: Option<&str>) -> (u16, Value) {
        use std::io::{Read, Write};
        let addr = self.url.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{{",
            key.map(|k| format!("Authorization: Bearer {k}\r\n"))
                .unwrap_or_default(),
            11 * 1024 * 1024
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer).to_string();
        let status: u16 = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        (
            status,
            serde_json::from_str(body).unwrap_or(Value::String(answer.clone())),
        )
    }
}

fn assert_error(resp: &(u16, Value), status: u16, code: &str) {
    assert_eq!(resp.0, status, "{resp:?}");
    assert_eq!(resp.1["success"], json!(false), "{resp:?}");
    assert_eq!(resp.1["error"]["code"], json!(code), "{resp:?}");
    assert!(
        resp.1["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert!(resp.1["error"]["details"].is_object());
}

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

/// A DroidTask folder with one app: an exploration and two demonstrations of one template.
fn tiny_droidtask(root: &Path) {
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

const DEMO_DATASET: &str = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001";

fn dify_post(server: &Server, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
    let mut request = agent()
        .post(&format!("{}{path}", server.url))
        .header("Content-Type", "application/json");
    if let Some(key) = key {
        request = request.header("Authorization", &format!("Bearer {key}"));
    }
    let mut r = request.send(body).unwrap();
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn assert_dify_error(resp: &(u16, Value), status: u16, code: &str) {
    assert_eq!(
        (resp.0, resp.1["status"].as_u64(), resp.1["code"].as_str()),
        (status, Some(status as u64), Some(code)),
        "{resp:?}"
    );
    assert!(
        resp.1["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{resp:?}"
    );
}

#[test]
fn dify_routes_serve_the_demo_dataset_with_its_own_key() {
    let tmp = tempfile::tempdir().unwrap();
    // A server token guards /api/v1; Dify's routes answer to each dataset's key instead.
    let server = Server::start(tmp.path(), &["--demo", "--token", "s3cret"]);
    let retrieve = format!("/v1/datasets/{DEMO_DATASET}/retrieve");
    let (status, body) = dify_post(
        &server,
        &retrieve,
        Some("dataset-demo-key"),
        r#"{"query": "退货运费谁出"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["query"]["content"], "退货运费谁出");
    let record = &body["records"][0];
    assert!(
        record["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("运费"),
        "{record}"
    );
    for key in [
        "id",
        "position",
        "document_id",
        "word_count",
        "tokens",
        "keywords",
        "index_node_id",
        "hit_count",
        "enabled",
        "status",
        "created_at",
        "document",
    ] {
        assert!(
            record["segment"].get(key).is_some(),
            "segment.{key} missing: {record}"
        );
    }
    assert!(
        record["child_chunks"].is_array()
            && record["files"].is_array()
            && record["tsne_position"].is_null()
            && record["score"]
                .as_f64()
                .is_some_and(|s| s > 0.0 && s <= 1.0)
    );
    // A partial retrieval_model, the hit-testing alias, and a threshold nothing reaches.
    let (status, body) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/hit-testing"),
        Some("dataset-demo-key"),
        r#"{"query": "积分", "retrieval_model": {"top_k": 2}}"#,
    );
    assert_eq!(
        (status, body["records"].as_array().map(Vec::len)),
        (200, Some(2)),
        "{body}"
    );
    let (_, body) = dify_post(
        &server,
        &retrieve,
        Some("dataset-demo-key"),
        r#"{"query": "积分", "retrieval_model": {"search_method": "keyword_search", "reranking_enable": false, "top_k": 3, "score_threshold_enabled": true, "score_threshold": 0.99}}"#,
    );
    assert_eq!(body["records"], json!([]));

    assert_dify_error(
        &dify_post(&server, &retrieve, None, r#"{"query": "退款"}"#),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-wrong"),
            r#"{"query": "退款"}"#,
        ),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_post(
            &server,
            "/v1/datasets/6f1d7d1e-6b0a-4d1e-9f1e-00000000ffff/retrieve",
            Some("dataset-demo-key"),
            r#"{"query": "退款"}"#,
        ),
        404,
        "not_found",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            &json!({ "query": "长".repeat(251) }).to_string(),
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            r#"{"query": ""}"#,
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(&server, &retrieve, Some("dataset-demo-key"), "{not json"),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            r#"{"query": "退款", "retrieval_model": {"search_method": "magic"}}"#,
        ),
        400,
        "invalid_param",
    );

    // Dify's External Knowledge API: knowledge_id is the dataset.
    let external =
        |key: &str, body: Value| dify_post(&server, "/retrieval", Some(key), &body.to_string());
    let (status, body) = external(
        "dataset-demo-key",
        json!({ "knowledge_id": DEMO_DATASET, "query": "怎么开发票", "retrieval_setting": { "top_k": 2, "score_threshold": 0.0 } }),
    );
    assert_eq!(status, 200, "{body}");
    let first = &body["records"][0];
    assert!(
        first["content"].as_str().unwrap().contains("发票")
            && first["metadata"].is_object()
            && first["title"].is_string(),
        "{body}"
    );
    let (status, body) = external(
        "dataset-wrong",
        json!({ "knowledge_id": DEMO_DATASET, "query": "发票", "retrieval_setting": { "top_k": 1, "score_threshold": 0.0 } }),
    );
    assert_eq!(
        (status, body["error_code"].as_u64()),
        (403, Some(1002)),
        "{body}"
    );
    let (status, body) = external(
        "dataset-demo-key",
        json!({ "knowledge_id": "nope", "query": "发票", "retrieval_setting": { "top_k": 1, "score_threshold": 0.0 } }),
    );
    assert_eq!(
        (status, body["error_code"].as_u64()),
        (404, Some(2001)),
        "{body}"
    );
    // The server token still guards the graph's interfaces.
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 401);
    server.stop();
    // The demo dataset and its hit counts are in the data folder.
    let hits = std::fs::read_to_string(tmp.path().join("kb").join(DEMO_DATASET).join("hits.json"))
        .unwrap();
    assert!(hits.contains(": "), "{hits}");
}

/// A request on Dify's routes with any method and body type; the answer's status and JSON.
fn dify_request(
    server: &Server,
    method: &str,
    path: &str,
    key: Option<&str>,
    content_type: &str,
    body: &[u8],
) -> (u16, Value) {
    let url = format!("{}{path}", server.url);
    let auth = key.map(|k| format!("Bearer {k}"));
    let mut r = match method {
        "GET" | "DELETE" => {
            let mut request = if method == "GET" {
                agent().get(&url)
            } else {
                agent().delete(&url)
            };
            if let Some(a) = &auth {
                request = request.header("Authorization", a);
            }
            request.call().unwrap()
        }
        _ => {
            let mut request = if method == "PUT" {
                agent().put(&url)
            } else {
                agent().post(&url)
            }
            .header("Content-Type", content_type);
            if let Some(a) = &auth {
                request = request.header("Authorization", a);
            }
            request.send(body).unwrap()
        }
    };
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The knowledge base's file limit (10 MB), a whole number of 3-byte characters.
fn atlas_kb_limit() -> usize {
    10 * 1024 * 1024 / 3 * 3
}

/// Dify's create-by-file form: the file and the settings as a JSON string.
fn multipart(file_name: &str, file: &[u8], data: &str) -> (String, Vec<u8>) {
    let boundary = "atlas-test-boundary-7d1e";
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"data\"\r\nContent-Type: text/plain\r\n\r\n{data}\r\n").as_bytes());
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[test]
fn dify_knowledge_api_fills_a_running_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--token", "admin-token"]);
    let json_type = "application/json";
    // Creating a dataset takes the server token; the answer carries the dataset's own key.
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            "/v1/datasets",
            None,
            json_type,
            br#"{"name": "faq"}"#,
        ),
        401,
        "unauthorized",
    );
    let (status, created) = dify_request(
        &server,
        "POST",
        "/v1/datasets",
        Some("admin-token"),
        json_type,
        r#"{"name": "售后 FAQ", "description": "客服问答"}"#.as_bytes(),
    );
    assert_eq!(status, 200, "{created}");
    let (id, key) = (
        created["id"].as_str().unwrap().to_string(),
        created["api_key"].as_str().unwrap().to_string(),
    );
    assert_eq!(
        (created["name"].as_str(), created["document_count"].as_u64()),
        (Some("售后 FAQ"), Some(0))
    );
    let (_, other) = dify_request(
        &server,
        "POST",
        "/v1/datasets",
        Some("admin-token"),
        json_type,
        br#"{"name": "other"}"#,
    );
    let (other_id, other_key) = (
        other["id"].as_str().unwrap().to_string(),
        other["api_key"].as_str().unwrap().to_string(),
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            "/v1/datasets",
            Some("admin-token"),
            json_type,
            br#"{"description": "no name"}"#,
        ),
        400,
        "invalid_param",
    );

    // While the server runs, the CLI may read the knowledge base but not write it.
    let data = tmp.path().to_str().unwrap();
    let listed = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["kb", "list", "--data", data])
        .output()
        .unwrap();
    assert!(
        listed.status.success() && String::from_utf8_lossy(&listed.stdout).contains(&id),
        "{listed:?}"
    );
    let refused = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["kb", "create", "--data", data, "x"])
        .output()
        .unwrap();
    assert!(
        !refused.status.success()
            && String::from_utf8_lossy(&refused.stderr).contains("/v1/datasets"),
        "{refused:?}"
    );

    // A question/answer table by text, then retrieved with the dataset's key.
    let docs = format!("/v1/datasets/{id}/document/create-by-text");
    let table = json!({ "name": "faq.csv", "text": "question,answer\n发票怎么开？,在订单详情页点击申请开票。\n多久发货？,付款后48小时内发货。\n" });
    let (status, made) = dify_request(
        &server,
        "POST",
        &docs,
        Some(&key),
        json_type,
        table.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{made}");
    let doc_id = made["document"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        (
            made["batch"].as_str(),
            made["document"]["doc_form"].as_str(),
            made["document"]["indexing_status"].as_str()
        ),
        (Some(doc_id.as_str()), Some("qa_model"), Some("completed"))
    );
    let (_, progress) = dify_request(
        &server,
        "GET",
        &format!("/v1/datasets/{id}/documents/{doc_id}/indexing-status"),
        Some(&key),
        "",
        b"",
    );
    assert_eq!(
        (
            progress["data"][0]["indexing_status"].as_str(),
            progress["data"][0]["total_segments"].as_u64()
        ),
        (Some("completed"), Some(2)),
        "{progress}"
    );
    let retrieve = format!("/v1/datasets/{id}/retrieve");
    let ask = |query: &str| {
        dify_post(
            &server,
            &retrieve,
            Some(&key),
            &json!({ "query": query }).to_string(),
        )
    };
    assert!(
        ask("开发票").1["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("申请开票")
    );

    // A Markdown file through Dify's multipart form, with metadata Atlas keeps for filtering.
    let (form_type, form) = multipart(
        "manual.md",
        "# 退货\n\n七天内可以无理由退货。\n\n# 保修\n\n电子产品保修一年。\n".as_bytes(),
        r#"{"indexing_technique": "high_quality", "doc_metadata": {"lang": "zh"}}"#,
    );
    let (status, made) = dify_request(
        &server,
        "POST",
        &format!("/v1/datasets/{id}/document/create-by-file"),
        Some(&key),
        &form_type,
        &form,
    );
    assert_eq!(
        (
            status,
            made["document"]["name"].as_str(),
            made["document"]["doc_metadata"]["lang"].as_str()
        ),
        (200, Some("manual.md"), Some("zh")),
        "{made}"
    );
    let manual_id = made["document"]["id"].as_str().unwrap().to_string();
    assert!(
        ask("保修多久").1["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("一年")
    );

    // Bad input: Dify's error, and nothing changed.
    let (form_type, binary) = multipart("scan.pdf", b"%PDF-1.7\x00\x01\x02\xff\xfe binary", "{}");
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &format!("/v1/datasets/{id}/document/create-by-file"),
            Some(&key),
            &form_type,
            &binary,
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&key),
            json_type,
            br#"{"name": "empty.txt"}"#,
        ),
        400,
        "invalid_param",
    );
    // A file just over the limit is read and refused; a body announced far over it is refused
    // from its header.
    let big = "问".repeat(atlas_kb_limit() / 3 + 1);
    let (form_type, form) = multipart("big.txt", big.as_bytes(), "{}");
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &format!("/v1/datasets/{id}/document/create-by-file"),
            Some(&key),
            &form_type,
            &form,
        ),
        413,
        "file_too_large",
    );
    let (form_type, _) = multipart("", b"", "");
    assert_dify_error(
        &server.announce_oversize(
            &format!("/v1/datasets/{id}/document/create-by-file"),
            &form_type,
            Some(&key),
        ),
        413,
        "file_too_large",
    );
    assert_dify_error(
        &server.announce_oversize(&docs, json_type, Some(&key)),
        413,
        "file_too_large",
    );
    assert_dify_error(
        &dify_request(&server, "POST", &docs, Some(&key), json_type, b"{not json"),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&other_key),
            json_type,
            table.to_string().as_bytes(),
        ),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&key),
            json_type,
            json!({ "name": "a.csv", "text": "name,price\nx,1\n" })
                .to_string()
                .as_bytes(),
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "GET",
            &format!("/v1/datasets/{id}/documents?limit=0"),
            Some(&key),
            "",
            b"",
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{id}/documents/{other_id}"),
            Some(&key),
            "",
            b"",
        ),
        404,
        "not_found",
    );
    let (_, listed) = dify_request(
        &server,
        "GET",
        &format!("/v1/datasets/{id}/documents?page=1&limit=1"),
        Some(&key),
        "",
        b"",
    );
    assert_eq!(
        (
            listed["total"].as_u64(),
            listed["has_more"].as_bool(),
            listed["data"].as_array().map(Vec::len)
        ),
        (Some(2), Some(true), Some(1)),
        "{listed}"
    );

    // Replacing a document by text keeps its id and name; the old answers are gone.
    let update = json!({ "text": "question,answer\n发票怎么开？,发票在“发票管理”里申请。\n" });
    let (status, updated) = dify_request(
        &server,
        "POST",
        &format!("/v1/datasets/{id}/documents/{doc_id}/update-by-text"),
        Some(&key),
        json_type,
        update.to_string().as_bytes(),
    );
    assert_eq!(
        (
            status,
            updated["document"]["id"].as_str(),
            updated["document"]["name"].as_str()
        ),
        (200, Some(doc_id.as_str()), Some("faq.csv")),
        "{updated}"
    );
    let (_, found) = ask("开发票");
    assert!(
        found["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("发票管理"),
        "{found}"
    );
    assert!(!found.to_string().contains("48小时"), "{found}");

    // Deleting the manual and the other dataset; the server token opens any dataset.
    assert_eq!(
        dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{id}/documents/{manual_id}"),
            Some(&key),
            "",
            b""
        )
        .0,
        204
    );
    assert!(!ask("保修多久").1.to_string().contains("一年"));
    assert_eq!(
        dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{other_id}"),
            Some("admin-token"),
            "",
            b""
        )
        .0,
        204
    );
    assert_dify_error(
        &dify_post(
            &server,
            &format!("/v1/datasets/{other_id}/retrieve"),
            Some(&other_key),
            r#"{"query": "x"}"#,
        ),
        404,
        "not_found",
    );
    let (_, all) = dify_request(
        &server,
        "GET",
        "/v1/datasets?limit=100",
        Some("admin-token"),
        "",
        b"",
    );
    assert_eq!(
        (
            all["total"].as_u64(),
            all["data"][0]["document_count"].as_u64()
        ),
        (Some(1), Some(1)),
        "{all}"
    );
    server.stop();

    // Everything answered with success is on disk: a new server sees the same knowledge base.
    let server = Server::start(tmp.path(), &["--token", "admin-token"]);
    let (_, found) = dify_post(&server, &retrieve, Some(&key), r#"{"query": "开发票"}"#);
    assert!(
        found["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("发票管理"),
        "{found}"
    );
    assert_eq!(
        dify_request(
            &server,
            "GET",
            &format!("/v1/datasets/{id}"),
            Some(&key),
            "",
            b""
        )
        .1["document_count"]
            .as_u64(),
        Some(1)
    );
    server.stop();
    assert!(!tmp.path().join("kb").join(&other_id).exists());
}

/// `atlas model-sim` on a free port with the demo script.
fn model_sim() -> (Child, String) {
    model_sim_playing(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atlas-chat/demo/business.json"
    )))
}

/// `atlas model-sim` on a free port with a script.
fn model_sim_playing(script: &Path) -> (Child, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let script = script.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["model-sim", script, "--addr", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if agent()
            .get(&format!("{url}/v1/models"))
            .call()
            .is_ok_and(|r| r.status() == 200)
        {
            return (child, url);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("model-sim did not start");
}

/// A raw MCP POST: (status, session header, body).
fn mcp_post(
    server: &Server,
    headers: &[(&str, &str)],
    body: &Value,
) -> (u16, Option<String>, Value) {
    let mut request = agent()
        .post(&format!("{}/mcp", server.url))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut r = request.send(body.to_string()).unwrap();
    let session = r
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        session,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[test]
fn business_graph_tools_chat_and_mcp_on_a_running_server() {
    let data = tempfile::tempdir().unwrap();
    let (mut sim, sim_url) = model_sim();
    let llm = format!("{sim_url}/v1");
    let server = Server::start(
        data.path(),
        &["--demo", "--kb-embedder", "same", "--llm-url", &llm],
    );

    // Seed 003's tools at /api/v1, with the seed's errors.
    let (status, found) = server.call("search_businesses", json!({"query": "开卡流程用到哪些表"}));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["candidates"][0]["process_id"], "p_monthly_card");
    assert_error(
        &server.call("search_businesses", json!({"query": "开卡", "limit": 0})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "get_neighbors",
            json!({"node_type": "table", "node_id": "x"}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call("summarize_business", json!({"process_id": "p_nope"})),
        404,
        "NOT_FOUND",
    );
    // A dataset's records need its key (this server has no token): without it, or with
    // another, 401; with it, the records.
    let ask = json!({"dataset_id": "6f1d7d1e-6b0a-4d1e-9f1e-000000000001", "query": "退货运费谁出", "top_k": 2});
    assert_error(
        &server.call("retrieve_knowledge", ask.clone()),
        401,
        "UNAUTHORIZED",
    );
    let mut wrong = ask.clone();
    wrong["api_key"] = json!("not-the-key");
    assert_error(
        &server.call("retrieve_knowledge", wrong),
        401,
        "UNAUTHORIZED",
    );
    let mut keyed = ask.clone();
    keyed["api_key"] = json!("dataset-demo-key");
    let (_, records) = server.call("retrieve_knowledge", keyed);
    assert!(
        !records["records"].as_array().unwrap().is_empty(),
        "{records}"
    );

    // The chat: the scripted model searches, opens the context, answers.
    let (status, chat) = server.call(
        "chat",
        json!({"messages": [{"role": "user", "content": "哪些接口写 user_profile？"}], "stream": false}),
    );
    assert_eq!(status, 200, "{chat}");
    let events = chat["events"].as_array().unwrap();
    let calls: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        ["search_data_resources", "get_resource_context_for_chat"]
    );
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done", "{done}");
    assert!(
        done["content"]
            .as_str()
            .unwrap()
            .contains("i_card_activate"),
        "{done}"
    );
    assert_eq!(done["focus"], json!({"resource_id": "r_user_profile"}));
    // The model was told the seed's rules and offered only the business and knowledge tools.
    let asked: Value = agent()
        .get(&format!("{sim_url}/requests"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let first = &asked[0];
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("不要假设用户会提供任何技术 ID")
    );
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"search_businesses") && offered.contains(&"retrieve_knowledge"));
    assert!(
        !offered.contains(&"query_path") && !offered.contains(&"report_transition"),
        "{offered:?}"
    );
    // Providers' quirks: arguments as an object, calls without ids.
    let (_, quirky) = server.call(
        "chat",
        json!({"messages": [{"role": "user", "content": "quirk"}], "stream": false}),
    );
    let done = quirky["events"].as_array().unwrap().last().unwrap().clone();
    assert!(
        done["content"]
            .as_str()
            .unwrap()
            .contains("/api/order/detail"),
        "{quirky}"
    );
    // Bad conversations are refused.
    assert_error(
        &server.call("chat", json!({"messages": []})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "chat",
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(&server.post("chat", b"{not json"), 400, "INVALID_PARAMETER");

    // MCP over HTTP, the handshake era, by hand.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let (status, session, answer) = mcp_post(&server, &[], &init);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    let session = session.expect("initialize opens a session");
    let (status, _, _) = mcp_post(
        &server,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "summarize_data_resource", "arguments": {"resource_id": "r_orders"}}});
    let (_, _, answer) = mcp_post(&server, &[("Mcp-Session-Id", &session)], &call);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["table"], "orders");
    let (status, _, _) = mcp_post(&server, &[("Mcp-Session-Id", "nope")], &call);
    assert_eq!(status, 404);
    let (status, _, _) = mcp_post(&server, &[("Origin", "http://evil.example")], &init);
    assert_eq!(status, 403);
    // The stateless era: a request without _meta's version is told what is supported.
    let (_, _, answer) = mcp_post(
        &server,
        &[],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    let listed = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let (_, _, answer) = mcp_post(&server, &[("MCP-Protocol-Version", "2026-07-28")], &listed);
    assert_eq!(answer["result"]["resultType"], "complete");
    assert!(answer["result"]["tools"].as_array().unwrap().len() >= 23);
    let (status, _, _) = mcp_post(&server, &[("MCP-Protocol-Version", "2025-11-25")], &listed);
    assert_eq!(status, 400, "a header that disagrees with _meta is refused");

    // The business graph as a whole: a broken import changes nothing; a good one is durable.
    let (status, graph) = dify_request(&server, "GET", "/api/v1/business-graph", None, "", b"");
    assert_eq!(status, 200);
    assert_eq!(graph["businesses"].as_array().unwrap().len(), 13);
    let broken = json!({"businesses": [{"process_id": "p1", "name": "流程"}], "relations": [{"type": "HAS_STEP", "from": "p1", "to": "s_missing"}]});
    let (status, _) = dify_request(
        &server,
        "PUT",
        "/api/v1/business-graph",
        None,
        "application/json",
        broken.to_string().as_bytes(),
    );
    assert_eq!(status, 400);
    // A document that names no list is a mistake, not "empty the graph".
    for empty in ["{}", "[]", "null", "{\"busineses\": []}"] {
        let (status, answer) = dify_request(
            &server,
            "PUT",
            "/api/v1/business-graph",
            None,
            "application/json",
            empty.as_bytes(),
        );
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_PARAMETER")),
            "{empty}: {answer}"
        );
    }
    let (_, graph) = dify_request(&server, "GET", "/api/v1/business-graph", None, "", b"");
    assert_eq!(graph["businesses"].as_array().unwrap().len(), 13);
    let apoc = [
        json!({"type": "node", "id": "1", "labels": ["Process"], "properties": {"process_id": "p_sign", "name": "签到领积分"}}),
        json!({"type": "node", "id": "2", "labels": ["Table"], "properties": {"resource_id": "r_sign", "name": "签到记录表", "table": "sign_log"}}),
        json!({"type": "node", "id": "3", "labels": ["Person"], "properties": {"name": "x"}}),
    ]
    .iter()
    .map(|l| l.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let (status, report) = dify_request(
        &server,
        "PUT",
        "/api/v1/business-graph?format=apoc",
        None,
        "application/x-ndjson",
        apoc.as_bytes(),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        (report["businesses"].as_u64(), report["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    server.stop();
    // Restarted without a model: the import is still there, and the chat says what is missing.
    let server = Server::start(data.path(), &["--kb-embedder", "same"]);
    let (_, found) = server.call("search_data_resources", json!({"query": "sign_log"}));
    assert_eq!(found["candidates"][0]["resource_id"], "r_sign", "{found}");
    assert_error(
        &server.call(
            "chat",
            json!({"messages": [{"role": "user", "content": "hi"}]}),
        ),
        404,
        "NOT_FOUND",
    );
    server.stop();
    let _ = sim.kill();
    let _ = sim.wait();
}

/// One request written by hand, headers exactly as given (`Host` included): status and body.
fn raw_request(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use std::io::{Read, Write};
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn web_pages_cannot_drive_a_local_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--allow-origin", "https://dash.example.com"]);
    let host = server.url.trim_start_matches("http://").to_string();
    let port = host.rsplit_once(':').unwrap().1.to_string();
    let page = json!({"app_id": "app", "page_name": "首页"}).to_string();
    let pages = |server: &Server| server.call("get_graph_stats", json!({})).1["pages"].as_u64();

    // A "simple" request a page may send anywhere: text/plain, or no type at all.
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut headers = vec![("Host", host.as_str()), ("Origin", "http://evil.example")];
        headers.extend(content_type.map(|t| ("Content-Type", t)));
        let (status, _) = raw_request(&server, "POST", "/api/v1/add_page", &headers, &page);
        assert!(status == 403 || status == 415, "{content_type:?}: {status}");
        let (status, body) = raw_request(
            &server,
            "POST",
            "/api/v1/add_page",
            &headers[..1]
                .iter()
                .copied()
                .chain(content_type.map(|t| ("Content-Type", t)))
                .collect::<Vec<_>>(),
            &page,
        );
        assert_eq!(status, 415, "{content_type:?}: {body}");
        assert!(body.contains("UNSUPPORTED_MEDIA_TYPE"), "{body}");
    }
    // JSON from a page of another origin: refused in the route family's own error format.
    let json_from = |origin: &str, path: &str| {
        raw_request(
            &server,
            "POST",
            path,
            &[
                ("Host", host.as_str()),
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            &page,
        )
    };
    let (status, body) = json_from("http://evil.example", "/api/v1/add_page");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("FORBIDDEN"), "{body}");
    let (status, body) = json_from("null", "/v1/datasets");
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("\"code\":\"forbidden\""), "{body}");
    assert_eq!(pages(&server), Some(0), "nothing was written");
    // The operator's dashboard and a page of this machine may.
    let (status, body) = json_from("https://dash.example.com", "/api/v1/add_page");
    assert_eq!(status, 200, "{body}");
    let (status, body) = json_from(&format!("http://localhost:{port}"), "/api/v1/add_page");
    assert_eq!(status, 200, "{body}");

    // DNS rebinding: a name that resolves here, Origin and Host agreeing.
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let (status, body) = raw_request(
        &server,
        "POST",
        "/mcp",
        &[
            ("Host", &evil_host),
            ("Origin", &evil_origin),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &initialize,
    );
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("jsonrpc"), "{body}");
    let (status, _) = raw_request(
        &server,
        "GET",
        "/api/v1/business-graph",
        &[("Host", &evil_host)],
        "",
    );
    assert_eq!(status, 403, "reading is refused too under a foreign name");
    let (status, body) = raw_request(
        &server,
        "POST",
        "/mcp",
        &[
            ("Host", &format!("localhost:{port}")),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &initialize,
    );
    assert_eq!(status, 200, "{body}");
    server.stop();
}

#[test]
fn probes_tokens_and_the_external_retrieval_take_what_clients_send() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo", "--token", "s3cret"]);
    let host = server.url.trim_start_matches("http://").to_string();
    // A health probe needs no token, and learns nothing but that the process answers.
    let (status, body) = raw_request(&server, "GET", "/healthz", &[("Host", &host)], "");
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    // The scheme is case-insensitive (RFC 9110).
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let auth = format!("{scheme} s3cret");
        let (status, body) = raw_request(
            &server,
            "POST",
            "/api/v1/get_graph_stats",
            &[
                ("Host", &host),
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            "{}",
        );
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    // The server token opens every dataset, on the External Knowledge API too.
    let query = json!({"knowledge_id": DEMO_DATASET, "query": "退货运费谁出", "retrieval_setting": {"top_k": 2}}).to_string();
    let (status, body) = raw_request(
        &server,
        "POST",
        "/retrieval",
        &[
            ("Host", &host),
            ("Authorization", "Bearer s3cret"),
            ("Content-Type", "application/json"),
        ],
        &query,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("records"), "{body}");
    server.stop();
}

#[test]
fn commands_refuse_before_they_write_and_log_plainly_to_files() {
    let tmp = tempfile::tempdir().unwrap();
    let atlas = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(args)
            .env("ATLAS_EMBEDDER", "hash")
            .output()
            .unwrap()
    };
    // A mistyped folder is an error, and is not created.
    let typo = tmp.path().join("typo");
    for command in ["fsck", "stats"] {
        let out = atlas(&[command, "--data", typo.to_str().unwrap()]);
        assert!(
            !out.status.success(),
            "{command} succeeded on a missing folder"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("no data folder"));
        assert!(!typo.exists(), "{command} created the folder");
    }
    // A port in use fails before the folder is set up.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let fresh = tmp.path().join("fresh");
    let started = Instant::now();
    let out = atlas(&[
        "serve",
        "--demo",
        "--data",
        fresh.to_str().unwrap(),
        "--addr",
        &addr,
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
    assert!(
        !fresh.exists(),
        "the folder was set up before the bind failed"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // Logs to a file (here a pipe) carry no colour codes.
    let data = tmp.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = atlas(&["stats", "--data", data.to_str().unwrap()]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("opened"), "{log}");
    assert!(
        !log.contains('\u{1b}'),
        "escape codes in a log file: {log:?}"
    );
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
fn sigterm_during_a_large_upload_stops_within_seconds_and_leaves_the_folder_consistent() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo"]);
    let (status, dataset) = dify_post(&server, "/v1/datasets", None, r#"{"name":"大文档"}"#);
    assert_eq!(status, 200, "{dataset}");
    let (id, key) = (
        dataset["id"].as_str().unwrap().to_string(),
        dataset["api_key"].as_str().unwrap().to_string(),
    );
    // About 9 MB of Chinese paragraphs: thousands of segments for the model to embed.
    let paragraph = "订单退款物流发票会员积分优惠券地址客服配送售后换货支付账户。".repeat(12);
    let text: String = (0..9_000).map(|i| format!("{i}{paragraph}\n\n")).collect();
    let body = json!({"name": "large.txt", "text": text, "indexing_technique": "high_quality"})
        .to_string();
    let url = format!("{}/v1/datasets/{id}/document/create-by-text", server.url);
    let upload = std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(600)))
            .build()
            .into();
        agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Authorization", &format!("Bearer {key}"))
            .send(body)
            .map(|r| r.status().as_u16())
    });
    std::thread::sleep(Duration::from_secs(3));
    // Meanwhile another dataset answers.
    let (status, answer) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/retrieve"),
        Some("dataset-demo-key"),
        r#"{"query":"退货运费谁出"}"#,
    );
    assert_eq!(status, 200, "{answer}");
    let asked = Instant::now();
    let mut server = server;
    unsafe_terminate(&server.child);
    let exit = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(30),
            "still running 30 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = asked.elapsed();
    eprintln!("SIGTERM to exit during the upload: {took:?}");
    assert!(exit.success(), "{exit}");
    // The upload was answered (503 if it was stopped, 200 if it had finished) or cut off.
    let answered = upload.join().unwrap();
    assert!(
        matches!(answered, Ok(200) | Ok(503) | Err(_)),
        "{answered:?}"
    );
    let (clean, report) = fsck(tmp.path());
    assert!(clean, "{report}");
    // Restarted: the dataset holds the whole document or nothing of it.
    let server = Server::start(tmp.path(), &[]);
    let (status, documents) = dify_request(
        &server,
        "GET",
        &format!("/v1/datasets/{id}/documents"),
        Some(dataset["api_key"].as_str().unwrap()),
        "",
        b"",
    );
    assert_eq!(status, 200, "{documents}");
    let listed = documents["data"].as_array().unwrap();
    match answered {
        Ok(200) => assert_eq!(listed.len(), 1, "{documents}"),
        _ => assert!(listed.len() <= 1, "{documents}"),
    }
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

/// A child process that ends with the test, passed or failed (a failed test would otherwise
/// leave it holding the test's output open).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether Debian's `adb` is here; under CI its absence fails (scripts/test.sh installs it).
fn adb_installed() -> bool {
    let here = Command::new("adb")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !here {
        assert!(
            std::env::var_os("CI").is_none(),
            "adb is not installed, and scripts/test.sh installs it"
        );
        eprintln!("adb is not installed: skipped");
    }
    here
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

#[test]
fn a_task_done_once_is_replayed_from_the_graph() {
    if !adb_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data, &["--demo"]);
    let log = dir.path().join("phone.jsonl");
    let (_sim, serial) = phone_sim(&data, "com.meituan.app", &log);
    assert!(adb(&["connect", &serial]).contains("connected"));
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
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
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
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap()
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
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    // Second run: the graph remembers the finished session and takes both taps without the
    // model, through the same screens, and finishes where that session finished.
    let second = run(&[]);
    assert_eq!(second["ending"], "finished");
    let steps = second["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["chosen_by"] == "graph"), "{second}");
    assert_eq!(second["model_calls"], 0, "{second}");
    let taps_now = reached(lines);
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
fn eval_agent_runs_demonstrated_tasks_on_the_simulated_phone_in_three_conditions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
    if !root.join("user_tasks/applauncher").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("agent.json");
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["eval", "agent"])
        .arg(&root)
        .args(["--apps", "applauncher", "--embedder", "hash", "--json"])
        .arg(&json_path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let condition = |name: &str| report["conditions"][name].clone();
    let model_only = condition("model_only");
    let tasks = model_only["tasks"].as_u64().unwrap();
    assert!(tasks >= 3, "{report}");
    // The ideal model through the agent, the in-process backend and the simulator does every
    // linked task, with no graph.
    assert_eq!(model_only["succeeded"], tasks, "{said}");
    assert_eq!(model_only["fast_path_steps"], 0);
    assert!(model_only["model_calls"].as_u64().unwrap() >= tasks * 2);
    for name in ["graph_new_task", "graph_repeat"] {
        let c = condition(name);
        assert_eq!(c["tasks"], tasks, "{name}");
        for key in [
            "succeeded",
            "model_calls",
            "fast_path_steps",
            "wrong_fast_path_steps",
        ] {
            assert!(c[key].is_u64(), "{name}.{key}: {c}");
        }
    }
    // The same task again costs fewer model calls than without the graph.
    assert!(
        condition("graph_repeat")["model_calls"].as_u64().unwrap()
            < model_only["model_calls"].as_u64().unwrap(),
        "{said}"
    );
    assert_eq!(report["runs"].as_array().unwrap().len() as u64, tasks * 3);
}

/// Opens `GET /api/v1/events` on a raw connection; the reader gets the stream after the head.
fn event_stream(server: &Server, query: &str) -> std::io::BufReader<std::net::TcpStream> {
    use std::io::{BufRead, Write};
    let addr = server.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET /api/v1/events{query} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("200"), "{line}");
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            return reader;
        }
    }
}

#[test]
fn learning_is_streamed_live_and_a_slow_viewer_is_dropped_not_waited_for() {
    use std::io::{BufRead, Read};
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &[]);
    let page = |name: &str| {
        let (status, body) = server.call(
            "add_page",
            json!({ "app_id": "com.example.live", "page_name": name }),
        );
        assert_eq!(status, 200, "{body}");
        body["page_id"].as_str().unwrap().to_string()
    };
    let mut live = event_stream(&server, "?app_id=com.example.live");
    let slow = event_stream(&server, "");
    let (from, to) = (page("首页"), page("设置"));
    let report = json!({ "from_page": from, "to_page": to, "action": { "type": "click", "widget_text": "设置" }, "success": true });
    assert_eq!(server.call("report_transition", report.clone()).0, 200);
    // The viewer sees the app, both pages and the report, in order, as events with JSON data.
    let mut seen: Vec<(String, Value)> = Vec::new();
    let mut kind = String::new();
    while seen.iter().all(|(k, _)| k != "report") {
        let mut line = String::new();
        live.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if let Some(k) = line.strip_prefix("event: ") {
            kind = k.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            seen.push((kind.clone(), serde_json::from_str(data).unwrap()));
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["app", "page", "page", "report"], "{seen:?}");
    let (_, reported) = &seen[3];
    assert_eq!(
        (
            reported["from_page"].as_str(),
            reported["success"].as_bool(),
            reported["success_count"].as_u64()
        ),
        (Some(from.as_str()), Some(true), Some(1)),
        "{reported}"
    );
    // A burst of 5,000 new edges (one batch) is more than a viewer's buffer: the write does not
    // wait for the viewer that reads nothing, and that viewer's stream is ended, not kept growing.
    let burst: Vec<Value> = (0..5000)
        .map(|i| json!({ "from_page": from, "to_page": to, "action_type": "click", "widget_text": format!("按钮{i}") }))
        .collect();
    let (status, body) = server.call("batch_add_transitions", json!({ "transitions": burst }));
    assert_eq!(
        (status, body["created"].as_u64()),
        (200, Some(5000)),
        "{body}"
    );
    // The response ends with its last chunk (the connection itself may be kept for reuse).
    let mut rest = Vec::new();
    let mut slow = slow;
    let mut chunk = [0u8; 65536];
    while !rest.ends_with(b"\r\n0\r\n\r\n") {
        match slow.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => rest.extend_from_slice(&chunk[..n]),
            Err(e) => panic!("the stalled viewer's stream did not end: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&rest);
    assert!(
        text.matches("event: transition").count() < 5000,
        "every event was kept for it"
    );
    server.stop();
}

/// GET `path`: the status, the content type and the body.
fn get_bytes(server: &Server, path: &str) -> (u16, String, Vec<u8>) {
    let mut r = agent()
        .get(&format!("{}{path}", server.url))
        .call()
        .unwrap();
    let content_type = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = r
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_vec()
        .unwrap();
    (r.status().as_u16(), content_type, body)
}

#[test]
fn the_viewer_is_served_from_the_binary_and_its_tools_tell_pages_screenshots_and_recent_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&tmp.path().join("data"), &[]);
    // The page, its script, styles and the bundled drawing library, all from this origin.
    let (status, content_type, html) = get_bytes(&server, "/");
    let html = String::from_utf8(html).unwrap();
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(html.contains("Atlas 图谱浏览器"), "a Chinese page");
    assert!(!html.contains("http"), "nothing named on another origin");
    for (path, needle) in [
        ("/viewer/viewer.js", "get_page_details"),
        ("/viewer/graph-lib.js", "AtlasGraphLib"),
        ("/viewer/viewer.css", "#graph"),
    ] {
        let (status, _, body) = get_bytes(&server, path);
        assert_eq!(status, 200, "{path}");
        assert!(String::from_utf8_lossy(&body).contains(needle), "{path}");
    }

    let page = |app: &str, name: &str| {
        let (status, body) = server.call("add_page", json!({ "app_id": app, "page_name": name }));
        assert_eq!(status, 200, "{body}");
        body["page_id"].as_str().unwrap().to_string()
    };
    let (home, settings) = (
        page("com.example.view", "首页"),
        page("com.example.view", "设置"),
    );
    let elsewhere = page("com.example.other", "首页");
    for success in [true, false] {
        let report = json!({ "from_page": home, "to_page": settings, "action": { "type": "click", "widget_text": "设置" }, "success": success, "latency_ms": 400 });
        assert_eq!(server.call("report_transition", report).0, 200);
    }
    // Statistics given in a batch are not reports an agent made.
    let batch = json!({ "transitions": [{ "from_page": settings, "to_page": home, "action_type": "back", "success_count": 7 }] });
    assert_eq!(server.call("batch_add_transitions", batch).0, 200);
    let (_, stats) = server.call("get_graph_stats", json!({ "app_id": "com.example.view" }));
    let app = &stats["by_app"][0];
    assert_eq!(
        (app["reports"].as_u64(), app["reports_last_hour"].as_u64()),
        (Some(9), Some(2)),
        "{stats}"
    );

    let (status, details) = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": home }),
    );
    assert_eq!(status, 200, "{details}");
    let action = &details["actions"][0];
    assert_eq!(
        (
            action["other_page_name"].as_str(),
            action["success_count"].as_u64(),
            action["fail_count"].as_u64()
        ),
        (Some("设置"), Some(1), Some(1)),
        "{details}"
    );
    assert_eq!(details["incoming"][0]["success_count"], 7, "{details}");
    assert_eq!(details["depth"], 0);
    let reports = details["recent_reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{details}");
    assert_eq!(
        (
            reports[0]["failed"].as_u64(),
            reports[1]["succeeded"].as_u64()
        ),
        (Some(1), Some(1)),
        "newest first: {details}"
    );
    assert_eq!(reports[0]["latency_ms"], 400.0);
    assert!(details["screenshot"].is_null());
    // Its seed 001 folder, inside the data folder; a screenshot put there (as the explorer
    // does) is pointed to and served.
    let folder = std::path::PathBuf::from(details["folder"].as_str().unwrap());
    assert!(folder.starts_with(tmp.path().join("data")), "{folder:?}");
    std::fs::create_dir_all(&folder).unwrap();
    let png = b"\x89PNG\r\n\x1a\n not really an image, but bytes to serve back".to_vec();
    std::fs::write(folder.join("screenshot.png"), &png).unwrap();
    let (_, details) = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": home }),
    );
    let url = details["screenshot"].as_str().unwrap().to_string();
    let (status, content_type, body) = get_bytes(&server, &url);
    assert_eq!((status, content_type.as_str()), (200, "image/png"));
    assert_eq!(body, png);
    let (_, graph) = server.call("get_app_graph", json!({ "app_id": "com.example.view" }));
    let drawn: Vec<&Value> = graph["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["screenshot"].is_string())
        .collect();
    assert_eq!(drawn.len(), 1, "{graph}");
    assert_eq!(drawn[0]["page_id"], json!(home));

    // No screenshot, an unknown page, a page of another app: the seed's 404s.
    let (status, _, body) = get_bytes(
        &server,
        &format!("/api/v1/apps/com.example.view/pages/{settings}/screenshot"),
    );
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_error(&(status, body), 404, "NOT_FOUND");
    let (status, _, _) = get_bytes(
        &server,
        "/api/v1/apps/com.example.view/pages/nosuchpage/screenshot",
    );
    assert_eq!(status, 404);
    let resp = server.call(
        "get_page_details",
        json!({ "app_id": "com.example.view", "page_id": elsewhere }),
    );
    assert_error(&resp, 404, "PAGE_NOT_FOUND");
    let resp = server.call("get_page_details", json!({ "app_id": "com.example.view" }));
    assert_error(&resp, 400, "INVALID_PARAMETER");
    server.stop();
}
