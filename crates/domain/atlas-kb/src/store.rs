//! The folder a knowledge base lives in, one readable JSON file per thing:
//!
//! ```text
//! kb/<dataset id>/dataset.json            name, description, API key
//! kb/<dataset id>/documents/<doc id>.json  the document, its metadata and its segments
//! kb/<dataset id>/hits.json                hit counts per segment
//! ```
//!
//! The files are kept through [`Files`]: in the folder (every write to a temporary file that is
//! fsynced, renamed over the old one, and the folder fsynced: a write that returned has survived
//! a crash, and a reader never sees half a file), or in PostgreSQL beside the graph.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use atlas_store::files::{Files, LockFailure, lock_folder};
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

pub(crate) fn document_file(dataset: &str, document: &str) -> String {
    format!("{dataset}/documents/{document}.json")
}

pub(crate) fn dataset_file(id: &str) -> String {
    format!("{id}/dataset.json")
}

pub(crate) fn hits_file(id: &str) -> String {
    format!("{id}/hits.json")
}

pub(crate) fn write_json(
    files: &dyn Files,
    name: &str,
    value: &impl Serialize,
) -> Result<(), KbError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(KbError::Encode)?;
    Ok(files.write(name, &bytes)?)
}

pub(crate) fn read_json<T: DeserializeOwned>(
    files: &dyn Files,
    name: &str,
) -> Result<Option<T>, KbError> {
    let Some(bytes) = files.read(name)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|source| KbError::Damaged {
            name: name.to_string(),
            source,
        })
}

/// Removes a dataset (its id) or one file.
pub(crate) fn remove(files: &dyn Files, name: &str) -> Result<(), KbError> {
    Ok(files.remove(name)?)
}

/// Every dataset kept, documents in creation order.
pub(crate) fn load(files: &dyn Files) -> Result<Vec<Stored>, KbError> {
    let mut out = Vec::new();
    for name in files.list("")? {
        if let Some(id) = name
            .strip_suffix("/dataset.json")
            .filter(|id| !id.contains('/'))
            && let Some(stored) = load_one(files, id)?
        {
            out.push(stored);
        }
    }
    Ok(out)
}

/// The dataset `id` as kept, or `None` when it is not there (any more).
pub(crate) fn load_one(files: &dyn Files, id: &str) -> Result<Option<Stored>, KbError> {
    let Some(dataset) = read_json::<Dataset>(files, &dataset_file(id))? else {
        return Ok(None);
    };
    let mut documents: Vec<Document> = Vec::new();
    for name in files.list(&format!("{id}/documents"))? {
        if name.ends_with(".json")
            && let Some(doc) = read_json(files, &name)?
        {
            documents.push(doc);
        }
    }
    documents.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    let hits = read_json(files, &hits_file(id))?.unwrap_or_default();
    Ok(Some(Stored {
        dataset,
        documents,
        hits,
    }))
}
