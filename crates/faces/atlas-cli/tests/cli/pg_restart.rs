//! The database restarted under load: two replicas keep answering (503 with the seed's error
//! shape while it is away), acknowledge nothing they did not commit, and recover without a
//! restart of their own. A test binary of its own, since it restarts the shared test server
//! (`ATLAS_TEST_PGDATA`, the cluster `scripts/test.sh` started).

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atlas_wiring::testing::TestStore;
use serde_json::{Value, json};

use crate::common::{Served, Server, agent};

fn cluster() -> Option<String> {
    match std::env::var("ATLAS_TEST_PGDATA") {
        Ok(dir) if !dir.is_empty() => Some(dir),
        _ => {
            assert!(
                std::env::var("ATLAS_REQUIRE_PG").as_deref() != Ok("1"),
                "ATLAS_REQUIRE_PG=1 but ATLAS_TEST_PGDATA names no cluster to restart"
            );
            None
        }
    }
}

#[test]
fn replicas_recover_from_a_database_restart_without_restarting() {
    let Some(cluster) = cluster() else { return };
    let _alone = crate::common::alone_on_the_test_server();
    let Some(TestStore::Postgres(url)) = TestStore::postgres() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let store = ["--store", url.as_str()];
    let a = Server::start(&scratch.path().join("a"), &store);
    let b = Server::start(&scratch.path().join("b"), &store);
    let app = "com.example.restart";
    let ids: Vec<String> = (0..2)
        .map(|i| {
            let (status, body) = a.call(
                "add_page",
                json!({ "app_id": app, "page_name": format!("页{i}") }),
            );
            assert_eq!(status, 200, "{body}");
            body["page_id"].as_str().unwrap().to_string()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while b.call("get_graph_stats", json!({ "app_id": app })).1["by_app"][0]["pages"] != 2 {
        assert!(Instant::now() < deadline, "B did not see A's pages");
        std::thread::sleep(Duration::from_millis(10));
    }

    let acked = Arc::new(AtomicU64::new(0));
    let unknown = Arc::new(AtomicU64::new(0));
    let restarted = Arc::new(AtomicBool::new(false));
    let after_restart: Arc<Vec<AtomicU64>> = Arc::new(vec![AtomicU64::new(0), AtomicU64::new(0)]);
    let refusals: Arc<Mutex<Vec<(u16, Value)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let urls = [a.url.clone(), b.url.clone()];
            let (from, to) = (ids[0].clone(), ids[1].clone());
            let (acked, unknown, restarted, after_restart, refusals, stop) = (
                acked.clone(),
                unknown.clone(),
                restarted.clone(),
                after_restart.clone(),
                refusals.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let replica = i % 2;
                let body = json!({ "from_page": from, "to_page": to, "action": { "type": "click", "widget_text": "下一页" }, "success": true });
                while !stop.load(Ordering::Relaxed) {
                    let answer = agent()
                        .post(&format!("{}/api/v1/report_transition", urls[replica]))
                        .header("Content-Type", "application/json")
                        .send(body.to_string().as_bytes());
                    match answer {
                        Ok(mut r) if r.status() == 200 => {
                            acked.fetch_add(1, Ordering::Relaxed);
                            if restarted.load(Ordering::Relaxed) {
                                after_restart[replica].fetch_add(1, Ordering::Relaxed);
                            }
                            let _ = r.body_mut().read_to_string();
                        }
                        Ok(mut r) => {
                            unknown.fetch_add(1, Ordering::Relaxed);
                            let text = r.body_mut().read_to_string().unwrap_or_default();
                            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
                            refusals.lock().unwrap().push((r.status().as_u16(), body));
                        }
                        Err(e) => panic!("the replica itself stopped answering: {e}"),
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../scripts/pg-cluster.sh");
    let status = Command::new(script)
        .args(["restart", &cluster])
        .status()
        .unwrap();
    assert!(status.success(), "the cluster did not restart");
    restarted.store(true, Ordering::Relaxed);
    let deadline = Instant::now() + Duration::from_secs(30);
    while after_restart.iter().any(|n| n.load(Ordering::Relaxed) < 20) {
        assert!(
            Instant::now() < deadline,
            "a replica did not take reports again within 30 s of the restart: {after_restart:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }

    // While the database was away, a refusal was a 503 in the seed's error shape.
    for (status, body) in refusals.lock().unwrap().iter() {
        assert_eq!(*status, 503, "{body}");
        assert_eq!(body["success"], false, "{body}");
        assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE", "{body}");
    }
    let (acked, unknown) = (
        acked.load(Ordering::Relaxed),
        unknown.load(Ordering::Relaxed),
    );
    eprintln!("acknowledged {acked}, refused {unknown}");

    // Nothing acknowledged is lost; both replicas converge to the database's count.
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["export", "--store", &url, app])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let graph: Value = serde_json::from_str(&text).expect("export");
    let count = graph["transitions"][0]["success_count"].as_u64().unwrap();
    assert!(
        acked <= count && count <= acked + unknown,
        "{count} in the database, {acked} acknowledged, {unknown} refused"
    );
    for server in [&a, &b] {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (_, stats) = server.call("get_graph_stats", json!({ "app_id": app }));
            if stats["by_app"][0]["reports"].as_u64() == Some(count) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} holds {stats}, the database {count}",
                server.url
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let health = agent()
            .get(&format!("{}/healthz", server.url))
            .call()
            .unwrap();
        assert_eq!(health.status(), 200);
    }
    a.stop();
    b.stop();
}
