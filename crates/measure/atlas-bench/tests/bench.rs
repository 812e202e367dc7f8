//! The benchmarks run end to end at tiny sizes: they must measure something real and check it.

use std::time::Duration;

use atlas_bench::synth::AppShape;
use atlas_bench::{ingest, query, startup};

/// The Python with NetworkX, the planning reference. `scripts/test.sh` installs it, so under CI
/// (`CI` set) its absence is a failure, not a comparison silently skipped.
fn python_with_networkx() -> Option<String> {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import networkx"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("NetworkX is not installed for python3, and scripts/test.sh installs it");
    }
    ok.then(|| "python3".to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_benchmark_plans_every_query_and_runs_the_reference() {
    let scratch = atlas_bench::scratch(None).unwrap();
    let python = python_with_networkx();
    let config = query::QueryConfig {
        shape: AppShape {
            pages: 150,
            transitions: 1200,
            intents: 30,
        },
        queries: 60,
        python: python.clone(),
    };
    let report = query::run(&config, scratch.path()).await.unwrap();
    assert_eq!((report.pages, report.transitions), (150, 1200));
    assert_eq!(report.failures, 0, "every generated page is reachable");
    assert!(report.mean_path_steps >= 1.0);
    assert!(report.query_path.p50_us > 0.0 && report.get_next_action.p50_us > 0.0);
    assert!(
        report.route_cache_hits > 0,
        "repeated destinations are answered from remembered routes"
    );
    if python.is_some() {
        let nx = report
            .networkx
            .as_ref()
            .unwrap_or_else(|| panic!("networkx failed: {:?}", report.networkx_error));
        assert!(nx.unweighted.p50_us > 0.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ingest_benchmark_counts_only_what_is_durable() {
    let scratch = atlas_bench::scratch(None).unwrap();
    let config = ingest::IngestConfig {
        clients: 4,
        duration: Duration::from_millis(700),
    };
    let report = ingest::run(&config, scratch.path(), &atlas_server::Loopback)
        .await
        .unwrap();
    assert!(report.acknowledged > 0);
    assert_eq!(report.errors, 0);
    assert!(
        report.verified,
        "the graph grew by exactly the acknowledged reports, also after reopening"
    );
    assert!(report.sqlite_rows > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_benchmark_reopens_everything_it_wrote() {
    let scratch = atlas_bench::scratch(None).unwrap();
    let data = scratch.path().join("folder");
    let config = startup::StartupConfig {
        apps: 3,
        transitions: 900,
        fan_out: 10,
    };
    let (pages, transitions) = startup::build(&config, &data).await.unwrap();
    assert_eq!(transitions, 900);
    let measured = startup::measure_open(&data).unwrap();
    assert_eq!((measured.pages, measured.transitions), (pages, transitions));
    assert!(measured.rss_after > 0);
}

#[test]
fn kb_benchmark_answers_every_query_and_times_both_sides() {
    let scratch = atlas_bench::scratch(None).unwrap();
    let report = atlas_bench::kb::run(
        &atlas_bench::kb::KbBenchConfig {
            segments: 600,
            queries: 40,
        },
        scratch.path(),
    )
    .unwrap();
    assert_eq!(
        (report.segments, report.answered),
        (600, 40),
        "every query shares words with some question"
    );
    assert!(report.retrieve.p50_us > 0.0 && report.sqlite_fts5.p50_us > 0.0);
}

/// On the test server (`ATLAS_TEST_PG`): the replicas' benchmark verifies every acknowledged
/// report on every replica, sees a follower catch up, and starts a replica on what it wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_benchmark_counts_every_report_once_on_every_replica() {
    let Some(url) = std::env::var("ATLAS_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            std::env::var("ATLAS_REQUIRE_PG").as_deref() != Ok("1"),
            "ATLAS_REQUIRE_PG=1 but ATLAS_TEST_PG names no server"
        );
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let config = atlas_bench::replicas::ReplicaConfig {
        url,
        clients: 4,
        duration: Duration::from_millis(500),
        startup_transitions: 2_000,
    };
    let r = atlas_bench::replicas::run(&config, scratch.path(), &atlas_server::Loopback)
        .await
        .unwrap();
    assert!(r.verified, "{r:?}");
    assert!(
        r.postgres_1.acknowledged > 0 && r.postgres_3.acknowledged > 0,
        "{r:?}"
    );
    assert!(
        r.follow_delay.p50_us > 0.0 && r.startup_pages == 200,
        "{r:?}"
    );
}
