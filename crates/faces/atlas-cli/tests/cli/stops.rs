//! Stopped at any instant. SIGTERM, Ctrl-C (SIGINT) and SIGKILL at many points of a first start
//! with `--demo` (on a folder and on PostgreSQL), of a start on a large folder, under a flood of
//! connections, during the final checkpoint, and during an import, a migration and an
//! exploration. Each time a stopped process exits (it never dies of the signal) saying what it
//! leaves, and the next start answers the README's queries (or resumes the exploration), with
//! fsck clean, nothing acknowledged missing and nothing left running.
//!
//! An instant is counted from the moment the process catches both signals (its
//! `/proc/PID/status` says so), which `atlas` does before anything else: a signal sent earlier
//! meets a process still being loaded, which no program can take a signal in.

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

/// Where a stop lands: this long after the process catches the signals, or once it serves.
#[derive(Debug, Clone, Copy)]
enum At {
    Ms(u64),
    Serving,
}

/// Waits until `pid` catches SIGTERM and SIGINT.
fn until_catching(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let wanted = (1u64 << (libc::SIGTERM - 1)) | (1u64 << (libc::SIGINT - 1));
    loop {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0);
        if caught & wanted == wanted {
            return;
        }
        assert!(Instant::now() < deadline, "atlas never caught the signals");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `atlas serve ARGS…` on a free port, its log to `log`: the process and its address.
fn spawn_serve(args: &[&str], log: &Path) -> (Child, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("serve")
        .args(args)
        .args([
            "--addr",
            &addr,
            "--embedder",
            "hash",
            "--kb-embedder",
            "same",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .dies_with_test()
        .spawn()
        .unwrap();
    (child, format!("http://{addr}"))
}

fn until_healthy(url: &str) {
    until_answers(
        &format!("{url}/healthz"),
        "atlas serve",
        Duration::from_secs(120),
    );
}

/// Starts `atlas serve ARGS…`, sends `signal` at `at`, and waits for the end: its status and log.
fn stopped_at(args: &[&str], signal: i32, at: At) -> (ExitStatus, String) {
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let (mut child, url) = spawn_serve(args, &log);
    until_catching(child.id());
    match at {
        At::Ms(ms) => std::thread::sleep(Duration::from_millis(ms)),
        At::Serving => until_healthy(&url),
    }
    send_signal(&child, signal);
    let status = wait_within(&mut child, Duration::from_secs(120));
    (status, std::fs::read_to_string(&log).unwrap_or_default())
}

/// Waits for `child`'s end, killing it and failing past `within`.
fn wait_within(child: &mut Child, within: Duration) -> ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running {within:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a stop by `signal` must end with: an exit of its own (0 for a server stopped once), or
/// death for SIGKILL, which nothing can take.
fn assert_exited(signal: i32, status: ExitStatus, log: &str) {
    use std::os::unix::process::ExitStatusExt;
    if signal == libc::SIGKILL {
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{log}");
        return;
    }
    assert_eq!(status.signal(), None, "died of the signal: {log}");
    // A signal in the moment between taking signals and reading its command line ends the
    // process before it began anything.
    if status.code() == Some(128 + signal)
        && log.contains("stopped at once: the command had not begun")
    {
        return;
    }
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("stopped cleanly"), "{log}");
}

/// The README's examples: the demo's way to 点外卖, its home page, and the knowledge base.
fn answers_the_readme(url: &str) {
    let server = Url(url.to_string());
    let (status, path) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖"}),
    );
    assert_eq!((status, &path["success"]), (200, &json!(true)), "{path}");
    let (status, page) = server.call(
        "match_current_page",
        json!({"app_id": "com.meituan.app", "page_title": "首页"}),
    );
    assert_eq!((status, &page["matched"]), (200, &json!(true)), "{page}");
    let (status, found) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/retrieve"),
        Some("dataset-demo-key"),
        r#"{"query": "退货运费谁出"}"#,
    );
    assert_eq!(status, 200, "{found}");
    assert!(
        found["records"].as_array().is_some_and(|r| !r.is_empty()),
        "{found}"
    );
}

struct Url(String);

impl Served for Url {
    fn url(&self) -> &str {
        &self.0
    }
}

/// The next start after a stop: it answers the README's examples, stops cleanly on SIGTERM, and
/// leaves the store clean for fsck.
fn next_start_answers(store: &[&str]) {
    let mut args = vec!["--demo"];
    args.extend_from_slice(store);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let (child, url) = spawn_serve(&args, &log);
    let server = Server { child, url };
    until_healthy(&server.url);
    answers_the_readme(&server.url);
    server.stop();
    let (clean, report) = fsck_store(store);
    assert!(clean, "{report}");
}

/// `atlas fsck` on a folder (`--data DIR`) or a database (`--store URL`).
fn fsck_store(store: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("fsck")
        .args(store)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The instants of a first start a stop is tried at, with each signal.
const FIRST_START: [(i32, At); 11] = [
    (libc::SIGTERM, At::Ms(0)),
    (libc::SIGINT, At::Ms(0)),
    (libc::SIGTERM, At::Ms(40)),
    (libc::SIGINT, At::Ms(150)),
    (libc::SIGTERM, At::Ms(400)),
    (libc::SIGINT, At::Ms(900)),
    (libc::SIGTERM, At::Ms(1800)),
    (libc::SIGTERM, At::Serving),
    (libc::SIGKILL, At::Ms(100)),
    (libc::SIGKILL, At::Ms(500)),
    (libc::SIGKILL, At::Ms(1200)),
];

#[test]
fn a_first_start_with_the_demo_stopped_at_any_instant_leaves_a_folder_the_next_start_answers_from()
{
    for (signal, at) in FIRST_START {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let store = ["--data", data.to_str().unwrap()];
        let (status, log) = stopped_at(&["--demo", store[0], store[1]], signal, at);
        assert_exited(signal, status, &log);
        next_start_answers(&store);
    }
}

#[test]
fn a_first_start_with_the_demo_on_postgres_stopped_at_any_instant_leaves_a_database_the_next_start_answers_from()
 {
    for (signal, at) in [
        (libc::SIGTERM, At::Ms(0)),
        (libc::SIGINT, At::Ms(300)),
        (libc::SIGTERM, At::Ms(1000)),
        (libc::SIGTERM, At::Serving),
        (libc::SIGKILL, At::Ms(400)),
    ] {
        let Some((_server, url)) = crate::postgres::database() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let store = ["--store", url.as_str(), "--data", data.to_str().unwrap()];
        let mut args = vec!["--demo"];
        args.extend_from_slice(&store);
        let (status, log) = stopped_at(&args, signal, at);
        assert_exited(signal, status, &log);
        next_start_answers(&store);
    }
}

/// The moment a server first answers, it takes SIGTERM. Connections queued while it opened are
/// accepted first; a server that polled its stop only when no connection waited answered them
/// before it took the signal, and died of a SIGTERM sent on the first answer (9 of 40 starts on
/// two busy cores, before the stop came first in the accept loop and the signals were taken
/// from the first instant).
#[test]
fn a_server_takes_sigterm_the_moment_it_first_answers() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = ["--data", data.to_str().unwrap()];
    next_start_answers(&store);
    for _ in 0..10 {
        let logs = tempfile::tempdir().unwrap();
        let log = logs.path().join("serve.log");
        let (mut child, url) = spawn_serve(&store, &log);
        let addr = url.trim_start_matches("http://").to_string();
        until_catching(child.id());
        let mut queued: Vec<std::net::TcpStream> = Vec::new();
        while queued.len() < 8 {
            match std::net::TcpStream::connect(&addr) {
                Ok(mut s) => {
                    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                        .unwrap();
                    queued.push(s);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        let mut first = [0u8; 12];
        queued[0].read_exact(&mut first).unwrap();
        send_signal(&child, libc::SIGTERM);
        let status = wait_within(&mut child, Duration::from_secs(60));
        assert_exited(
            libc::SIGTERM,
            status,
            &std::fs::read_to_string(&log).unwrap(),
        );
    }
}

/// A demo knowledge base an older start left without its questions: fsck tells it, and the next
/// `--demo` start completes it.
#[test]
fn a_demo_knowledge_base_left_without_its_questions_is_told_and_completed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = ["--data", data.to_str().unwrap()];
    next_start_answers(&store);
    let documents = data.join("kb").join(DEMO_DATASET).join("documents");
    std::fs::remove_dir_all(&documents).unwrap();
    let (clean, report) = fsck_store(&store);
    assert!(!clean, "{report}");
    assert!(report.contains("demo knowledge base"), "{report}");
    next_start_answers(&store);
}

/// A folder of a large app (5,000 pages, 15,000 transitions): a stop while it opens ends cleanly once it is open; a
/// stop and a second signal during the final checkpoint end it at once, saying so, and what was
/// acknowledged before is there at the next start.
#[test]
fn a_large_folder_stopped_while_opening_and_twice_during_its_final_checkpoint_keeps_what_was_acknowledged()
 {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let imported = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["import", "synthetic", "--pages", "5000", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(imported.status.success());
    let store = ["--data", data.to_str().unwrap()];
    for (signal, at) in [(libc::SIGTERM, At::Ms(0)), (libc::SIGINT, At::Ms(200))] {
        let (status, log) = stopped_at(&store, signal, at);
        assert_exited(signal, status, &log);
    }

    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let (mut child, url) = spawn_serve(&store, &log);
    until_healthy(&url);
    let server = Url(url);
    let (status, added) = server.call(
        "add_page",
        json!({"app_id": "synthetic.app", "page_name": "停下之前"}),
    );
    assert_eq!(status, 200, "{added}");
    // Both at once: one starts the shutdown, the other ends it during its final checkpoint.
    send_signal(&child, libc::SIGTERM);
    send_signal(&child, libc::SIGINT);
    let status = wait_within(&mut child, Duration::from_secs(60));
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        matches!(status.code(), Some(130 | 143)),
        "{status:?}: {said}"
    );
    assert!(said.contains("again: stopped at once"), "{said}");
    assert!(
        said.contains("every acknowledged write is in the journal"),
        "{said}"
    );

    let (mut child, url) = spawn_serve(&store, &log);
    until_healthy(&url);
    let server = Url(url);
    let (status, page) = server.call(
        "match_current_page",
        json!({"app_id": "synthetic.app", "page_title": "停下之前"}),
    );
    assert_eq!((status, &page["matched"]), (200, &json!(true)), "{page}");
    send_signal(&child, libc::SIGTERM);
    assert_eq!(
        wait_within(&mut child, Duration::from_secs(60)).code(),
        Some(0)
    );
    let (clean, report) = fsck_store(&store);
    assert!(clean, "{report}");
}

/// Hundreds of idle connections and clients connecting as fast as they can: SIGTERM still stops
/// the server within its grace, and the next start answers.
#[test]
fn a_flood_of_connections_does_not_put_off_the_stop() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = ["--data", data.to_str().unwrap()];
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("serve.log");
    let (mut child, url) = spawn_serve(&["--demo", store[0], store[1]], &log);
    until_healthy(&url);
    let addr = url.trim_start_matches("http://").to_string();
    let idle: Vec<std::net::TcpStream> = (0..300)
        .filter_map(|_| std::net::TcpStream::connect(&addr).ok())
        .collect();
    let flooding = Arc::new(AtomicBool::new(true));
    let floods: Vec<_> = (0..6)
        .map(|_| {
            let (addr, flooding) = (addr.clone(), flooding.clone());
            std::thread::spawn(move || {
                while flooding.load(Ordering::Relaxed) {
                    if let Ok(mut s) = std::net::TcpStream::connect(&addr) {
                        let _ = std::io::Write::write_all(
                            &mut s,
                            b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
                        );
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    send_signal(&child, libc::SIGTERM);
    let status = wait_within(&mut child, Duration::from_secs(60));
    let took = sent.elapsed();
    flooding.store(false, Ordering::Relaxed);
    for flood in floods {
        flood.join().unwrap();
    }
    drop(idle);
    let said = std::fs::read_to_string(&log).unwrap();
    assert_exited(libc::SIGTERM, status, &said);
    eprintln!("stopped under a flood in {took:?}");
    next_start_answers(&store);
}

/// An import stopped at several instants leaves every app whole or absent, fsck clean, and the
/// same import run again ends with what one uninterrupted import makes.
#[test]
fn an_import_stopped_half_way_leaves_whole_apps_and_completes_when_run_again() {
    let droidtask =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
    if !droidtask.join("raw_utgs").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    let import = |data: &Path| {
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["import", "droidtask", "--data"])
            .arg(data)
            .arg(&droidtask)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .dies_with_test()
            .spawn()
            .unwrap()
    };
    let stats = |data: &Path| -> Value {
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["stats", "--data"])
            .arg(data)
            .output()
            .unwrap();
        assert!(out.status.success());
        let mut all: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut apps: Vec<Value> = all["by_app"]
            .as_array_mut()
            .map(std::mem::take)
            .unwrap_or_default()
            .into_iter()
            .map(|a| json!([a["app_id"], a["pages"], a["transitions"], a["intents"]]))
            .collect();
        apps.sort_by_key(|a| a.to_string());
        Value::Array(apps)
    };
    let whole = tempfile::tempdir().unwrap();
    assert!(import(whole.path()).wait().unwrap().success());
    let reference = stats(whole.path());
    let apps = reference.as_array().unwrap().clone();
    assert!(apps.len() >= 2, "{reference}");

    for (signal, ms) in [
        (libc::SIGTERM, 500),
        (libc::SIGINT, 1200),
        (libc::SIGKILL, 2000),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let child = import(dir.path());
        until_catching(child.id());
        std::thread::sleep(Duration::from_millis(ms));
        send_signal(&child, signal);
        let out = child.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if signal != libc::SIGKILL && !out.status.success() {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(out.status.signal(), None, "{said}");
            assert_eq!(out.status.code(), Some(128 + signal), "{said}");
            assert!(
                said.contains("stopped at once") && said.contains("whole"),
                "{said}"
            );
        }
        let (clean, report) = fsck_store(&["--data", dir.path().to_str().unwrap()]);
        assert!(clean, "{report}");
        for app in stats(dir.path()).as_array().unwrap() {
            assert!(
                apps.contains(app),
                "{app} is not an app imported whole: {reference}"
            );
        }
        assert!(import(dir.path()).wait().unwrap().success());
        assert_eq!(stats(dir.path()), reference);
    }
}

/// A migration killed half-way: its target is marked, nothing serves it, fsck tells it, and the
/// same migration run again completes it.
#[test]
fn a_migration_killed_half_way_is_refused_told_and_completed_when_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let (from, to) = (dir.path().join("from"), dir.path().join("to"));
    let imported = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["import", "synthetic", "--pages", "5000", "--data"])
        .arg(&from)
        .output()
        .unwrap();
    assert!(imported.status.success());
    let migrate = || {
        Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["migrate", "--from"])
            .arg(&from)
            .arg("--to")
            .arg(&to)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .dies_with_test()
            .spawn()
            .unwrap()
    };
    let mut child = migrate();
    let mark = to.join(".atlas/migrating.json");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !mark.exists() {
        assert!(
            Instant::now() < deadline,
            "the migration never marked its target"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before its mark was seen"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    send_signal(&child, libc::SIGKILL);
    let _ = child.wait();

    let to_store = ["--data", to.to_str().unwrap()];
    let refused = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(to_store)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("migration from") && said.contains("run `atlas migrate"),
        "{said}"
    );
    let (clean, report) = fsck_store(&to_store);
    assert!(!clean && report.contains("migration from"), "{report}");

    let out = migrate().wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("completing the migration"), "{said}");
    assert!(!mark.exists());
    let (clean, report) = fsck_store(&to_store);
    assert!(clean, "{report}");
    let pages = |data: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["stats", "--data"])
            .arg(data)
            .output()
            .unwrap();
        let stats: Value = serde_json::from_slice(&out.stdout).unwrap();
        (stats["pages"].clone(), stats["transitions"].clone())
    };
    assert_eq!(pages(&to), pages(&from));
}

/// Servers that keep nothing end at once and successfully.
#[test]
fn the_scripted_model_stops_successfully_on_sigterm() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../atlas-chat/demo/business.json");
    let (mut child, _url) = model_sim_playing(&script);
    send_signal(&child, libc::SIGTERM);
    let status = wait_within(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// Waits until no process of group `group` is left but zombies (the command and whatever it
/// started, its browser included, share the group), failing past a minute.
fn until_group_gone(group: u32) {
    let group = group.to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let alive: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
            .filter(|stat| {
                // pid (comm) state ppid pgrp …: the command name may hold spaces and brackets.
                let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
                let fields: Vec<&str> = rest.split_whitespace().collect();
                fields.len() > 2 && fields[0] != "Z" && fields[2] == group
            })
            .collect();
        if alive.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "left running: {alive:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An exploration stopped while its folder opens, and with SIGTERM and Ctrl-C while it explores:
/// each time it checkpoints, says how to resume, exits with the signal's status and leaves
/// nothing running (its browser included), fsck is clean, and the same command resumes it to
/// the end with no state twice.
#[test]
fn an_exploration_stopped_at_any_instant_leaves_no_browser_and_resumes() {
    let Some(chromium) = chromium() else { return };
    let (_site, base) = crate::explore::demo_site();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = base.rsplit(':').next().unwrap().to_string();
    let app_dir = data.join("apps").join(format!("127_0_0_1_{port}"));
    let explore = || {
        let mut command = crate::explore::explore_command(&base, &data, &chromium);
        command.args(["--max-seconds", "400", "--embedder", "hash"]);
        command
    };
    // (signal, states written before it is sent: 0 is at once, while the folder opens)
    for (signal, states) in [(libc::SIGTERM, 0), (libc::SIGINT, 2), (libc::SIGTERM, 4)] {
        let log = dir.path().join("explore.log");
        let mut child = explore()
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .dies_with_test()
            .spawn()
            .unwrap();
        until_catching(child.id());
        let deadline = Instant::now() + Duration::from_secs(240);
        while crate::explore::states(&app_dir).len() < states {
            assert!(Instant::now() < deadline, "no states written");
            assert!(child.try_wait().unwrap().is_none(), "ended early");
            std::thread::sleep(Duration::from_millis(20));
        }
        send_signal(&child, signal);
        let status = wait_within(&mut child, Duration::from_secs(120));
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), None, "died of the signal: {said}");
        assert_eq!(status.code(), Some(128 + signal), "{said}");
        let name = if signal == libc::SIGTERM {
            "SIGTERM"
        } else {
            "Ctrl-C (SIGINT)"
        };
        assert!(
            said.contains(&format!(
                "stopped by {name}; run the same command again to resume"
            )) || (states == 0 && said.contains("stopped at once: the command had not begun")),
            "{said}"
        );
        until_group_gone(child.id());
        // A stop before the folder was made leaves none.
        if data.exists() {
            let (clean, report) = fsck(&data);
            assert!(clean, "fsck after {name}: {report}");
        }
    }
    let written = crate::explore::states(&app_dir).len();
    let report_path = dir.path().join("report.json");
    let report = report_of(explore().arg("--json").arg(&report_path), &report_path);
    assert_eq!(report["stopped_by"], "nothing left to explore", "{report}");
    let mut prints: Vec<String> = crate::explore::states(&app_dir)
        .iter()
        .map(|s| s["fingerprint"].as_str().unwrap().to_string())
        .collect();
    assert!(prints.len() >= written);
    let all = prints.len();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), all, "a state written twice");
}
