//! Edits short of a whole document: a document's segments (list, add, update, delete), the
//! dataset's metadata fields with the values its documents hold, and documents' status.

use atlas_api::dify::{
    self, AddSegmentsRequest, AddedSegments, BuiltInField, BuiltInFieldList, CountedField,
    CreateFieldRequest, DifyError, DocumentIdsRequest, DocumentMetadataRequest, DocumentPath,
    Field, FieldList, FieldPath, NoAnswer, RenameFieldRequest, SegmentInput, SegmentPage,
    SegmentPath, SegmentQuery, StatusPath, Success, Switch, SwitchPath, UpdateSegmentRequest,
    UpdatedSegment,
};
use atlas_api::routes::Nothing;
use atlas_kb::{BUILT_IN_FIELDS, DocumentStatus, MetadataField};

use super::{Admitted, Datasets, Serve, holds, page, shapes};

/// Dify's segment fields. `enabled: false` is refused: Atlas keeps no disabled segments
/// (delete one instead).
fn segment_input(input: SegmentInput) -> Result<atlas_kb::SegmentInput, DifyError> {
    if input.enabled == Some(false) {
        return Err(DifyError::invalid(
            "disabling a segment is not supported: delete it instead",
        ));
    }
    Ok(atlas_kb::SegmentInput {
        content: input.content,
        answer: input.answer,
        keywords: input.keywords,
    })
}

fn field(field: MetadataField) -> Field {
    Field {
        id: field.id,
        name: field.name,
        kind: field.kind,
    }
}

impl Datasets {
    /// A document's creation time, which its segments' times are.
    fn created_at(&self, dataset: &str, document: &str) -> Result<i64, DifyError> {
        Ok(self.kb.document(dataset, document)?.1.created_at)
    }
}

impl Serve<dify::ListSegments> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::ListSegments>,
        query: SegmentQuery,
        _: Nothing,
    ) -> Result<SegmentPage, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = &admitted.path;
        let created_at = self.created_at(dataset_id, document_id)?;
        let mut segments = self.kb.segments(dataset_id, document_id)?;
        let form = shapes::doc_form(segments.iter().map(|(s, _)| s));
        // Every segment here is indexed when its write answers.
        if query
            .status
            .as_deref()
            .is_some_and(|s| !s.is_empty() && s != "completed")
        {
            segments.clear();
        }
        segments.retain(|(s, _)| {
            holds(&s.content, &query.keyword)
                || s.question
                    .as_deref()
                    .is_some_and(|q| holds(q, &query.keyword))
        });
        let page = page(segments, query.page, query.limit, |(s, hits)| {
            shapes::segment(s, document_id, *hits, created_at)
        })?;
        Ok(SegmentPage {
            page,
            doc_form: form,
        })
    }
}

impl Serve<dify::AddSegments> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::AddSegments>,
        _: Nothing,
        body: AddSegmentsRequest,
    ) -> Result<AddedSegments, DifyError> {
        let DocumentPath {
            dataset_id,
            document_id,
        } = &admitted.path;
        let inputs = body
            .segments
            .into_iter()
            .map(segment_input)
            .collect::<Result<Vec<_>, _>>()?;
        let added = self.kb.add_segments(dataset_id, document_id, inputs)?;
        let created_at = self.created_at(dataset_id, document_id)?;
        Ok(AddedSegments {
            doc_form: shapes::doc_form(added.iter().map(|(s, _)| s)),
            data: added
                .iter()
                .map(|(s, hits)| shapes::segment(s, document_id, *hits, created_at))
                .collect(),
        })
    }
}

impl Serve<dify::UpdateSegment> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::UpdateSegment>,
        _: Nothing,
        body: UpdateSegmentRequest,
    ) -> Result<UpdatedSegment, DifyError> {
        let SegmentPath {
            dataset_id,
            document_id,
            segment_id,
        } = &admitted.path;
        let input = segment_input(body.segment)?;
        let updated = self
            .kb
            .update_segment(dataset_id, document_id, segment_id, input)?;
        let created_at = self.created_at(dataset_id, document_id)?;
        Ok(UpdatedSegment {
            doc_form: shapes::doc_form([&updated]),
            data: shapes::segment(&updated, document_id, 0, created_at),
        })
    }
}

impl Serve<dify::DeleteSegment> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DeleteSegment>,
        _: Nothing,
        _: Nothing,
    ) -> Result<NoAnswer, DifyError> {
        let SegmentPath {
            dataset_id,
            document_id,
            segment_id,
        } = &admitted.path;
        self.kb
            .delete_segment(dataset_id, document_id, segment_id)?;
        Ok(NoAnswer {})
    }
}

impl Serve<dify::ListFields> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::ListFields>,
        _: Nothing,
        _: Nothing,
    ) -> Result<FieldList, DifyError> {
        let dataset = &admitted.path.dataset_id;
        Ok(FieldList {
            doc_metadata: self
                .kb
                .metadata_fields(dataset)?
                .into_iter()
                .map(|(f, count)| CountedField {
                    field: field(f),
                    count: count as u64,
                })
                .collect(),
            built_in_field_enabled: self.kb.dataset(dataset)?.built_in_field_enabled,
        })
    }
}

impl Serve<dify::CreateField> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::CreateField>,
        _: Nothing,
        body: CreateFieldRequest,
    ) -> Result<Field, DifyError> {
        let made = self.kb.create_metadata_field(
            &admitted.path.dataset_id,
            &body.name,
            body.kind.as_str(),
        )?;
        Ok(field(made))
    }
}

impl Serve<dify::RenameField> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::RenameField>,
        _: Nothing,
        body: RenameFieldRequest,
    ) -> Result<Field, DifyError> {
        let FieldPath {
            dataset_id,
            metadata_id,
        } = &admitted.path;
        Ok(field(self.kb.rename_metadata_field(
            dataset_id,
            metadata_id,
            &body.name,
        )?))
    }
}

impl Serve<dify::DeleteField> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DeleteField>,
        _: Nothing,
        _: Nothing,
    ) -> Result<NoAnswer, DifyError> {
        let FieldPath {
            dataset_id,
            metadata_id,
        } = &admitted.path;
        self.kb.delete_metadata_field(dataset_id, metadata_id)?;
        Ok(NoAnswer {})
    }
}

impl Serve<dify::BuiltInFields> for Datasets {
    /// Dify's built-in metadata fields, which every document has a value of.
    fn serve(
        &self,
        _: Admitted<dify::BuiltInFields>,
        _: Nothing,
        _: Nothing,
    ) -> Result<BuiltInFieldList, DifyError> {
        Ok(BuiltInFieldList {
            fields: BUILT_IN_FIELDS
                .iter()
                .map(|(name, kind)| BuiltInField {
                    name: name.to_string(),
                    kind: kind.to_string(),
                })
                .collect(),
        })
    }
}

impl Serve<dify::SwitchBuiltInFields> for Datasets {
    /// Whether the dataset's documents show the built-in fields' values.
    fn serve(
        &self,
        admitted: Admitted<dify::SwitchBuiltInFields>,
        _: Nothing,
        _: Nothing,
    ) -> Result<Success, DifyError> {
        let SwitchPath { dataset_id, action } = &admitted.path;
        self.kb
            .set_built_in_fields(dataset_id, *action == Switch::Enable)?;
        Ok(Success::default())
    }
}

impl Serve<dify::SetDocumentsStatus> for Datasets {
    /// Enables, disables, archives or un-archives the documents, all or none.
    fn serve(
        &self,
        admitted: Admitted<dify::SetDocumentsStatus>,
        _: Nothing,
        body: DocumentIdsRequest,
    ) -> Result<Success, DifyError> {
        if body.document_ids.is_empty() {
            return Err(DifyError::invalid(
                "document_ids must name at least one document",
            ));
        }
        let StatusPath { dataset_id, action } = &admitted.path;
        self.kb.set_documents_status(
            dataset_id,
            &body.document_ids,
            DocumentStatus::from(*action),
        )?;
        Ok(Success::default())
    }
}

impl Serve<dify::SetDocumentMetadata> for Datasets {
    /// Dify's `operation_data`: `[{document_id, metadata_list: [{id, value, name}]}]`.
    fn serve(
        &self,
        admitted: Admitted<dify::SetDocumentMetadata>,
        _: Nothing,
        body: DocumentMetadataRequest,
    ) -> Result<Success, DifyError> {
        if body.operation_data.is_empty() {
            return Err(DifyError::invalid(
                "operation_data must list at least one document",
            ));
        }
        let values = body
            .operation_data
            .into_iter()
            .map(|d| {
                let fields = d
                    .metadata_list
                    .into_iter()
                    .map(|f| (f.id, f.value))
                    .collect();
                (d.document_id, fields)
            })
            .collect();
        self.kb
            .set_document_metadata(&admitted.path.dataset_id, values)?;
        Ok(Success::default())
    }
}
