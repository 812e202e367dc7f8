//! A day of a fleet: many agents reporting sessions for hours, the server killed with SIGKILL
//! while it checkpoints, a checkpoint that cannot be written. None of it may stop the server or
//! lose an acknowledged report.

use std::path::Path;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

const APP: &str = "com.fleet.记账";
const PAGES: usize = 24;

/// The pages of the fleet's app, added once: a ring where each page leads to the next three.
fn add_pages(server: &Server) -> Vec<String> {
    (0..PAGES)
        .map(|i| {
            let (status, body) = server.call(
                "add_page",
                json!({"app_id": APP, "page_name": format!("页面 {i}"), "page_type": if i == 0 { "home" } else { "list" }}),
            );
            assert_eq!(status, 200, "{body}");
            body["page_id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// What the fleet got answered.
#[derive(Default)]
struct Tally {
    acknowledged: AtomicU64,
    /// Reports sent whose answer never came (the server was killed meanwhile): each may or may
    /// not have been made durable.
    unanswered: AtomicU64,
}

/// `sessions` sessions of `steps` reports each, by `clients` agents at once, against the server
/// whose address `url` holds (a killed server's clients go on with the next session once it is
/// back). Returns once every session is reported.
fn run_fleet(
    url: &RwLock<String>,
    pages: &[String],
    sessions: usize,
    steps: usize,
    clients: usize,
    tally: &Tally,
) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..clients {
            scope.spawn(|| {
                let agent = agent();
                loop {
                    let session = next.fetch_add(1, Ordering::Relaxed);
                    if session >= sessions {
                        return;
                    }
                    let intent = format!("记一笔账 {}", session % 40);
                    let mut at = session % PAGES;
                    for step in 0..steps {
                        let hop = 1 + (session + step) % 3;
                        let to = (at + hop) % PAGES;
                        let body = json!({
                            "from_page": pages[at], "to_page": pages[to],
                            "action": {"type": "click", "widget_text": format!("前往 {hop}")},
                            "success": !(session + step).is_multiple_of(11), "latency_ms": 40,
                            "app_id": APP, "session_id": format!("session-{session}"), "intent": intent,
                        });
                        let address = url.read().unwrap().clone();
                        let answer = agent
                            .post(&format!("{address}/api/v1/report_transition"))
                            .header("Content-Type", "application/json")
                            .send(body.to_string());
                        match answer {
                            Ok(r) if r.status() == 200 => {
                                tally.acknowledged.fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(r) => panic!("a report answered {}", r.status()),
                            Err(_) => {
                                // Killed: this session is over; wait for the server's return.
                                tally.unanswered.fetch_add(1, Ordering::Relaxed);
                                while *url.read().unwrap() == address {
                                    std::thread::sleep(Duration::from_millis(20));
                                }
                                break;
                            }
                        }
                        at = to;
                    }
                }
            });
        }
    });
}

/// The reports and remembered sessions the server holds of the fleet's app.
fn held(server: &Server) -> (u64, u64) {
    let (status, stats) = server.call("get_graph_stats", json!({"app_id": APP}));
    assert_eq!(status, 200, "{stats}");
    let app = &stats["by_app"][0];
    (
        app["reports"].as_u64().unwrap(),
        app["traces"].as_u64().unwrap(),
    )
}

fn health(server: &Server) -> Value {
    let (status, _, body) = server.get_bytes("/healthz");
    assert_eq!(status, 200);
    serde_json::from_slice(&body).unwrap()
}

/// Every graph file of the data folder's apps is within seed 001's 10 MB.
fn graph_files_within_limit(data: &Path) -> usize {
    let mut files = 0;
    for app in std::fs::read_dir(data.join("apps")).unwrap() {
        let meta = app.unwrap().path().join(".atlas");
        for entry in std::fs::read_dir(&meta).into_iter().flatten() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().to_string();
            if name.starts_with("graph") && name.ends_with(".json") {
                let size = entry.metadata().unwrap().len();
                assert!(size <= 10 << 20, "{name} is {size} bytes");
                files += 1;
            }
        }
    }
    files
}

/// 600 sessions of 120 steps (72,000 reports, about a few hours of a small fleet), the server
/// killed with SIGKILL every few seconds while it checkpoints each second: it always starts
/// again, loses no acknowledged report and counts none twice, and its files stay within the
/// folder's limits (these sessions once made `graph.json` outgrow them, and no start-up could
/// open the folder after).
#[test]
fn a_fleet_of_sessions_with_kills_during_checkpoints_never_stops_the_server() {
    fleet(600, 120, 8, Duration::from_secs(6));
}

/// Ten times the fleet above (720,000 reports; minutes on a debug build): `cargo test --
/// --ignored` runs it, and `atlas bench fleet` measures the same on a release build.
#[test]
#[ignore]
fn ten_times_the_fleet() {
    fleet(6000, 120, 8, Duration::from_secs(20));
}

fn fleet(sessions: usize, steps: usize, clients: usize, kill_every: Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let options = ["--checkpoint-secs", "1"];
    let server = Server::start(&data, &options);
    let pages = add_pages(&server);
    let url = RwLock::new(server.url.clone());
    let tally = Tally::default();
    let done = AtomicBool::new(false);
    let started = Instant::now();
    let mut kills = 0;
    let server = std::thread::scope(|scope| {
        scope.spawn(|| {
            run_fleet(&url, &pages, sessions, steps, clients, &tally);
            done.store(true, Ordering::Release);
        });
        let mut server = server;
        loop {
            let deadline = Instant::now() + kill_every;
            while Instant::now() < deadline && !done.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if done.load(Ordering::Acquire) {
                return server;
            }
            server.kill9();
            kills += 1;
            server = Server::start(&data, &options);
            *url.write().unwrap() = server.url.clone();
        }
    });
    let (acknowledged, unanswered) = (
        tally.acknowledged.load(Ordering::Relaxed),
        tally.unanswered.load(Ordering::Relaxed),
    );
    eprintln!(
        "{acknowledged} reports acknowledged, {unanswered} unanswered, {kills} kills in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        kills >= 2,
        "the fleet ended before the server was killed twice"
    );
    assert_eq!(health(&server)["status"], "ok");
    server.stop();
    let server = Server::start(&data, &[]);
    let (reports, traces) = held(&server);
    assert!(
        reports >= acknowledged && reports <= acknowledged + unanswered,
        "{reports} reports held, {acknowledged} acknowledged and {unanswered} unanswered"
    );
    // A session whose first report went unanswered may have left no trace.
    let expected = sessions.min(atlas_graph::MAX_TRACES_PER_APP) as u64;
    assert!(
        traces <= expected && traces + unanswered >= expected,
        "{traces} sessions remembered of {sessions}"
    );
    assert_eq!(health(&server)["status"], "ok");
    server.stop();
    assert!(
        graph_files_within_limit(&data) >= 2,
        "the sessions fit one file"
    );
    let (clean, out) = fsck(&data);
    assert!(clean, "{out}");
}

/// A checkpoint that cannot be written (here: a folder where the app's `index.json` goes) stops
/// neither start-up nor serving: reports are acknowledged from the journal, `/healthz` says the
/// server is degraded and why, SIGTERM says it did not stop cleanly, and once the files can be
/// written the next checkpoint folds everything in.
#[test]
fn a_checkpoint_that_fails_stops_nothing_and_is_told() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let options = ["--checkpoint-secs", "1"];
    let server = Server::start(&data, &options);
    let pages = add_pages(&server);
    let report = |server: &Server, n: usize| {
        for i in 0..n {
            let (status, body) = server.call(
                "report_transition",
                json!({"from_page": pages[i % PAGES], "to_page": pages[(i + 1) % PAGES],
                       "action": {"type": "click", "widget_text": "下一页"}, "success": true,
                       "app_id": APP, "session_id": format!("s{}", i / 10), "intent": "翻页"}),
            );
            assert_eq!(status, 200, "{body}");
        }
    };
    report(&server, 50);
    let wait_for = |server: &Server, status: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let health = health(server);
            if health["status"] == status {
                return health;
            }
            assert!(Instant::now() < deadline, "healthz stayed {health}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    // The first checkpoint makes the app's folder.
    let deadline = Instant::now() + Duration::from_secs(20);
    let index = loop {
        let folded = std::fs::read_dir(data.join("apps"))
            .unwrap()
            .map(|e| e.unwrap().path().join("index.json"))
            .find(|index| index.is_file());
        if let Some(index) = folded {
            break index;
        }
        assert!(
            Instant::now() < deadline,
            "no checkpoint made the app's folder"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::fs::remove_file(&index).unwrap();
    std::fs::create_dir(&index).unwrap();
    report(&server, 50);
    let degraded = wait_for(&server, "degraded");
    assert!(
        degraded["checkpoint"]["failures"].as_u64() >= Some(1)
            && degraded["checkpoint"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("index.json")),
        "{degraded}"
    );
    // SIGTERM: the final checkpoint fails too, and the server says so.
    let mut server = server;
    send_signal(&server.child, libc::SIGTERM);
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a failed final checkpoint exits 1");
    drop(server);

    // Start-up replays the journal, cannot fold it, and serves anyway.
    let server = Server::start(&data, &options);
    assert_eq!(held(&server).0, 100);
    report(&server, 20);
    wait_for(&server, "degraded");
    std::fs::remove_dir(&index).unwrap();
    // The next attempt (backing off, a few seconds at most here) folds everything.
    let deadline = Instant::now() + Duration::from_secs(30);
    while health(&server)["status"] != "ok" {
        assert!(Instant::now() < deadline, "checkpoints did not recover");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(index.is_file());
    server.stop();
    let server = Server::start(&data, &[]);
    assert_eq!(held(&server).0, 120);
    server.stop();
    let (clean, out) = fsck(&data);
    assert!(clean, "{out}");
}

/// One flipped byte in the journal loses the one write whose frame it is in, not the
/// acknowledged writes after it in the segment; `atlas fsck` says how many were lost.
#[test]
fn a_damaged_journal_frame_loses_only_itself_and_fsck_tells() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &["--checkpoint-secs", "3600"]);
    let pages = add_pages(&server);
    for i in 0..200 {
        let (status, body) = server.call(
            "report_transition",
            json!({"from_page": pages[0], "to_page": pages[1],
                   "action": {"type": "click", "widget_text": format!("按钮 {i:03}")}, "success": true}),
        );
        assert_eq!(status, 200, "{body}");
    }
    server.kill9();
    let journal = data.join(".atlas").join("journal");
    let (segment, mut bytes) = std::fs::read_dir(&journal)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .find(|(_, bytes)| bytes.windows(10).any(|w| w == "按钮 100".as_bytes()))
        .expect("a segment with the reports");
    let at = bytes
        .windows(10)
        .position(|w| w == "按钮 100".as_bytes())
        .unwrap();
    bytes[at + 7] ^= 0x01; // "100" becomes "101"'s neighbour: the checksum no longer matches
    std::fs::write(&segment, &bytes).unwrap();

    let (clean, out) = fsck(&data);
    assert!(!clean, "{out}");
    assert!(out.contains("1 acknowledged write lost"), "{out}");
    let server = Server::start(&data, &[]);
    let (_, actions) = server.call("get_available_actions", json!({"page_id": pages[0]}));
    let texts: Vec<&str> = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["widget_text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 199, "{texts:?}");
    assert!(!texts.contains(&"按钮 100") && texts.contains(&"按钮 199"));
    server.stop();
}
