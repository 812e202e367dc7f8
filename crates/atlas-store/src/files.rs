//! File primitives every durable store of Atlas writes through: the folder store of seed 001 and
//! the knowledge bases' folders alike, so "one writer" and "old or new, never a mix" mean the same
//! thing everywhere.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// Why [`lock_folder`] did not get the lock.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process holds it; `holder` is " (pid N)" when it wrote its pid, else empty.
    Held {
        holder: String,
    },
    Io(std::io::Error),
}

impl From<std::io::Error> for LockFailure {
    fn from(e: std::io::Error) -> Self {
        LockFailure::Io(e)
    }
}

/// Takes the OS lock on the file at `path` (created if missing) and writes this process's pid
/// into it for the next one's error message. The lock lasts as long as the returned file, and dies
/// with the process, so a crash never leaves a folder locked.
pub fn lock_folder(path: &Path) -> Result<File, LockFailure> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => {
            file.set_len(0)?;
            file.rewind()?;
            write!(file, "{}", std::process::id())?;
            Ok(file)
        }
        Err(fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let holder = if pid.trim().is_empty() {
                String::new()
            } else {
                format!(" (pid {})", pid.trim())
            };
            Err(LockFailure::Held { holder })
        }
        Err(fs::TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Writes a file so that readers see either the old or the new content, never a mix: a temporary
/// file `.NAME.tmp` in the same folder, then a rename. With `durable`, the data is fsynced before
/// the rename.
pub fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        if durable {
            f.sync_data()?;
        }
    }
    fs::rename(&tmp, path)
}
