//! Datasets and documents: what a Dify client uses to fill a knowledge base on a running server.
//!
//! Indexing is synchronous here: a document is split, embedded and durable when the answer
//! comes back, so its `indexing_status` is already `completed` and its `batch` is its own id.

use atlas_api::dify::{
    self, BatchStatus, CreateByTextRequest, CreatedDataset, Dataset, DifyError, Document,
    DocumentPath, DocumentSettings, IndexingStatuses, NoAnswer, Page, PageQuery,
    UpdateByTextRequest, UpdateDatasetRequest, UploadForm, WrittenDocument,
};
use atlas_api::routes::Nothing;
use atlas_kb::Copied;
use atlas_kb::split::SourceKind;

use super::{Admitted, Datasets, Serve, holds, page, shapes};

impl Datasets {
    fn dataset_answer(&self, id: &str) -> Result<Dataset, DifyError> {
        Ok(shapes::dataset(&self.kb.dataset_summary(id)?, &self.kb))
    }

    /// Whether dataset `id` shows the built-in metadata fields on its documents.
    fn shows_built_in(&self, id: &str) -> bool {
        self.kb.dataset(id).is_ok_and(|d| d.built_in_field_enabled)
    }

    /// The answer to a document's write: the document as it now is, and its batch (its id).
    fn written(&self, dataset: &str, id: &str) -> Result<WrittenDocument, DifyError> {
        let (position, summary) = self.kb.document(dataset, id)?;
        let document = shapes::document(&summary, position, self.shows_built_in(dataset));
        Ok(WrittenDocument {
            batch: summary.id,
            document,
        })
    }

    /// Adds `upload` to `dataset`, or replaces document `replacing` (the route's, or the upload's
    /// `original_document_id`) with it, keeping its name and metadata when the upload does not
    /// give them.
    fn write(
        &self,
        dataset: &str,
        replacing: Option<String>,
        upload: Upload,
    ) -> Result<WrittenDocument, DifyError> {
        let replacing = replacing.or(upload.settings.original_document_id);
        let kind = upload.settings.kind.map(SourceKind::from);
        let Some(bytes) = upload.bytes else {
            return match (replacing, upload.name) {
                // A new name alone: the content stays.
                (Some(id), Some(name)) => {
                    let renamed = self.kb.rename_document(dataset, &id, &name)?;
                    self.written(dataset, &renamed.id)
                }
                _ => Err(DifyError::invalid("text is required and must be a string")),
            };
        };
        let summary = match replacing {
            None => {
                let name = upload
                    .name
                    .ok_or_else(|| DifyError::invalid("name is required and must be a string"))?;
                let metadata = upload.settings.doc_metadata.unwrap_or_default();
                self.kb
                    .add_document(dataset, &name, &bytes, kind, metadata)?
            }
            Some(id) => {
                let (_, old) = self.kb.document(dataset, &id)?;
                let name = upload.name.unwrap_or(old.name);
                let metadata = upload.settings.doc_metadata.unwrap_or(old.metadata);
                self.kb
                    .replace_document(dataset, &id, &name, &bytes, kind, metadata)?
            }
        };
        self.written(dataset, &summary.id)
    }
}

/// A document to write: its name, bytes and settings, from a JSON body or an upload form.
struct Upload {
    name: Option<String>,
    bytes: Option<Vec<u8>>,
    settings: DocumentSettings,
}

impl Upload {
    /// A form's upload: the settings' name, else the file's.
    fn of_form(form: UploadForm) -> Upload {
        Upload {
            name: form.settings.name.or(form.file_name),
            bytes: form.file,
            settings: form.settings.settings,
        }
    }
}

impl Serve<dify::CreateDataset> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::CreateDataset>,
        _: Nothing,
        body: dify::CreateDatasetRequest,
    ) -> Result<CreatedDataset, DifyError> {
        let made = self
            .kb
            .create_dataset(&body.name, body.description.as_deref().unwrap_or_default())?;
        self.created(made)
    }
}

impl Datasets {
    /// A dataset just made, as Dify answers it, with its key.
    fn created(&self, made: atlas_kb::Dataset) -> Result<CreatedDataset, DifyError> {
        Ok(CreatedDataset {
            dataset: self.dataset_answer(&made.id)?,
            api_key: made.api_key,
        })
    }
}

impl Serve<dify::DuplicateDataset> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DuplicateDataset>,
        _: Nothing,
        body: dify::DuplicateDatasetRequest,
    ) -> Result<CreatedDataset, DifyError> {
        let source = &admitted.path.dataset_id;
        let made = self
            .kb
            .copy_dataset(source, &body.name, None, Copied::Everything)?;
        self.created(made)
    }
}

impl Serve<dify::CreateFromTemplate> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::CreateFromTemplate>,
        _: Nothing,
        body: dify::FromTemplateRequest,
    ) -> Result<CreatedDataset, DifyError> {
        // Creating a dataset takes the server token, which opens every dataset: any may be a
        // template.
        let template = self.kb.template(&body.template_name)?;
        let description = body.description.as_deref();
        let made = self
            .kb
            .copy_dataset(&template, &body.name, description, Copied::Settings)?;
        self.created(made)
    }
}

impl Serve<dify::ListDatasets> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::ListDatasets>,
        query: PageQuery,
        _: Nothing,
    ) -> Result<Page<Dataset>, DifyError> {
        page(self.kb.datasets(), query.page, query.limit, |d| {
            shapes::dataset(d, &self.kb)
        })
    }
}

impl Serve<dify::GetDataset> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::GetDataset>,
        _: Nothing,
        _: Nothing,
    ) -> Result<Dataset, DifyError> {
        self.dataset_answer(&admitted.path.dataset_id)
    }
}

impl Serve<dify::UpdateDataset> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::UpdateDataset>,
        _: Nothing,
        body: UpdateDatasetRequest,
    ) -> Result<Dataset, DifyError> {
        let summary = self.kb.update_dataset(
            &admitted.path.dataset_id,
            body.name.as_deref(),
            body.description.as_deref(),
        )?;
        Ok(shapes::dataset(&summary, &self.kb))
    }
}

impl Serve<dify::DeleteDataset> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DeleteDataset>,
        _: Nothing,
        _: Nothing,
    ) -> Result<NoAnswer, DifyError> {
        self.kb.delete_dataset(&admitted.path.dataset_id)?;
        Ok(NoAnswer {})
    }
}

impl Serve<dify::ListDocuments> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::ListDocuments>,
        query: PageQuery,
        _: Nothing,
    ) -> Result<Page<Document>, DifyError> {
        let dataset = &admitted.path.dataset_id;
        let documents: Vec<_> = self
            .kb
            .documents(dataset)?
            .into_iter()
            .enumerate()
            .filter(|(_, d)| holds(&d.name, &query.keyword))
            .collect();
        let built_in = self.shows_built_in(dataset);
        page(documents, query.page, query.limit, |(i, d)| {
            shapes::document(d, i + 1, built_in)
        })
    }
}

impl Serve<dify::CreateByText> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::CreateByText>,
        _: Nothing,
        body: CreateByTextRequest,
    ) -> Result<WrittenDocument, DifyError> {
        let upload = Upload {
            name: Some(body.name),
            bytes: Some(body.text.into_bytes()),
            settings: body.settings,
        };
        self.write(&admitted.path.dataset_id, None, upload)
    }
}

impl Serve<dify::CreateByFile> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::CreateByFile>,
        _: Nothing,
        form: UploadForm,
    ) -> Result<WrittenDocument, DifyError> {
        let mut upload = Upload::of_form(form);
        if upload.bytes.is_none() {
            return Err(DifyError::invalid(
                "the form has no file field (Dify's no_file_uploaded)",
            ));
        }
        // A new document is named after its file; a file sent without a name is "untitled"
        // (one that replaces a document keeps that document's name).
        if upload.settings.original_document_id.is_none() {
            upload.name.get_or_insert_with(|| "untitled".to_string());
        }
        self.write(&admitted.path.dataset_id, None, upload)
    }
}

impl Serve<dify::GetDocument> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::GetDocument>,
        _: Nothing,
        _: Nothing,
    ) -> Result<Document, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = &admitted.path;
        let (position, d) = self.kb.document(dataset_id, document_id)?;
        Ok(shapes::document(
            &d,
            position,
            self.shows_built_in(dataset_id),
        ))
    }
}

impl Serve<dify::DeleteDocument> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DeleteDocument>,
        _: Nothing,
        _: Nothing,
    ) -> Result<NoAnswer, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = &admitted.path;
        self.kb.delete_document(dataset_id, document_id)?;
        Ok(NoAnswer {})
    }
}

impl Serve<dify::IndexingStatus> for Datasets {
    /// A batch here is one document, indexed before its create call answered.
    fn serve(
        &self,
        admitted: Admitted<dify::IndexingStatus>,
        _: Nothing,
        _: Nothing,
    ) -> Result<IndexingStatuses, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = &admitted.path;
        let (_, d) = self.kb.document(dataset_id, document_id)?;
        let at = d.created_at;
        Ok(IndexingStatuses {
            data: vec![BatchStatus {
                id: d.id,
                indexing_status: "completed".into(),
                processing_started_at: at,
                parsing_completed_at: at,
                cleaning_completed_at: at,
                splitting_completed_at: at,
                completed_at: at,
                paused_at: None,
                error: None,
                stopped_at: None,
                completed_segments: d.segment_count as u64,
                total_segments: d.segment_count as u64,
            }],
        })
    }
}

impl Serve<dify::UpdateByText> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::UpdateByText>,
        _: Nothing,
        body: UpdateByTextRequest,
    ) -> Result<WrittenDocument, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = admitted.path;
        let upload = Upload {
            name: body.name,
            bytes: body.text.map(String::into_bytes),
            settings: body.settings,
        };
        self.write(&dataset_id, Some(document_id), upload)
    }
}

impl Serve<dify::UpdateByFile> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::UpdateByFile>,
        _: Nothing,
        form: UploadForm,
    ) -> Result<WrittenDocument, DifyError> {
        let upload = Upload::of_form(form);
        if upload.bytes.is_none() {
            return Err(DifyError::invalid(
                "the form has no file field (Dify's no_file_uploaded)",
            ));
        }
        let DocumentPath {
            dataset_id,
            document_id,
        } = admitted.path;
        self.write(&dataset_id, Some(document_id), upload)
    }
}
