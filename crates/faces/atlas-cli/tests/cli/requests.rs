//! What the binary takes: commands that refuse before they write, a large upload stopped by
//! SIGTERM, help that prints no secret, a synthetic app's size checked first. What requests the
//! server takes is `atlas-server`'s tests.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;

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
    send_signal(&server.child, libc::SIGTERM);
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
fn help_never_prints_a_key_or_token_given_in_the_environment() {
    let secret = "sk-not-for-your-terminal";
    for command in [
        &["agent", "run", "--help"][..],
        &["serve", "--help"],
        &["eval", "agent", "--help"],
        &["eval", "droidtask", "--help"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(command)
            .env("ATLAS_PLANNER_KEY", secret)
            .env("PHONE_AGENT_API_KEY", secret)
            .env("ATLAS_TOKEN", secret)
            .env("ATLAS_EMBED_KEY", secret)
            .env("ATLAS_LLM_KEY", secret)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{command:?}");
        assert!(said.contains("--"), "{command:?}: {said}");
        assert!(
            !said.contains(secret),
            "{command:?} printed a secret: {said}"
        );
    }
}

#[test]
fn a_synthetic_app_s_size_is_checked_before_anything_is_made_or_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("synthetic");
    for pages in ["18446744073709551615", "50000000", "0", "many"] {
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["import", "synthetic", "--pages", pages, "--data"])
            .arg(&data)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{pages}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("--pages") && !said.contains("panicked"),
            "{said}"
        );
        assert!(!Path::new(&data).exists(), "{pages} wrote the data folder");
    }
}
