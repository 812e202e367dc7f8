//! Atlas on PostgreSQL end to end, with the real binary and the server `ATLAS_TEST_PG` names
//! (`scripts/test.sh` starts a throwaway cluster): `atlas migrate` both ways, and two replicas on
//! one database, one of them killed with SIGKILL while sixteen clients report.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use atlas_wiring::testing::TestStore;
use serde_json::{Value, json};

use crate::common::{Served, Server, agent, fsck};

fn atlas(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// A fresh database on the test server, and the server shared while the test holds it; `None`
/// (the test is skipped) when there is none.
pub(crate) fn database() -> Option<(std::sync::RwLockReadGuard<'static, ()>, String)> {
    let server = crate::common::sharing_the_test_server();
    match TestStore::postgres()? {
        TestStore::Postgres(url) => Some((server, url)),
        TestStore::Folder(_) => None,
    }
}

/// An app's graph as `atlas export` writes it, with every list in a fixed order (stores may
/// list entities in another order; what they hold must be the same).
fn exported(store: &[&str], app: &str) -> Value {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, sorted(v))).collect()),
            Value::Array(a) => {
                let mut items: Vec<Value> = a.into_iter().map(sorted).collect();
                items.sort_by_key(|v| v.to_string());
                Value::Array(items)
            }
            other => other,
        }
    }
    let mut args = vec!["export"];
    args.extend_from_slice(store);
    args.push(app);
    let (ok, out) = atlas(&args);
    assert!(ok, "{out}");
    let start = out.find('{').unwrap();
    let end = out.rfind('}').unwrap();
    sorted(serde_json::from_str(&out[start..=end]).unwrap())
}

fn app_ids(store: &[&str]) -> Vec<String> {
    let mut args = vec!["stats"];
    args.extend_from_slice(store);
    let (ok, out) = atlas(&args);
    assert!(ok, "{out}");
    let start = out.find('{').unwrap();
    let stats: Value = serde_json::from_str(&out[start..=out.rfind('}').unwrap()]).unwrap();
    stats["by_app"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["app_id"].as_str().unwrap().to_string())
        .collect()
}

fn droidtask_dev() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/data/droidtask-dev");
    dir.join("raw_utgs").is_dir().then_some(dir)
}

#[test]
fn migrate_copies_the_demo_and_droidtask_to_postgres_and_back_losslessly() {
    let Some((_server, url)) = database() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let first = scratch.path().join("first");
    let back = scratch.path().join("back");
    let server = Server::start(&first, &["--demo", "--kb-embedder", "same"]);
    // An app of two releases: its versions, what is gone and its pages' faces travel too.
    crate::versions::two_releases(&server);
    server.stop();
    if let Some(dir) = droidtask_dev() {
        let (ok, out) = atlas(&[
            "import",
            "droidtask",
            "--data",
            first.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        assert!(ok, "{out}");
    }
    let folder = ["--data", first.to_str().unwrap()];
    let (ok, out) = atlas(&["migrate", "--from", first.to_str().unwrap(), "--to", &url]);
    assert!(ok, "{out}");
    // Into a store that holds a graph already: refused, nothing written.
    let (ok, out) = atlas(&["migrate", "--from", first.to_str().unwrap(), "--to", &url]);
    assert!(!ok && out.contains("empty store"), "{out}");
    let (ok, out) = atlas(&["migrate", "--from", &url, "--to", back.to_str().unwrap()]);
    assert!(ok, "{out}");

    let apps = app_ids(&folder);
    assert!(apps.contains(&"com.meituan.app".to_string()), "{apps:?}");
    let versioned = exported(&folder, crate::versions::APP);
    assert_eq!(
        versioned["app"]["versions"].as_array().map(Vec::len),
        Some(2)
    );
    let pg = ["--store", url.as_str()];
    assert_eq!(app_ids(&pg), apps);
    let returned = ["--data", back.to_str().unwrap()];
    for app in &apps {
        let original = exported(&folder, app);
        assert_eq!(exported(&pg, app), original, "{app} in PostgreSQL");
        assert_eq!(exported(&returned, app), original, "{app} back in a folder");
    }
    // The knowledge bases and the business graph came along, both ways.
    for command in [["kb", "list"], ["biz", "export"]] {
        let json = |store: &[&str]| {
            let (ok, out) = atlas(&[command[0], command[1], store[0], store[1]]);
            assert!(ok, "{out}");
            let start = out.find(['[', '{']).unwrap();
            serde_json::from_str::<Value>(&out[start..]).unwrap()
        };
        let original = json(&folder);
        assert!(original.to_string().len() > 100, "{original}");
        assert_eq!(json(&pg), original, "{command:?} in PostgreSQL");
        assert_eq!(json(&returned), original, "{command:?} back in a folder");
    }
    let (clean, said) = fsck(&back);
    assert!(clean, "{said}");
    let (clean, said) = atlas(&["fsck", "--store", &url]);
    assert!(clean, "{said}");
}

/// `reports` of `app` as a replica's memory has them.
fn reports(server: &Server, app: &str) -> u64 {
    let (status, body) = server.call("get_graph_stats", json!({ "app_id": app }));
    assert_eq!(status, 200, "{body}");
    body["by_app"][0]["reports"].as_u64().unwrap_or(0)
}

/// How long until `done`; an error naming `what` after 20 s (the caller says what it saw).
fn wait_for(what: &str, mut done: impl FnMut() -> bool) -> Result<Duration, String> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) {
        if done() {
            return Ok(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(format!("{what}: not within 20 s"))
}

/// Four pages in a row on `server`, their ids.
fn pages(server: &Server, app: &str) -> Vec<String> {
    (0..4)
        .map(|i| {
            let (status, body) = server.call(
                "add_page",
                json!({ "app_id": app, "page_name": format!("页面{i}"), "description": format!("第{i}页") }),
            );
            assert_eq!(status, 200, "{body}");
            body["page_id"].as_str().unwrap().to_string()
        })
        .collect()
}

fn report(base: &str, from: &str, to: &str, widget: &str) -> Result<u16, ()> {
    let body = json!({ "from_page": from, "to_page": to, "action": { "type": "click", "widget_text": widget }, "success": true, "latency_ms": 120 });
    agent()
        .post(&format!("{base}/api/v1/report_transition"))
        .header("Content-Type", "application/json")
        .send(body.to_string().as_bytes())
        .map(|r| r.status().as_u16())
        .map_err(|_| ())
}

#[test]
fn two_replicas_follow_each_other_and_lose_no_acknowledged_report_when_one_is_killed() {
    let Some((_server, url)) = database() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let store = ["--store", url.as_str()];
    let a = Server::start(&scratch.path().join("a"), &store);
    let b = Server::start(&scratch.path().join("b"), &store);
    let app = "com.example.farm";

    // Writes on one are seen by the other.
    let ids = pages(&a, app);
    let delay = wait_for("B sees A's pages", || {
        let (_, body) = b.call("get_graph_stats", json!({ "app_id": app }));
        body["by_app"][0]["pages"] == 4
    })
    .unwrap();
    eprintln!("B saw A's pages after {delay:?}");
    let (status, body) = b.call(
        "match_current_page",
        json!({ "app_id": app, "page_title": "页面2" }),
    );
    assert_eq!(
        (status, body["page"]["page_id"].as_str()),
        (200, Some(ids[2].as_str())),
        "{body}"
    );

    // Sixteen clients report the three edges to both replicas; A is killed half way.
    let edges: Vec<(String, String, String)> = (0..3)
        .map(|i| (ids[i].clone(), ids[i + 1].clone(), format!("下一步{i}")))
        .collect();
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..3).map(|_| AtomicU64::new(0)).collect());
    let unknown: Arc<Vec<AtomicU64>> = Arc::new((0..3).map(|_| AtomicU64::new(0)).collect());
    let a_acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let a_dead = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..16)
        .map(|i| {
            let (edges, acked, unknown, a_acked) = (
                edges.clone(),
                acked.clone(),
                unknown.clone(),
                a_acked.clone(),
            );
            let (stop, a_dead) = (stop.clone(), a_dead.clone());
            let (a_url, b_url) = (a.url.clone(), b.url.clone());
            std::thread::spawn(move || {
                let e = i % 3;
                let (from, to, widget) = &edges[e];
                while !stop.load(Ordering::Relaxed) {
                    let on_a = i % 2 == 0 && !a_dead.load(Ordering::Relaxed);
                    let base = if on_a { &a_url } else { &b_url };
                    match report(base, from, to, widget) {
                        Ok(200) => {
                            acked[e].fetch_add(1, Ordering::Relaxed);
                            if on_a {
                                a_acked.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        // Not acknowledged: it may or may not have been made.
                        _ => {
                            unknown[e].fetch_add(1, Ordering::Relaxed);
                            if on_a {
                                a_dead.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    a.kill9();
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let acked: Vec<u64> = acked.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    let unknown: Vec<u64> = unknown.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    assert!(
        a_acked.load(Ordering::Relaxed) > 0,
        "A acknowledged nothing before it was killed"
    );
    eprintln!("acknowledged {acked:?}, unknown {unknown:?}");

    // The database holds every acknowledged report, and no more than were sent.
    let (ok, out) = atlas(&["export", "--store", &url, app]);
    assert!(ok, "{out}");
    let graph: Value =
        serde_json::from_str(&out[out.find('{').unwrap()..=out.rfind('}').unwrap()]).unwrap();
    for (e, (_, _, widget)) in edges.iter().enumerate() {
        let t = graph["transitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["action"]["widget_text"] == widget.as_str())
            .unwrap();
        let count = t["success_count"].as_u64().unwrap();
        assert!(
            acked[e] <= count && count <= acked[e] + unknown[e],
            "edge {e}: {count} in the database, {} acknowledged, {} unknown",
            acked[e],
            unknown[e]
        );
    }
    let in_database: u64 = graph["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["success_count"].as_u64().unwrap() + t["fail_count"].as_u64().unwrap())
        .sum();

    // B follows to exactly the database's counts, and a new replica starts from them.
    let mut held = 0;
    wait_for(
        &format!("B holds the database's {in_database} reports"),
        || {
            held = reports(&b, app);
            held == in_database
        },
    )
    .unwrap_or_else(|what| panic!("{what}: it holds {held}"));
    let again = Server::start(&scratch.path().join("a2"), &store);
    assert_eq!(reports(&again, app), in_database);
    // A report on the new replica reaches B.
    let (from, to, widget) = &edges[0];
    assert_eq!(report(&again.url, from, to, widget), Ok(200));
    wait_for("B sees the new replica's report", || {
        reports(&b, app) == in_database + 1
    })
    .unwrap();
    b.stop();
    again.stop();
}

/// A request with a bearer token; the answer's status and JSON.
fn send(method: &str, url: &str, token: &str, body: Option<&Value>) -> (u16, Value) {
    let agent = agent();
    let auth = format!("Bearer {token}");
    let answer = match body {
        Some(body) => {
            let request = match method {
                "PUT" => agent.put(url),
                _ => agent.post(url),
            };
            request
                .header("Authorization", &auth)
                .header("Content-Type", "application/json")
                .send(body.to_string().as_bytes())
        }
        None => agent.get(url).header("Authorization", &auth).call(),
    };
    let mut answer = answer.unwrap();
    let status = answer.status().as_u16();
    let text = answer.body_mut().read_to_string().unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[test]
fn knowledge_bases_and_the_business_graph_are_shared_by_replicas() {
    let Some((_server, url)) = database() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let args = [
        "--store",
        url.as_str(),
        "--token",
        "admin-token",
        "--demo",
        "--kb-embedder",
        "same",
    ];
    let a = Server::start(&scratch.path().join("a"), &args);
    let b = Server::start(&scratch.path().join("b"), &args);

    // A dataset made and filled on A answers on B, with its own key.
    let (status, made) = send(
        "POST",
        &format!("{}/v1/datasets", a.url),
        "admin-token",
        Some(&json!({ "name": "售后 FAQ" })),
    );
    assert_eq!(status, 200, "{made}");
    let (id, key) = (
        made["id"].as_str().unwrap(),
        made["api_key"].as_str().unwrap(),
    );
    let table = json!({ "name": "faq.csv", "text": "question,answer\n发票怎么开？,在订单详情页点击申请开票。\n多久发货？,付款后48小时内发货。\n" });
    let (status, doc) = send(
        "POST",
        &format!("{}/v1/datasets/{id}/document/create-by-text", a.url),
        key,
        Some(&table),
    );
    assert_eq!(status, 200, "{doc}");
    let delay = wait_for("B answers from A's dataset", || {
        let (status, found) = send(
            "POST",
            &format!("{}/v1/datasets/{id}/retrieve", b.url),
            key,
            Some(&json!({ "query": "怎么开发票" })),
        );
        status == 200
            && found["records"][0]["segment"]["answer"]
                .as_str()
                .is_some_and(|a| a.contains("申请开票"))
    })
    .unwrap();
    eprintln!("B answered from A's new dataset after {delay:?}");

    // The business graph imported on A is the one B serves.
    let graph_url = |s: &Server| format!("{}/api/v1/business-graph", s.url);
    let (status, mut graph) = send("GET", &graph_url(&a), "admin-token", None);
    assert_eq!(status, 200, "{graph}");
    let renamed = format!(
        "{}（第二版）",
        graph["businesses"][0]["name"].as_str().unwrap()
    );
    graph["businesses"][0]["name"] = json!(renamed);
    let (status, report) = send("PUT", &graph_url(&a), "admin-token", Some(&graph));
    assert_eq!(status, 200, "{report}");
    wait_for("B serves A's import", || {
        send("GET", &graph_url(&b), "admin-token", None).1["businesses"][0]["name"]
            == json!(renamed)
    })
    .unwrap();
    a.stop();
    b.stop();
}
