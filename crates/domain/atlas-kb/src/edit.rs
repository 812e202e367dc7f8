//! Edits short of a whole document: a dataset's name and description, a document's segments one
//! by one, and the metadata fields a dataset declares with the values its documents hold (Dify's
//! segment and metadata APIs, which admin scripts use to correct a knowledge base in place).
//!
//! Each edit rewrites the one document (or the dataset file) it touches and publishes a new
//! snapshot; segments it adds or changes are embedded before the write lock is taken, as whole
//! documents are, and every other segment keeps its vectors.

use std::sync::Arc;

use crate::model::{Dataset, Document, MetadataField, Segment};
use crate::{
    DatasetSummary, DocumentSummary, KbError, KnowledgeBase, Snapshot, error, model, split, store,
};

/// A segment as a client writes it: Dify's `{content, answer?, keywords?}`. With an answer, the
/// content is the question searched and the answer what a hit returns.
#[derive(Debug, Clone, Default)]
pub struct SegmentInput {
    /// The text, or the question of a pair.
    pub content: String,
    /// The answer of a question/answer pair.
    pub answer: Option<String>,
    /// Keywords given by hand (else the segment's own words).
    pub keywords: Option<Vec<String>>,
}

/// The most segments one call may add.
pub const MAX_SEGMENTS_PER_CALL: usize = atlas_api::dify::limits::SEGMENTS_PER_CALL;

impl SegmentInput {
    /// The stored segment (position set when it is placed).
    fn into_segment(self, id: String) -> Result<Segment, KbError> {
        let content = self.content.trim().to_string();
        if content.is_empty() {
            return Err(error::invalid("a segment's content must not be empty"));
        }
        let answer = self
            .answer
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty());
        let (question, content) = match answer {
            Some(answer) => (Some(content), answer),
            None => (None, content),
        };
        if content.chars().count() > split::MAX_SEGMENT_CHARS * 4 {
            return Err(error::invalid(format!(
                "a segment is at most {} characters",
                split::MAX_SEGMENT_CHARS * 4
            )));
        }
        let keywords = match self.keywords {
            Some(k) => k.into_iter().filter(|k| !k.trim().is_empty()).collect(),
            None => split::keywords(question.as_deref().unwrap_or(&content)),
        };
        Ok(Segment {
            id,
            position: 0,
            word_count: content.chars().count(),
            content,
            question,
            keywords,
        })
    }
}

/// A metadata field's name, trimmed, if it is 1 to 64 characters.
fn field_name(name: &str) -> Result<&str, KbError> {
    error::valid_name(
        name,
        "a metadata field's name",
        atlas_api::dify::limits::FIELD_NAME,
    )
}

/// A conflict if another field than `except` of the dataset has this name.
fn refuse_taken(dataset: &Dataset, name: &str, except: Option<&str>) -> Result<(), KbError> {
    if dataset
        .metadata_fields
        .iter()
        .any(|f| f.name == name && Some(f.id.as_str()) != except)
    {
        return Err(KbError::Conflict(format!("metadata field {name:?} exists")));
    }
    Ok(())
}

/// What a metadata field's values are: Dify's `string`, `number` and `time`.
fn valid_kind(kind: &str) -> bool {
    matches!(kind, "string" | "number" | "time")
}

impl KnowledgeBase {
    /// The segments of one document, in order, each with its hit count.
    pub fn segments(&self, dataset: &str, document: &str) -> Result<Vec<(Segment, u64)>, KbError> {
        let snapshot = self.snapshot(dataset)?;
        snapshot
            .documents
            .iter()
            .find(|d| d.id == document)
            .map(|d| {
                d.segments
                    .iter()
                    .map(|s| (s.clone(), snapshot.hits.count(&s.id)))
                    .collect()
            })
            .ok_or(KbError::DocumentNotFound)
    }

    /// Appends segments to a document; they are searchable when this returns.
    pub fn add_segments(
        &self,
        dataset: &str,
        document: &str,
        inputs: Vec<SegmentInput>,
    ) -> Result<Vec<(Segment, u64)>, KbError> {
        if inputs.is_empty() || inputs.len() > MAX_SEGMENTS_PER_CALL {
            return Err(error::invalid(format!(
                "give 1 to {MAX_SEGMENTS_PER_CALL} segments"
            )));
        }
        let prepared = inputs
            .into_iter()
            .map(|input| input.into_segment(model::new_id()))
            .collect::<Result<Vec<_>, _>>()?;
        let ids: Vec<String> = prepared.iter().map(|s| s.id.clone()).collect();
        self.edit_document(dataset, document, prepared, |doc, prepared| {
            if doc.segments.len() + prepared.len() > crate::MAX_DOCUMENT_SEGMENTS {
                return Err(KbError::TooManySegments {
                    count: doc.segments.len() + prepared.len(),
                    limit: crate::MAX_DOCUMENT_SEGMENTS,
                });
            }
            doc.segments.extend(prepared);
            Ok(())
        })?;
        let segments = self.segments(dataset, document)?;
        Ok(segments
            .into_iter()
            .filter(|(s, _)| ids.contains(&s.id))
            .collect())
    }

    /// Replaces a segment's content (and answer and keywords), keeping its id and place.
    pub fn update_segment(
        &self,
        dataset: &str,
        document: &str,
        segment: &str,
        input: SegmentInput,
    ) -> Result<Segment, KbError> {
        let replacement = input.into_segment(segment.to_string())?;
        self.edit_document(dataset, document, vec![replacement], |doc, mut new| {
            let slot = doc
                .segments
                .iter_mut()
                .find(|s| s.id == segment)
                .ok_or(KbError::SegmentNotFound)?;
            let mut replacement = new.remove(0);
            replacement.position = slot.position;
            *slot = replacement.clone();
            Ok(replacement)
        })
    }

    /// Removes a segment from its document (a document keeps at least one).
    pub fn delete_segment(
        &self,
        dataset: &str,
        document: &str,
        segment: &str,
    ) -> Result<(), KbError> {
        self.edit_document(dataset, document, vec![], |doc, _| {
            let at = doc
                .segments
                .iter()
                .position(|s| s.id == segment)
                .ok_or(KbError::SegmentNotFound)?;
            if doc.segments.len() == 1 {
                return Err(error::invalid(
                    "this is the document's last segment: delete the document instead",
                ));
            }
            doc.segments.remove(at);
            Ok(())
        })
    }

    /// Renames a dataset or changes its description (what is not given stays).
    pub fn update_dataset(
        &self,
        id: &str,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<DatasetSummary, KbError> {
        let name = name
            .map(|n| error::valid_name(n, "a dataset name", atlas_api::dify::limits::DATASET_NAME))
            .transpose()?;
        self.edit_dataset(id, |dataset, _| {
            if let Some(name) = name {
                dataset.name = name.to_string();
            }
            if let Some(description) = description {
                dataset.description = description.to_string();
            }
            Ok(())
        })?;
        self.dataset_summary(id)
    }

    /// The metadata fields dataset `id` declares, each with how many documents hold a value.
    pub fn metadata_fields(&self, id: &str) -> Result<Vec<(MetadataField, usize)>, KbError> {
        let snapshot = self.snapshot(id)?;
        Ok(snapshot
            .dataset
            .metadata_fields
            .iter()
            .map(|f| {
                let count = snapshot
                    .documents
                    .iter()
                    .filter(|d| d.metadata.contains_key(&f.name))
                    .count();
                (f.clone(), count)
            })
            .collect())
    }

    /// Declares a metadata field (`string`, `number` or `time`) documents may then hold.
    pub fn create_metadata_field(
        &self,
        id: &str,
        name: &str,
        kind: &str,
    ) -> Result<MetadataField, KbError> {
        let name = field_name(name)?;
        if !valid_kind(kind) {
            return Err(error::invalid(format!(
                "a metadata field's type is string, number or time, not {kind:?}"
            )));
        }
        self.edit_dataset(id, |dataset, _| {
            refuse_taken(dataset, name, None)?;
            let field = MetadataField {
                id: model::new_id(),
                name: name.to_string(),
                kind: kind.to_string(),
            };
            dataset.metadata_fields.push(field.clone());
            Ok(field)
        })
    }

    /// Renames a metadata field, in the documents' values too.
    pub fn rename_metadata_field(
        &self,
        id: &str,
        field: &str,
        name: &str,
    ) -> Result<MetadataField, KbError> {
        let name = field_name(name)?;
        self.edit_dataset(id, |dataset, documents| {
            refuse_taken(dataset, name, Some(field))?;
            let declared = dataset
                .metadata_fields
                .iter_mut()
                .find(|f| f.id == field)
                .ok_or(KbError::MetadataFieldNotFound)?;
            let old = std::mem::replace(&mut declared.name, name.to_string());
            for doc in documents.iter_mut() {
                if let Some(value) = doc.metadata.remove(&old) {
                    doc.metadata.insert(name.to_string(), value);
                }
            }
            Ok(declared.clone())
        })
    }

    /// Removes a metadata field and the documents' values of it.
    pub fn delete_metadata_field(&self, id: &str, field: &str) -> Result<(), KbError> {
        self.edit_dataset(id, |dataset, documents| {
            let at = dataset
                .metadata_fields
                .iter()
                .position(|f| f.id == field)
                .ok_or(KbError::MetadataFieldNotFound)?;
            let removed = dataset.metadata_fields.remove(at);
            for doc in documents.iter_mut() {
                doc.metadata.remove(&removed.name);
            }
            Ok(())
        })
    }

    /// Sets documents' metadata: for each document, its values by field id (Dify's
    /// `operation_data`), replacing the values it held for declared fields.
    pub fn set_document_metadata(
        &self,
        id: &str,
        values: Vec<(String, Vec<(String, serde_json::Value)>)>,
    ) -> Result<(), KbError> {
        self.edit_dataset(id, |dataset, documents| {
            for (document, fields) in &values {
                let doc = documents
                    .iter_mut()
                    .find(|d| &d.id == document)
                    .ok_or(KbError::DocumentNotFound)?;
                for declared in &dataset.metadata_fields {
                    doc.metadata.remove(&declared.name);
                }
                for (field, value) in fields {
                    let declared = dataset
                        .metadata_fields
                        .iter()
                        .find(|f| &f.id == field)
                        .ok_or(KbError::MetadataFieldNotFound)?;
                    doc.metadata.insert(declared.name.clone(), value.clone());
                }
            }
            Ok(())
        })
    }

    /// Renames a document, its content unchanged (Dify's update-by-text with a name alone).
    pub fn rename_document(
        &self,
        id: &str,
        document: &str,
        name: &str,
    ) -> Result<DocumentSummary, KbError> {
        let name = error::valid_name(
            name,
            "a document name",
            atlas_api::dify::limits::DOCUMENT_NAME,
        )?;
        self.edit_dataset(id, |_, documents| {
            editable(documents, document)?.name = name.to_string();
            Ok(())
        })?;
        self.document(id, document).map(|(_, summary)| summary)
    }

    /// Shows or hides Dify's built-in metadata fields on dataset `id`'s documents.
    pub fn set_built_in_fields(&self, id: &str, enabled: bool) -> Result<(), KbError> {
        self.edit_dataset(id, |dataset, _| {
            dataset.built_in_field_enabled = enabled;
            Ok(())
        })
    }

    /// Enables, disables, archives or un-archives documents of dataset `id`, all or none: an
    /// unknown id changes nothing.
    pub fn set_documents_status(
        &self,
        id: &str,
        documents: &[String],
        status: DocumentStatus,
    ) -> Result<(), KbError> {
        self.edit_dataset(id, |_, held| {
            if documents.iter().any(|d| !held.iter().any(|h| &h.id == d)) {
                return Err(KbError::DocumentNotFound);
            }
            for doc in held.iter_mut().filter(|h| documents.contains(&h.id)) {
                match status {
                    DocumentStatus::Enable => doc.enabled = true,
                    DocumentStatus::Disable => doc.enabled = false,
                    DocumentStatus::Archive => doc.archived = true,
                    DocumentStatus::UnArchive => doc.archived = false,
                }
            }
            Ok(())
        })
    }

    /// Applies `edit` to one document under the write lock, `prepared` (new or changed
    /// segments) embedded before it; renumbers, writes the document and publishes.
    fn edit_document<T>(
        &self,
        dataset: &str,
        document: &str,
        prepared: Vec<Segment>,
        edit: impl FnOnce(&mut Document, Vec<Segment>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        if !self.writable {
            return Err(KbError::ReadOnly);
        }
        self.snapshot(dataset)?;
        let ready = self.embed_segments(&prepared, &atlas_progress::Quiet)?;
        let _writing = self.write_turn()?;
        let old = self.snapshot(dataset)?;
        let mut documents = old.documents.clone();
        let doc = editable(&mut documents, document)?;
        let value = edit(doc, prepared)?;
        for (i, segment) in doc.segments.iter_mut().enumerate() {
            segment.position = i + 1;
        }
        let written = doc.clone();
        let snapshot = self.rebuild(&old, documents, &ready)?;
        store::write_json(
            self.files.as_ref(),
            &store::document_file(dataset, document),
            &written,
        )?;
        self.publish(dataset, snapshot);
        Ok(value)
    }

    /// Applies `edit` to a dataset's description and its documents' metadata (no segment
    /// changes, so nothing is embedded or re-indexed); writes what changed and publishes.
    pub(crate) fn edit_dataset<T>(
        &self,
        id: &str,
        edit: impl FnOnce(&mut Dataset, &mut Vec<Document>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        let _writing = self.write_turn()?;
        let old = self.snapshot(id)?;
        let mut dataset = old.dataset.clone();
        let mut documents = old.documents.clone();
        let value = edit(&mut dataset, &mut documents)?;
        let changed: Vec<&Document> = documents
            .iter()
            .zip(&old.documents)
            .filter(|(new, old)| {
                new.name != old.name
                    || new.metadata != old.metadata
                    || new.enabled != old.enabled
                    || new.archived != old.archived
            })
            .map(|(new, _)| new)
            .collect();
        for doc in changed {
            store::write_json(self.files.as_ref(), &store::document_file(id, &doc.id), doc)?;
        }
        store::write_json(self.files.as_ref(), &store::dataset_file(id), &dataset)?;
        // No segment changed: the index and where each entry lives stay as they were.
        let snapshot = Snapshot {
            dataset,
            documents,
            locations: old.locations.clone(),
            index: old.index.clone(),
            hits: old.hits.clone(),
            vectors_kept: old
                .vectors_kept
                .load(std::sync::atomic::Ordering::Relaxed)
                .into(),
        };
        self.publish(id, snapshot);
        Ok(value)
    }

    pub(crate) fn publish(&self, id: &str, snapshot: Snapshot) {
        self.datasets
            .write()
            .insert(id.to_string(), Arc::new(snapshot));
    }
}

/// Document `id` among `documents`, to change: not there, or archived, is an error.
pub(crate) fn editable<'a>(
    documents: &'a mut [Document],
    id: &str,
) -> Result<&'a mut Document, KbError> {
    let doc = documents
        .iter_mut()
        .find(|d| d.id == id)
        .ok_or(KbError::DocumentNotFound)?;
    if doc.archived {
        return Err(KbError::ArchivedDocument);
    }
    Ok(doc)
}

/// What Dify's `documents/status/{action}` does to documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentStatus {
    /// Retrieval may return it.
    Enable,
    /// Retrieval never returns it; it stays editable.
    Disable,
    /// Retrieval never returns it and it cannot be changed.
    Archive,
    /// Back from the archive, with the enabled state it had.
    UnArchive,
}

impl From<atlas_api::dify::DocumentAction> for DocumentStatus {
    fn from(action: atlas_api::dify::DocumentAction) -> Self {
        use atlas_api::dify::DocumentAction;
        match action {
            DocumentAction::Enable => DocumentStatus::Enable,
            DocumentAction::Disable => DocumentStatus::Disable,
            DocumentAction::Archive => DocumentStatus::Archive,
            DocumentAction::UnArchive => DocumentStatus::UnArchive,
        }
    }
}

impl DocumentStatus {
    /// The status of Dify's action name (`enable`, `disable`, `archive`, `un_archive`).
    pub fn named(action: &str) -> Option<DocumentStatus> {
        Some(match action {
            "enable" => DocumentStatus::Enable,
            "disable" => DocumentStatus::Disable,
            "archive" => DocumentStatus::Archive,
            "un_archive" => DocumentStatus::UnArchive,
            _ => return None,
        })
    }
}
