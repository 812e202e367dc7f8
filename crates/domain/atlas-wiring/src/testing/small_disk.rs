//! A real small filesystem for tests of a full disk: a size-limited tmpfs, mounted by the test
//! itself in a mount namespace of its own (`unshare --mount` as root, as CI runs; `unshare -rm`,
//! a user namespace too, elsewhere). A test whose body needs the mount runs in a child process of
//! its own test binary ([`in_child`]), so that the mount, and the reserve it sets
//! (`ATLAS_DISK_RESERVE_MB`), belong to it alone and vanish with it, however it ends; servers it
//! starts inherit both.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child process that runs a test's body.
const CHILD: &str = "ATLAS_SMALL_DISK_CHILD";

/// Whether this process is the child [`in_child`] started: the test's body runs here.
pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs `test` (its full name in this test binary) in a child process with `reserve_mb` MiB of
/// disk reserve, in a mount namespace of its own; fails with the child's output when the child
/// fails or ran no test.
pub fn in_child(test: &str, reserve_mb: u64) {
    let exe = std::env::current_exe().expect("the test binary");
    // A mount namespace of the child's own, as root too: the mount dies with the child and the
    // servers it started, even when a timeout kills them before the disk is unmounted.
    let mut command = Command::new("unshare");
    match effective_uid() == Some(0) {
        true => command.args(["--mount", "--propagation", "private"]),
        false => command.arg("-rm"),
    };
    command.arg(&exe);
    let out = command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("ATLAS_DISK_RESERVE_MB", reserve_mb.to_string())
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
fn effective_uid() -> Option<u32> {
    let out = Command::new("id").arg("-u").output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// A tmpfs of a few MiB mounted on a fresh folder, unmounted when dropped.
pub struct SmallDisk {
    _dir: tempfile::TempDir,
    /// Where it is mounted.
    pub mount: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `mb` MiB (in a child of [`in_child`]).
    pub fn new(mb: u64) -> SmallDisk {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).expect("the mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(&mount)
            .status()
            .expect("mount");
        assert!(
            status.success(),
            "cannot mount a tmpfs on {}",
            mount.display()
        );
        SmallDisk { _dir: dir, mount }
    }

    /// Fills the disk with a new file `name` until `leave` bytes are free, or no more fit.
    pub fn fill(&self, name: &str, leave: u64) -> PathBuf {
        use std::io::Write;
        let filler = self.mount.join(name);
        let size = free_bytes(&self.mount).saturating_sub(leave);
        let mut file = std::fs::File::create(&filler).expect("the filler");
        let chunk = vec![7u8; 64 << 10];
        let mut written = 0u64;
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

/// Bytes free on the filesystem of `path`, as `df` says.
pub fn free_bytes(path: &Path) -> u64 {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(path)
        .output()
        .expect("df");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df's free bytes")
}
