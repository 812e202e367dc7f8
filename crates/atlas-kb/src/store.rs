//! The folder a knowledge base lives in, one readable JSON file per thing:
//!
//! ```text
//! kb/<dataset id>/dataset.json            name, description, API key
//! kb/<dataset id>/documents/<doc id>.json  the document, its metadata and its segments
//! kb/<dataset id>/hits.json                hit counts per segment
//! ```
//!
//! Every write goes to a temporary file that is fsynced, renamed over the old one, and the
//! folder fsynced: a write that returned has survived a crash, and a reader never sees half a file.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use atlas_store::files::{LockFailure, lock_folder, write_atomic};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::KbError;
use crate::model::{Dataset, Document};

pub(crate) struct Stored {
    pub dataset: Dataset,
    pub documents: Vec<Document>,
    pub hits: HashMap<String, u64>,
}

/// Takes the OS lock on `root/lock`, the one writer's, which dies with its process.
pub(crate) fn lock(root: &Path) -> Result<fs::File, KbError> {
    match lock_folder(&root.join("lock")) {
        Ok(file) => Ok(file),
        Err(LockFailure::Held { holder }) => Err(KbError::Locked {
            path: root.display().to_string(),
            holder,
        }),
        Err(LockFailure::Io(e)) => Err(e.into()),
    }
}

pub(crate) fn document_path(root: &Path, dataset: &str, document: &str) -> PathBuf {
    dataset_dir(root, dataset)
        .join("documents")
        .join(format!("{document}.json"))
}

pub(crate) fn dataset_dir(root: &Path, id: &str) -> PathBuf {
    root.join(id)
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<(), KbError> {
    let dir = path.parent().expect("a file in a folder");
    fs::create_dir_all(dir)?;
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| KbError::Io(e.to_string()))?;
    write_atomic(path, &bytes, true)?;
    sync_dir(dir)?;
    Ok(())
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, KbError> {
    let bytes = fs::read(path)?;
    serde_json::from_slice(&bytes)
        .map_err(|e| KbError::Io(format!("{} is damaged: {e}", path.display())))
}

pub(crate) fn remove(path: &Path) -> Result<(), KbError> {
    if path.is_dir() {
        fs::remove_dir_all(path)?;
    } else if path.exists() {
        fs::remove_file(path)?;
    }
    if let Some(parent) = path.parent().filter(|p| p.exists()) {
        sync_dir(parent)?;
    }
    Ok(())
}

/// The knowledge tags kept in `root` (none before the first is made).
pub(crate) fn load_tags(root: &Path) -> Result<Vec<crate::Tag>, KbError> {
    let file = root.join(crate::tags::TAGS_FILE);
    if file.is_file() {
        read_json(&file)
    } else {
        Ok(Vec::new())
    }
}

/// Every dataset under `root`, documents in creation order.
pub(crate) fn load(root: &Path) -> Result<Vec<Stored>, KbError> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(root) else {
        return Ok(out);
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let file = dir.join("dataset.json");
        if !file.is_file() {
            continue;
        }
        let dataset: Dataset = read_json(&file)?;
        let mut documents: Vec<Document> = Vec::new();
        if let Ok(docs) = fs::read_dir(dir.join("documents")) {
            for doc in docs.flatten() {
                let path = doc.path();
                if path.extension().is_some_and(|e| e == "json")
                    && !path
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                {
                    documents.push(read_json(&path)?);
                }
            }
        }
        documents.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        let hits = if dir.join("hits.json").is_file() {
            read_json(&dir.join("hits.json"))?
        } else {
            HashMap::new()
        };
        out.push(Stored {
            dataset,
            documents,
            hits,
        });
    }
    Ok(out)
}
