//! `atlas serve` on a full disk, as a fleet's server meets one: its data folder on a real small
//! filesystem ([`atlas_wiring::testing::small_disk`]) filled by another file. Refused writes
//! answer 503 with `Retry-After` and change nothing, health says so and goes on serving reads,
//! writes resume once space returns without a restart, and the reports counted after restarts
//! are exactly the acknowledged ones.

use std::time::{Duration, Instant};

use atlas_wiring::testing::small_disk::{SmallDisk, in_child, is_child};
use serde_json::{Value, json};

use crate::common::*;

const APP: &str = "com.disk.满了";

fn health(server: &Server) -> Value {
    let (status, _, body) = server.get_bytes("/healthz");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

/// The reports the server holds of the app.
fn reports(server: &Server) -> u64 {
    let (status, stats) = server.call("get_graph_stats", json!({"app_id": APP}));
    assert_eq!(status, 200, "{stats}");
    stats["by_app"][0]["reports"].as_u64().unwrap()
}

/// One report of the app's one edge: its status, `Retry-After` and body.
fn report(server: &Server, pages: &(String, String)) -> (u16, Option<String>, Value) {
    let body = json!({
        "from_page": pages.0, "to_page": pages.1, "success": true, "latency_ms": 30,
        "action": {"type": "click", "widget_text": "记一笔"}, "app_id": APP,
    });
    let mut answer = agent()
        .post(&format!("{}/api/v1/report_transition", server.url))
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .unwrap();
    let retry_after = answer
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let text = answer.body_mut().read_to_string().unwrap();
    (
        answer.status().as_u16(),
        retry_after,
        serde_json::from_str(&text).unwrap(),
    )
}

#[test]
fn a_full_disk_refuses_writes_serves_reads_and_resumes_when_space_returns() {
    if !is_child() {
        return in_child(
            "full_disk::a_full_disk_refuses_writes_serves_reads_and_resumes_when_space_returns",
            4,
        );
    }
    let disk = SmallDisk::new(24);
    let data = disk.mount.join("data");
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let server = Server::start_logging(&data, &[], std::fs::File::create(&log).unwrap());
    let page = |name: &str| {
        let (status, body) = server.call("add_page", json!({"app_id": APP, "page_name": name}));
        assert_eq!(status, 200, "{body}");
        body["page_id"].as_str().unwrap().to_string()
    };
    let pages = (page("首页"), page("记账"));
    assert_eq!(report(&server, &pages).0, 200);
    assert_eq!(health(&server)["status"], "ok");

    // Filled to 64 KiB over the reserve (4 MiB): the next journal segment (256 KiB), made when
    // the reports fill the one under way or a checkpoint begins another, crosses it, and
    // reports are refused from then on. Leaving more would have the reports outpace the
    // checkpoints that trim the journal, which a busy machine's slower reports never do.
    let filler = disk.fill("filler", (4 << 20) + (64 << 10));
    // The server measures its disk at most every 100 ms; later on a busy machine.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let warned = health(&server);
        if warned["warning"]
            .as_str()
            .is_some_and(|w| w.contains("filling up"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "{warned}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut acknowledged = 1u64;
    let refusal = loop {
        let (status, retry_after, body) = report(&server, &pages);
        match status {
            200 => acknowledged += 1,
            503 => break (retry_after, body),
            other => panic!("a report answered {other}: {body}"),
        }
        assert!(acknowledged < 1_000_000, "the disk never filled");
    };
    let (retry_after, body) = refusal;
    assert_eq!(retry_after.as_deref(), Some("5"), "{body}");
    assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("disk") && message.contains(data.to_str().unwrap()),
        "the refusal names the disk and the folder: {message}"
    );
    for _ in 0..20 {
        assert_eq!(report(&server, &pages).0, 503);
    }
    let degraded = health(&server);
    assert_eq!(degraded["status"], "degraded", "{degraded}");
    assert!(
        !degraded.to_string().contains(data.to_str().unwrap()),
        "an open probe learns no path: {degraded}"
    );
    assert!(
        degraded["disk"]["free_bytes"].as_u64() < degraded["disk"]["reserve_bytes"].as_u64(),
        "{degraded}"
    );
    // Reads go on, and see exactly what was acknowledged.
    assert_eq!(reports(&server), acknowledged);
    // A knowledge base refuses too, in Dify's format, and leaves no file half written.
    let dataset = |server: &Server| {
        dify_request(
            server,
            "POST",
            "/v1/datasets",
            None,
            "application/json",
            r#"{"name": "售后 FAQ"}"#.as_bytes(),
        )
    };
    let (status, refused) = dataset(&server);
    assert_eq!(
        (status, refused["code"].as_str()),
        (503, Some("service_unavailable")),
        "{refused}"
    );
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("space")),
        "{refused}"
    );
    // So does the business graph: the document it holds stays as it was.
    let graph = json!({"businesses": [{"process_id": "p_sign", "name": "签到领积分"}]});
    let put = |server: &Server| {
        dify_request(
            server,
            "PUT",
            "/api/v1/business-graph",
            None,
            "application/json",
            graph.to_string().as_bytes(),
        )
    };
    let businesses = |server: &Server| {
        let (status, held) = dify_request(server, "GET", "/api/v1/business-graph", None, "", b"");
        assert_eq!(status, 200, "{held}");
        held["businesses"].as_array().map_or(0, Vec::len)
    };
    let before = businesses(&server);
    let (status, refused) = put(&server);
    assert_eq!(
        (status, refused["error"]["code"].as_str()),
        (503, Some("SERVICE_UNAVAILABLE")),
        "{refused}"
    );
    assert_eq!(businesses(&server), before);
    let half_written = walk(&data)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect::<Vec<_>>();
    assert!(half_written.is_empty(), "{half_written:?}");

    // Space back: writes resume by themselves.
    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while report(&server, &pages).0 != 200 {
        assert!(Instant::now() < deadline, "writes did not resume");
        std::thread::sleep(Duration::from_millis(200));
    }
    acknowledged += 1;
    assert_eq!(health(&server)["status"], "ok");
    let (status, created) = dataset(&server);
    assert_eq!(status, 200, "{created}");
    let (status, replaced) = put(&server);
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(businesses(&server), 1);

    // Full to the last byte, then SIGTERM: the final checkpoint cannot be written, and the
    // server says that what it acknowledged is in the journal.
    let filler = disk.fill("filler", 0);
    // The server measures its disk at most every 100 ms: reports are taken until it sees it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match report(&server, &pages).0 {
            200 => acknowledged += 1,
            503 => break,
            other => panic!("a report answered {other}"),
        }
        assert!(Instant::now() < deadline, "the full disk was never seen");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut server = server;
    send_signal(&server.child, libc::SIGTERM);
    let status = server.child.wait().unwrap();
    let said = std::fs::read_to_string(&log).unwrap();
    assert_ne!(status.code(), Some(0), "{said}");
    assert!(
        said.contains("acknowledged write is kept in the journal"),
        "{said}"
    );
    // Logged once when writes stopped, not once a refused request.
    assert!(said.matches("writes stopped").count() <= 2, "{said}");
    drop(server);

    std::fs::remove_file(&filler).unwrap();
    let server = Server::start(&data, &[]);
    assert_eq!(reports(&server), acknowledged);
    assert_eq!(report(&server, &pages).0, 200);
    server.stop();
    let (clean, report) = fsck(&data);
    assert!(clean, "{report}");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match path.is_dir() {
            true => files.extend(walk(&path)),
            false => files.push(path),
        }
    }
    files
}

#[test]
fn an_exploration_on_a_full_disk_stops_saying_so_and_resumes_once_space_returns() {
    use crate::explore::{demo_site, explore_command, states};
    let Some(chromium) = chromium() else { return };
    if !is_child() {
        return in_child(
            "full_disk::an_exploration_on_a_full_disk_stops_saying_so_and_resumes_once_space_returns",
            4,
        );
    }
    let (_site, base) = demo_site();
    let disk = SmallDisk::new(48);
    let data = disk.mount.join("data");
    let port = base.rsplit(':').next().unwrap().to_string();
    let app_dir = data.join("apps").join(format!("127_0_0_1_{port}"));
    let explore = |states: &str| {
        explore_command(&base, &data, &chromium)
            .args(["--max-seconds", "300", "--max-states", states])
            .output()
            .unwrap()
    };
    let first = explore("3");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before = states(&app_dir).len();

    let filler = disk.fill("filler", 1 << 20);
    let stopped = explore("12");
    let said = String::from_utf8_lossy(&stopped.stderr);
    assert!(!stopped.status.success(), "{said}");
    assert!(said.contains("disk") && said.contains("full"), "{said}");
    assert!(
        walk(&data)
            .iter()
            .all(|p| p.extension().is_none_or(|e| e != "tmp")),
        "a file half written"
    );
    assert_eq!(
        states(&app_dir).len(),
        before,
        "nothing written on a full disk"
    );

    std::fs::remove_file(filler).unwrap();
    let resumed = explore("12");
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let after = states(&app_dir);
    assert!(
        after.len() > before,
        "{} states after {before}",
        after.len()
    );
    let mut pages: Vec<&str> = after.iter().filter_map(|s| s["page_id"].as_str()).collect();
    let all = pages.len();
    pages.sort_unstable();
    pages.dedup();
    assert_eq!(pages.len(), all, "a state recorded twice");
    let (clean, report) = fsck(&data);
    assert!(clean, "{report}");
}
