//! A full disk, on a real small filesystem ([`atlas_wiring::testing::small_disk`]), counted
//! exactly after a restart: acknowledged reports kept, refused ones not applied, retried ones
//! once.

use std::sync::Arc;

use atlas_wiring::testing::open_atlas_at as open;
use atlas_wiring::testing::small_disk::{SmallDisk, in_child, is_child};

use atlas_service::*;
use atlas_store::Store;
use atlas_store_fs::FsStore;

/// The demo's first edge from its home page: the report the tests send, and its id.
async fn an_edge(atlas: &Arc<Atlas>) -> (ReportTransitionRequest, String) {
    let home = atlas
        .match_current_page(MatchPageRequest {
            app_id: DEMO_APP_ID.into(),
            ui_hierarchy: None,
            page_title: Some("首页".into()),
            page_screenshot: None,
        })
        .await
        .unwrap()
        .page
        .unwrap()
        .page_id;
    let action = atlas
        .get_available_actions(AvailableActionsRequest {
            page_id: home.clone(),
        })
        .unwrap()
        .actions
        .into_iter()
        .next()
        .unwrap();
    let request = ReportTransitionRequest {
        from_page: home,
        action: ReportedAction {
            action_type: action.action_type.clone(),
            widget: None,
            widget_text: Some(action.widget_text.clone()),
            widget_xpath: None,
            input_text: None,
            checked: None,
        },
        to_page: action.target_page_id.clone(),
        success: true,
        latency_ms: Some(100),
        app_id: Some(DEMO_APP_ID.into()),
        ..Default::default()
    };
    let id = atlas
        .report_transition(request.clone())
        .await
        .unwrap()
        .transition_id;
    (request, id)
}

fn count(atlas: &Atlas, id: &str) -> u64 {
    atlas.read(|g| {
        g.app(DEMO_APP_ID)
            .and_then(|a| a.transition(id))
            .map(|t| t.to_transition().success_count)
            .unwrap()
    })
}

/// Sends the report until `refusals` are refused in a row; returns how many were acknowledged,
/// and checks each refusal is a 503 that names the disk and (for a writer `alone`) leaves the
/// count as it was.
async fn report_until_refused(
    atlas: &Arc<Atlas>,
    (request, id): &(ReportTransitionRequest, String),
    refusals: usize,
    alone: bool,
) -> u64 {
    let (mut acknowledged, mut refused) = (0u64, 0usize);
    for _ in 0..2_000_000 {
        let before = count(atlas, id);
        match atlas.report_transition(request.clone()).await {
            Ok(_) => {
                acknowledged += 1;
                refused = 0;
            }
            Err(e) => {
                assert_eq!(e.code().as_str(), "SERVICE_UNAVAILABLE", "{e}");
                assert!(e.to_string().contains("disk"), "{e}");
                if alone {
                    assert_eq!(
                        count(atlas, id),
                        before,
                        "a refused report was applied: {e}"
                    );
                }
                refused += 1;
                if refused == 1 {
                    eprintln!("after {acknowledged} acknowledged: {e}");
                }
                if refused == refusals {
                    return acknowledged;
                }
            }
        }
    }
    panic!("the disk never filled");
}

/// Retries `report` as a client does while it is refused for want of space: the store looks at
/// its disk again at most once a second, later on a busy machine. A refused retry changes
/// nothing, so the one taken counts once.
async fn until_taken(atlas: &Atlas, report: &ReportTransitionRequest) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match atlas.report_transition(report.clone()).await {
            Ok(_) => return,
            Err(e) => assert!(
                std::time::Instant::now() < deadline,
                "writes did not resume: {e}"
            ),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The demo graph on a 24 MiB tmpfs: the disk, the data folder, the service and an edge.
async fn demo_on_a_small_disk() -> (
    SmallDisk,
    std::path::PathBuf,
    Arc<Atlas>,
    (ReportTransitionRequest, String),
) {
    let disk = SmallDisk::new(24);
    let data = disk.mount.join("data");
    let atlas = open(&data);
    assert_eq!(
        demo_graph(&atlas).await.unwrap(),
        atlas_service::DemoInstall::Installed
    );
    let edge = an_edge(&atlas).await;
    (disk, data, atlas, edge)
}

#[test]
fn writes_stop_at_the_reserve_and_resume_when_space_returns() {
    if !is_child() {
        return in_child(
            "writes_stop_at_the_reserve_and_resume_when_space_returns",
            4,
        );
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (disk, data, atlas, edge) = demo_on_a_small_disk().await;
        let start = count(&atlas, &edge.1);
        // Past the reserve by a little: the reports take it, then the reserve refuses.
        let filler = disk.fill("filler", 5 << 20);
        let acknowledged = report_until_refused(&atlas, &edge, 20, true).await;
        assert!(acknowledged > 0);
        let refusal = atlas.report_transition(edge.0.clone()).await.unwrap_err();
        assert!(
            refusal.to_string().contains("kept for checkpoints"),
            "{refusal}"
        );
        // The reserve is the checkpoint's: it folds the journal, which frees its segments.
        let free = atlas.disk().unwrap().free_bytes;
        atlas.checkpoint().unwrap();
        assert!(
            atlas.disk().unwrap().free_bytes > free,
            "the checkpoint freed nothing"
        );
        // Space back: writes resume without a restart.
        std::fs::remove_file(filler).unwrap();
        until_taken(&atlas, &edge.0).await;
        drop(atlas);
        let atlas = open(&data);
        assert_eq!(count(&atlas, &edge.1), start + acknowledged + 1);
    });
}

#[test]
fn a_write_the_disk_refuses_is_undone_and_nothing_rests_on_it() {
    if !is_child() {
        return in_child(
            "a_write_the_disk_refuses_is_undone_and_nothing_rests_on_it",
            0,
        );
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (disk, data, atlas, edge) = demo_on_a_small_disk().await;
        let start = count(&atlas, &edge.1);
        // No reserve: the journal's own write fails, and is undone.
        let filler = disk.fill("filler", 64 << 10);
        // Many writers at once, so that refused writes share batches with each other.
        let mut acknowledged = 0;
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (atlas, edge) = (atlas.clone(), edge.clone());
            tasks.push(tokio::spawn(async move {
                report_until_refused(&atlas, &edge, 5, false).await
            }));
        }
        for task in tasks {
            acknowledged += task.await.unwrap();
        }
        assert_eq!(count(&atlas, &edge.1), start + acknowledged);
        std::fs::remove_file(filler).unwrap();
        // The client's retry of a refused report counts once.
        until_taken(&atlas, &edge.0).await;
        assert_eq!(count(&atlas, &edge.1), start + acknowledged + 1);
        atlas.checkpoint().unwrap();
        drop(atlas);
        let atlas = open(&data);
        assert_eq!(count(&atlas, &edge.1), start + acknowledged + 1);
        drop(atlas);
        let report = FsStore::open(&data).unwrap().check(false).unwrap();
        assert!(report.is_clean(), "{report:?}");
    });
}
