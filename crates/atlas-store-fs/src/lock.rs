//! One writer per data folder (seed 001 §8.1), by an OS file lock that dies with its process.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

use atlas_store::StoreError;

pub(crate) struct FolderLock {
    _file: File,
}

impl FolderLock {
    pub(crate) fn acquire(lock_path: &Path, root: &Path) -> Result<FolderLock, StoreError> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path)?;
        match file.try_lock() {
            Ok(()) => {
                file.set_len(0)?;
                file.rewind()?;
                write!(file, "{}", std::process::id())?;
                Ok(FolderLock { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let holder = if pid.trim().is_empty() {
                    String::new()
                } else {
                    format!(" (pid {})", pid.trim())
                };
                Err(StoreError::Locked {
                    path: root.display().to_string(),
                    holder,
                })
            }
            Err(std::fs::TryLockError::Error(e)) => Err(e.into()),
        }
    }
}
