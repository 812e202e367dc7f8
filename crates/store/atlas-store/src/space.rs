//! Room on the disk under a data folder, and the reserve kept for checkpoints.
//!
//! Key design decision: **writes stop while there is still room.** A checkpoint is what frees
//! journal segments, and it writes the changed apps' files first: a disk filled to its last byte
//! by reports leaves no room for the write that would free it. So every write but a
//! checkpoint's — the journal's, a knowledge base's, a page's files — is refused once the free
//! space falls under a reserve (`ATLAS_DISK_RESERVE_MB`, 16 MiB by default), and health warns
//! from four times that. The refusal is asked before a write changes anything, so a refused
//! write changes nothing; a write that fails anyway (another process took the reserve) is undone
//! (the folder store's journal cuts it away).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crate::{DiskSpace, StoreError};

/// The environment variable that sets the reserve, in MiB.
pub const RESERVE_VARIABLE: &str = "ATLAS_DISK_RESERVE_MB";
/// The reserve when the variable is not set.
pub const DEFAULT_RESERVE_MB: u64 = 16;
/// How long a measured free space is taken as current: a write asks before each change, and a
/// fleet's reports come thousands a second.
const FRESH_MS: u64 = 100;

/// The free space of one data folder's disk, measured at most every [`FRESH_MS`] for the
/// journal, which asks before every write.
pub struct Space {
    root: PathBuf,
    reserve: u64,
    /// The last measure, and when (ms since `epoch`).
    free: AtomicU64,
    measured_at: AtomicU64,
    epoch: Instant,
    /// Whether the last check refused, to log each change once.
    refusing: AtomicBool,
}

impl Space {
    /// The disk under `root`, with the reserve [`RESERVE_VARIABLE`] sets.
    pub fn new(root: &Path) -> Space {
        let reserve = std::env::var(RESERVE_VARIABLE)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(DEFAULT_RESERVE_MB)
            << 20;
        Space {
            root: root.to_path_buf(),
            reserve,
            free: AtomicU64::new(u64::MAX),
            measured_at: AtomicU64::new(u64::MAX),
            epoch: Instant::now(),
            refusing: AtomicBool::new(false),
        }
    }

    /// Bytes kept free for checkpoints.
    pub fn reserve(&self) -> u64 {
        self.reserve
    }

    /// Bytes free for an unprivileged writer on the folder's disk, measured now.
    pub fn measure(&self) -> Option<u64> {
        let free = free_bytes(&self.root)?;
        self.free.store(free, Ordering::Relaxed);
        self.measured_at
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
        Some(free)
    }

    /// The free space, measured at most [`FRESH_MS`] ago.
    fn recent(&self) -> Option<u64> {
        let now = self.epoch.elapsed().as_millis() as u64;
        let at = self.measured_at.load(Ordering::Relaxed);
        if at != u64::MAX && now.saturating_sub(at) < FRESH_MS {
            return Some(self.free.load(Ordering::Relaxed));
        }
        self.measure()
    }

    /// Refuses a write while the free space is under the reserve; logs when that starts and
    /// when it ends.
    pub fn check(&self) -> Result<(), StoreError> {
        let Some(free) = self.recent() else {
            return Ok(()); // a filesystem that cannot tell: its writes say
        };
        let short = free < self.reserve;
        if short != self.refusing.swap(short, Ordering::Relaxed) {
            if short {
                tracing::error!(
                    "writes stopped: the disk holding {} has {free} bytes free, under the {} kept \
                     for checkpoints",
                    self.root.display(),
                    self.reserve
                );
            } else {
                tracing::info!(
                    "writes resumed: the disk holding {} has {free} bytes free",
                    self.root.display()
                );
            }
        }
        match short {
            true => Err(self.full(free)),
            false => Ok(()),
        }
    }

    /// The refusal of a write for want of space.
    pub fn full(&self, free: u64) -> StoreError {
        StoreError::Full {
            folder: self.root.display().to_string(),
            free,
            reserve: self.reserve,
        }
    }

    /// The disk as health reports it, measured now.
    pub fn disk(&self) -> Option<DiskSpace> {
        Some(DiskSpace {
            folder: self.root.display().to_string(),
            free_bytes: self.measure()?,
            reserve_bytes: self.reserve,
            warn_below_bytes: self.reserve * 4,
        })
    }
}

/// Refuses a write under `path` while its disk's free space is under the reserve (measured
/// now): for the writers that write rarely (a knowledge base, a page's files).
pub fn refuse_under_reserve(path: &Path) -> Result<(), StoreError> {
    let space = Space::new(path);
    match space.measure() {
        Some(free) if free < space.reserve => Err(space.full(free)),
        _ => Ok(()),
    }
}

/// `statvfs`'s free blocks for unprivileged users, in bytes.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a valid NUL-terminated path and `stat` points to writable memory of the
    // right type for the call to fill; it is read only when the call succeeded.
    let rc = unsafe { libc::statvfs(c.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it filled `stat`.
    let stat = unsafe { stat.assume_init() };
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::is_no_space;

    #[test]
    fn the_free_space_of_a_real_folder_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let space = Space::new(dir.path());
        assert!(space.measure().is_some_and(|free| free > 0));
        let disk = space.disk().unwrap();
        assert_eq!(disk.warn_below_bytes, disk.reserve_bytes * 4);
    }

    #[test]
    fn no_space_is_told_from_other_errors() {
        assert!(is_no_space(&std::io::Error::from_raw_os_error(
            libc::ENOSPC
        )));
        assert!(is_no_space(&std::io::Error::from_raw_os_error(
            libc::EDQUOT
        )));
        assert!(!is_no_space(&std::io::Error::from_raw_os_error(libc::EIO)));
    }
}
