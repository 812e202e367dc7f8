//! One writer per data folder (seed 001 §8.1), by an OS file lock that dies with its process.

use std::fs::File;
use std::path::Path;

use atlas_store::StoreError;
use atlas_store::files::{LockFailure, lock_folder};

pub(crate) struct FolderLock {
    _file: File,
}

impl FolderLock {
    pub(crate) fn acquire(lock_path: &Path, root: &Path) -> Result<FolderLock, StoreError> {
        match lock_folder(lock_path) {
            Ok(file) => Ok(FolderLock { _file: file }),
            Err(LockFailure::Held { holder }) => Err(StoreError::Locked {
                path: root.display().to_string(),
                holder,
            }),
            Err(LockFailure::Io(e)) => Err(e.into()),
        }
    }
}
