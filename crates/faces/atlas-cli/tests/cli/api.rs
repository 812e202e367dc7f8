//! The graph's HTTP API on the real binary, where the binary itself is what is tested: seed
//! errors that change nothing (checked by `atlas fsck`), a second server on one folder, and
//! durability under SIGKILL. The API's other behaviour is `atlas-server`'s tests.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

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
