//! Where things live in the data folder, and the primitives that write there safely.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use atlas_store::StoreError;

use crate::files::{FORMAT_VERSION, MAX_JSON_BYTES};

#[derive(Debug, Clone)]
pub(crate) struct Layout {
    root: PathBuf,
}

impl Layout {
    pub(crate) fn new(root: &Path) -> Layout {
        Layout {
            root: root.to_path_buf(),
        }
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn meta_dir(&self) -> PathBuf {
        self.root.join(".atlas")
    }

    pub(crate) fn lock_file(&self) -> PathBuf {
        self.meta_dir().join("lock")
    }

    pub(crate) fn journal_dir(&self) -> PathBuf {
        self.meta_dir().join("journal")
    }

    pub(crate) fn checkpoint_file(&self) -> PathBuf {
        self.meta_dir().join("checkpoint.json")
    }

    pub(crate) fn apps_dir(&self) -> PathBuf {
        self.root.join("apps")
    }

    pub(crate) fn create_root(&self) -> Result<(), StoreError> {
        for dir in [
            self.meta_dir().join("logs"),
            self.journal_dir(),
            self.apps_dir(),
        ] {
            atlas_store::files::refuse_links(&self.root, &dir)?;
            fs::create_dir_all(&dir)
                .map_err(|e| StoreError::caused(format!("cannot create {}", dir.display()), e))?;
        }
        let manifest = self.root.join("atlas.json");
        if !manifest.exists() {
            let body = serde_json::json!({
                "kind": "atlas-data",
                "version": FORMAT_VERSION,
                "created_at": atlas_model::now_rfc3339(),
            });
            atomic_write(
                &manifest,
                &serde_json::to_vec_pretty(&body).expect("json"),
                true,
            )?;
        }
        Ok(())
    }

    /// Refuses a folder written by a newer format; runs migrations for older ones (§7).
    pub(crate) fn check_root_version(&self) -> Result<(), StoreError> {
        let path = self.root.join("atlas.json");
        let text = fs::read_to_string(&path)?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
        let found = value
            .get("version")
            .and_then(|v| v.as_str())
            .unwrap_or("1.0")
            .to_string();
        crate::files::migrate(&path, &found)
    }

    /// Finds every app folder and the app id its config.json names.
    pub(crate) fn read_app_dirs(&self) -> Result<HashMap<String, String>, StoreError> {
        let mut dirs = HashMap::new();
        for entry in fs::read_dir(self.apps_dir())? {
            let entry = entry?;
            if !entry.file_type()?.is_dir() {
                continue;
            }
            let name = entry.file_name().to_string_lossy().to_string();
            let graph = entry.path().join(".atlas").join("graph.json");
            if !graph.exists() {
                continue; // a folder whose first checkpoint never finished: its data is in the journal
            }
            let config = crate::files::read_config(&entry.path())?;
            dirs.insert(config.app_id, name);
        }
        Ok(dirs)
    }

    /// Appends a timestamped line to one of the folder's own logs.
    pub(crate) fn log_root(&self, file: &str, line: &str) {
        append_log(&self.meta_dir().join("logs").join(file), line);
    }
}

/// Appends a timestamped line to a log file; logging never fails the operation it describes.
pub(crate) fn append_log(path: &Path, line: &str) {
    if let Some(parent) = path.parent() {
        let _ = fs::create_dir_all(parent);
    }
    if let Ok(mut f) = fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{} {line}", atlas_model::now_rfc3339());
    }
}

/// Writes a file so that readers see either the old or the new content, never a mix: a temporary
/// file in the same folder, then a rename. With `durable`, the data is fsynced before the rename
/// (files the loader depends on); others rely on the checkpoint's final filesystem sync.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    if bytes.len() > MAX_JSON_BYTES && path.extension().is_some_and(|e| e == "json") {
        return Err(StoreError::TooLarge {
            what: path.display().to_string(),
            size: bytes.len(),
            limit: MAX_JSON_BYTES,
        });
    }
    atlas_store::files::write_atomic(path, bytes, durable)
        .map_err(|e| atlas_store::files::write_error(path, e))
}

/// Flushes everything written to the folder's filesystem (one `syncfs` instead of a fsync per file).
pub(crate) fn sync_filesystem(root: &Path) -> Result<(), StoreError> {
    let dir = fs::File::open(root)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: syncfs takes a valid open file descriptor, which `dir` holds for the call.
        let rc = unsafe { libc::syncfs(dir.as_raw_fd()) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error().into());
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        dir.sync_all()?;
    }
    Ok(())
}
