//! A dataset made from another: a duplicate (its settings and documents) or one from a template
//! (its settings alone). Dify's SDK asks both (`duplicate_dataset`, `create_dataset_from_template`);
//! Atlas's templates are its datasets, named by their name or id.
//!
//! The copy's documents and segments get ids of their own (an id names one thing, whichever
//! dataset a client reaches it through), and keep their source's vectors: nothing is embedded
//! again. Its documents are written before its dataset file, which is what makes a dataset
//! kept, so a copy cut short leaves nothing a reader would see.

use std::collections::HashMap;
use std::sync::Arc;

use atlas_progress::Quiet;
use atlas_search::Vectors;

use crate::error::{self, KbError};
use crate::model::{self, Dataset, Document};
use crate::{KnowledgeBase, Snapshot, build, store};

/// What a new dataset takes from the one it is made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Copied {
    /// Its settings (description, metadata fields, built-in fields, tags) and documents.
    Everything,
    /// Its settings alone: a dataset made from a template.
    Settings,
}

impl KnowledgeBase {
    /// A new dataset named `name` made from dataset `source` (its id), with a new id and API
    /// key; `description`, when given, instead of the source's.
    pub fn copy_dataset(
        &self,
        source: &str,
        name: &str,
        description: Option<&str>,
        copied: Copied,
    ) -> Result<Dataset, KbError> {
        let name = error::valid_name(
            name,
            "a dataset name",
            atlas_api::dify::limits::DATASET_NAME,
        )?;
        let _writing = self.write_turn()?;
        let from = self.snapshot(source)?;
        let dataset = Dataset {
            id: model::new_id(),
            name: name.to_string(),
            description: description.unwrap_or(&from.dataset.description).to_string(),
            api_key: format!("dataset-{}", uuid::Uuid::new_v4().simple()),
            created_at: model::now(),
            metadata_fields: from.dataset.metadata_fields.clone(),
            tag_ids: from.dataset.tag_ids.clone(),
            built_in_field_enabled: from.dataset.built_in_field_enabled,
        };
        let (documents, ready) = match copied {
            Copied::Everything => documents_of(&from),
            Copied::Settings => (Vec::new(), HashMap::new()),
        };
        let written = documents.iter().try_for_each(|doc| {
            store::write_json(
                self.files.as_ref(),
                &store::document_file(&dataset.id, &doc.id),
                doc,
            )
        });
        let written = written.and_then(|()| {
            store::write_json(
                self.files.as_ref(),
                &store::dataset_file(&dataset.id),
                &dataset,
            )
        });
        if let Err(e) = written {
            // What was written is no dataset yet: take it away.
            let _ = store::remove(self.files.as_ref(), &dataset.id);
            return Err(e);
        }
        let snapshot = build(
            dataset.clone(),
            documents,
            Arc::default(),
            self.embedder.as_ref(),
            (None, &ready),
            &Quiet,
        )?;
        self.datasets
            .write()
            .insert(dataset.id.clone(), Arc::new(snapshot));
        Ok(dataset)
    }

    /// The id of the dataset a template names: its id, or its name when one dataset alone has
    /// it.
    pub fn template(&self, named: &str) -> Result<String, KbError> {
        let datasets = self.datasets.read();
        if let Some(snapshot) = datasets.get(named) {
            return Ok(snapshot.dataset.id.clone());
        }
        let mut found = datasets.values().filter(|s| s.dataset.name == named);
        match (found.next(), found.next()) {
            (Some(one), None) => Ok(one.dataset.id.clone()),
            // The request is fine; the datasets as they are make its name ambiguous.
            (Some(_), Some(_)) => Err(KbError::Conflict(format!(
                "several datasets are named {named:?}: name the template by its id"
            ))),
            (None, _) => Err(KbError::DatasetNotFound),
        }
    }
}

/// `from`'s documents with new ids, and their segments' vectors by the copies' ids.
fn documents_of(from: &Snapshot) -> (Vec<Document>, HashMap<String, Vectors>) {
    let entries: HashMap<(usize, usize), usize> = from
        .locations
        .iter()
        .enumerate()
        .map(|(entry, &location)| (location, entry))
        .collect();
    let mut ready = HashMap::new();
    let documents = from
        .documents
        .iter()
        .enumerate()
        .map(|(d, source)| {
            let mut copy = source.clone();
            copy.id = model::new_id();
            for (s, segment) in copy.segments.iter_mut().enumerate() {
                segment.id = model::new_id();
                let vectors = entries.get(&(d, s)).and_then(|&e| from.index.vectors(e));
                if let Some(vectors) = vectors {
                    ready.insert(segment.id.clone(), vectors);
                }
            }
            copy
        })
        .collect();
    (documents, ready)
}
