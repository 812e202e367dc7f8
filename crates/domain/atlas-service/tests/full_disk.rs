//! A full disk, on a real small filesystem: a size-limited tmpfs, mounted by the test (as root,
//! as CI runs; elsewhere inside `unshare -rm`, a user and mount namespace of its own). Each test
//! runs in a child process of this binary, so that its mount and its reserve
//! (`ATLAS_DISK_RESERVE_MB`) are its own; the child counts exactly after a restart:
//! acknowledged reports kept, refused ones not applied, retried ones once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use atlas_service::*;
use atlas_store::Store;
use atlas_store_fs::FsStore;
use atlas_text::HashEmbedder;

/// Set in the child that runs a test's body.
const CHILD: &str = "ATLAS_FULL_DISK_CHILD";

/// Runs `test` of this binary in a child process with `reserve_mb` of reserve: as root
/// directly, else inside `unshare -rm`.
fn in_child(test: &str, reserve_mb: u64) {
    let exe = std::env::current_exe().unwrap();
    let args = [test, "--exact", "--nocapture", "--test-threads=1"];
    let root = unsafe_free_euid() == 0;
    let mut command = match root {
        true => Command::new(&exe),
        false => {
            let mut c = Command::new("unshare");
            c.arg("-rm").arg(&exe);
            c
        }
    };
    let out = command
        .args(args)
        .env(CHILD, "1")
        .env(atlas_store_fs::RESERVE_VARIABLE, reserve_mb.to_string())
        .output()
        .expect("run the test's child (as root, or with unshare -rm)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{test} failed in its child:\n{text}");
    assert!(text.contains("1 passed"), "{test} did not run:\n{text}");
}

/// The effective user id, as `id -u` prints it.
fn unsafe_free_euid() -> u32 {
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(u32::MAX)
}

/// A tmpfs of `mb` MiB mounted on a fresh folder, unmounted when dropped.
struct SmallDisk {
    _dir: tempfile::TempDir,
    mount: PathBuf,
}

impl SmallDisk {
    fn new(mb: u64) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(&mount)
            .status()
            .expect("mount");
        assert!(status.success(), "cannot mount a tmpfs");
        SmallDisk { _dir: dir, mount }
    }

    /// Fills the disk with a file until `leave` bytes are free (or no more can be written).
    fn fill(&self, leave: u64) -> PathBuf {
        let filler = self.mount.join("filler");
        let free = free_bytes(&self.mount);
        let size = free.saturating_sub(leave);
        let mut file = std::fs::File::create(&filler).unwrap();
        let chunk = vec![7u8; 64 << 10];
        let mut written = 0u64;
        use std::io::Write;
        while written < size {
            let n = chunk.len().min((size - written) as usize);
            if file.write_all(&chunk[..n]).is_err() {
                break;
            }
            written += n as u64;
        }
        let _ = file.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}

fn free_bytes(path: &Path) -> u64 {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap()
}

fn open(data: &Path) -> Arc<Atlas> {
    let store = Arc::new(FsStore::open(data).expect("open store"));
    Atlas::open(
        store,
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )
    .expect("open atlas")
}

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

#[test]
fn writes_stop_at_the_reserve_and_resume_when_space_returns() {
    if std::env::var_os(CHILD).is_none() {
        return in_child(
            "writes_stop_at_the_reserve_and_resume_when_space_returns",
            4,
        );
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let disk = SmallDisk::new(24);
        let data = disk.mount.join("data");
        let atlas = open(&data);
        assert!(demo_graph(&atlas).await.unwrap());
        let edge = an_edge(&atlas).await;
        let start = count(&atlas, &edge.1);
        // Past the reserve by a little: the reports take it, then the reserve refuses.
        let filler = disk.fill(5 << 20);
        let acknowledged = report_until_refused(&atlas, &edge, 20, true).await;
        assert!(acknowledged > 0);
        let refusal = atlas.report_transition(edge.0.clone()).await.unwrap_err();
        assert!(
            refusal.to_string().contains("kept for checkpoints"),
            "{refusal}"
        );
        // Space back: writes resume without a restart.
        std::fs::remove_file(filler).unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        atlas.report_transition(edge.0.clone()).await.unwrap();
        drop(atlas);
        let atlas = open(&data);
        assert_eq!(count(&atlas, &edge.1), start + acknowledged + 1);
    });
}

#[test]
fn a_write_the_disk_refuses_is_undone_and_nothing_rests_on_it() {
    if std::env::var_os(CHILD).is_none() {
        return in_child(
            "a_write_the_disk_refuses_is_undone_and_nothing_rests_on_it",
            0,
        );
    }
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let disk = SmallDisk::new(24);
        let data = disk.mount.join("data");
        let atlas = open(&data);
        assert!(demo_graph(&atlas).await.unwrap());
        let edge = an_edge(&atlas).await;
        let start = count(&atlas, &edge.1);
        // No reserve: the journal's own write fails, and is undone.
        let filler = disk.fill(64 << 10);
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
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        // The client's retry of a refused report counts once.
        atlas.report_transition(edge.0.clone()).await.unwrap();
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
