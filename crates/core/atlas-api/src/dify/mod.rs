//! Dify's knowledge API, as Atlas serves it: the routes, their requests and answers in Dify's
//! shapes, and Dify's two error shapes.
//!
//! A phone agent's GET_KNOWLEDGE_DATA, Dify itself (through its External Knowledge API) and
//! Dify's clients use Atlas in place of a Dify server through these. The types say what the
//! server reads: Dify's clients send fields Atlas has no use for (`indexing_technique`,
//! `process_rule`), so unknown fields are ignored, and a `null` is a field not given.

mod answers;
mod error;
mod filter;
mod requests;

pub use answers::*;
pub use error::{DifyError, ExternalError};
pub use filter::{Condition, MetadataFilter, OPERATORS};
pub use requests::*;

use crate::routes::Nothing;

/// The limits of Dify's knowledge API as Atlas keeps them (the knowledge base checks them; the
/// schemas say them).
pub mod limits {
    /// A dataset's name, in characters.
    pub const DATASET_NAME: usize = 100;
    /// A document's name, in characters.
    pub const DOCUMENT_NAME: usize = 255;
    /// A tag's name, in characters.
    pub const TAG_NAME: usize = 50;
    /// A metadata field's name, in characters.
    pub const FIELD_NAME: usize = 64;
    /// A query, in characters.
    pub const QUERY_CHARS: usize = 250;
    /// The most records one search returns, on every face (the tool, Dify's retrieve, the
    /// External Knowledge API).
    pub const TOP_K: usize = 100;
    /// The records a search returns when not told.
    pub const DEFAULT_TOP_K: usize = 4;
    /// The most segments one call adds.
    pub const SEGMENTS_PER_CALL: usize = 1_000;
    /// The most items a page lists.
    pub const PAGE_LIMIT: usize = 100;
    /// The items a page lists when not told.
    pub const DEFAULT_PAGE_LIMIT: usize = 20;
}

crate::routes! {
    /// Dify's External Knowledge API.
    ExternalRetrieval Post "/retrieval" (Dataset, Json)
        "Dify's External Knowledge API: {knowledge_id, query, retrieval_setting, metadata_condition?} → {records}"
        Nothing, Nothing, ExternalRetrievalRequest => ExternalRecords | ExternalError;
    /// Retrieval.
    Retrieve Post "/v1/datasets/{dataset_id}/retrieve" (Dataset, Json)
        "Dify: retrieve {query, retrieval_model?} → {query, records}"
        DatasetPath, Nothing, RetrieveRequest => RetrieveAnswer | DifyError;
    /// Retrieval under Dify's other name.
    HitTesting Post "/v1/datasets/{dataset_id}/hit-testing" (Dataset, Json)
        "Dify: the same as retrieve"
        DatasetPath, Nothing, RetrieveRequest => RetrieveAnswer | DifyError;
    /// A new dataset.
    CreateDataset Post "/v1/datasets" (Server, Json)
        "Dify: create a dataset {name, description?} → the dataset and its api_key"
        Nothing, Nothing, CreateDatasetRequest => CreatedDataset | DifyError;
    /// A copy of a dataset.
    DuplicateDataset Post "/v1/datasets/{dataset_id}/duplicate" (Server, Json)
        "Dify's SDK: duplicate a dataset {name} → the copy (its settings and documents, with ids of their own) and its api_key"
        DatasetPath, Nothing, DuplicateDatasetRequest => CreatedDataset | DifyError;
    /// A dataset from a template.
    CreateFromTemplate Post "/v1/datasets/from-template" (Server, Json)
        "Dify's SDK: create a dataset from a template {template_name, name, description?} → the dataset and its api_key; a template is a dataset (its id, or its name), whose settings (description, metadata fields, built-in fields, tags) the new one takes without its documents"
        Nothing, Nothing, FromTemplateRequest => CreatedDataset | DifyError;
    /// The datasets.
    ListDatasets Get "/v1/datasets" (Server, None)
        "Dify: list datasets (page, limit)"
        Nothing, PageQuery, Nothing => Page<Dataset> | DifyError;
    /// A dataset.
    GetDataset Get "/v1/datasets/{dataset_id}" (Dataset, None)
        "Dify: a dataset"
        DatasetPath, Nothing, Nothing => Dataset | DifyError;
    /// A dataset's name or description changed.
    UpdateDataset Patch "/v1/datasets/{dataset_id}" (Dataset, Json)
        "Dify: update a dataset's name or description"
        DatasetPath, Nothing, UpdateDatasetRequest => Dataset | DifyError;
    /// A dataset deleted.
    DeleteDataset Delete "/v1/datasets/{dataset_id}" (Dataset, None, NoContent)
        "Dify: delete a dataset"
        DatasetPath, Nothing, Nothing => NoAnswer | DifyError;
    /// A dataset's documents.
    ListDocuments Get "/v1/datasets/{dataset_id}/documents" (Dataset, None)
        "Dify: list documents (keyword, page, limit)"
        DatasetPath, PageQuery, Nothing => Page<Document> | DifyError;
    /// A document from text.
    CreateByText Post "/v1/datasets/{dataset_id}/document/create-by-text"
        ["/v1/datasets/{dataset_id}/document/create_by_text"] (Dataset, Json)
        "Dify: add a document {name, text, kind?, doc_metadata?}"
        DatasetPath, Nothing, CreateByTextRequest => WrittenDocument | DifyError;
    /// A document from a file.
    CreateByFile Post "/v1/datasets/{dataset_id}/document/create-by-file"
        ["/v1/datasets/{dataset_id}/document/create_by_file"] (Dataset, Multipart)
        "Dify: add a document from a file (multipart: file, data)"
        DatasetPath, Nothing, UploadForm => WrittenDocument | DifyError;
    /// A document.
    GetDocument Get "/v1/datasets/{dataset_id}/documents/{document_id}" (Dataset, None)
        "Dify: a document"
        DocumentPath, Nothing, Nothing => Document | DifyError;
    /// A document deleted.
    DeleteDocument Delete "/v1/datasets/{dataset_id}/documents/{document_id}" (Dataset, None, NoContent)
        "Dify: delete a document"
        DocumentPath, Nothing, Nothing => NoAnswer | DifyError;
    /// A batch's indexing.
    IndexingStatus Get "/v1/datasets/{dataset_id}/documents/{document_id}/indexing-status" (Dataset, None)
        "Dify: indexing progress (a document is indexed when its create answers)"
        DocumentPath, Nothing, Nothing => IndexingStatuses | DifyError;
    /// A document's text or name replaced.
    UpdateByText Post "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-text"
        ["/v1/datasets/{dataset_id}/documents/{document_id}/update_by_text"] (Dataset, Json)
        "Dify: replace a document's text, its name, or both"
        DocumentPath, Nothing, UpdateByTextRequest => WrittenDocument | DifyError;
    /// A document replaced from a file.
    UpdateByFile Post "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-file"
        ["/v1/datasets/{dataset_id}/documents/{document_id}/update_by_file"] (Dataset, Multipart)
        "Dify: replace a document from a file (multipart)"
        DocumentPath, Nothing, UploadForm => WrittenDocument | DifyError;
    /// A document's segments.
    ListSegments Get "/v1/datasets/{dataset_id}/documents/{document_id}/segments" (Dataset, None)
        "Dify: a document's segments (keyword, status, page, limit)"
        DocumentPath, SegmentQuery, Nothing => SegmentPage | DifyError;
    /// Segments added to a document.
    AddSegments Post "/v1/datasets/{dataset_id}/documents/{document_id}/segments" (Dataset, Json)
        "Dify: add segments {segments: [{content, answer?, keywords?}]}"
        DocumentPath, Nothing, AddSegmentsRequest => AddedSegments | DifyError;
    /// A segment changed.
    UpdateSegment Post "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}" (Dataset, Json)
        "Dify: update a segment {segment: {content, answer?, keywords?}}"
        SegmentPath, Nothing, UpdateSegmentRequest => UpdatedSegment | DifyError;
    /// A segment deleted.
    DeleteSegment Delete "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}" (Dataset, None, NoContent)
        "Dify: delete a segment"
        SegmentPath, Nothing, Nothing => NoAnswer | DifyError;
    /// A dataset's metadata fields.
    ListFields Get "/v1/datasets/{dataset_id}/metadata" (Dataset, None)
        "Dify: the dataset's metadata fields"
        DatasetPath, Nothing, Nothing => FieldList | DifyError;
    /// A metadata field declared.
    CreateField Post "/v1/datasets/{dataset_id}/metadata" (Dataset, Json)
        "Dify: declare a metadata field {type, name}"
        DatasetPath, Nothing, CreateFieldRequest => Field | DifyError;
    /// A metadata field renamed.
    RenameField Patch "/v1/datasets/{dataset_id}/metadata/{metadata_id}" (Dataset, Json)
        "Dify: rename a metadata field {name}"
        FieldPath, Nothing, RenameFieldRequest => Field | DifyError;
    /// A metadata field removed.
    DeleteField Delete "/v1/datasets/{dataset_id}/metadata/{metadata_id}" (Dataset, None, NoContent)
        "Dify: remove a metadata field"
        FieldPath, Nothing, Nothing => NoAnswer | DifyError;
    /// The built-in metadata fields.
    BuiltInFields Get "/v1/datasets/{dataset_id}/metadata/built-in" (Dataset, None)
        "Dify: the built-in metadata fields every document has"
        DatasetPath, Nothing, Nothing => BuiltInFieldList | DifyError;
    /// The built-in fields' values shown or hidden.
    SwitchBuiltInFields Post "/v1/datasets/{dataset_id}/metadata/built-in/{action}" (Dataset, None)
        "Dify: show (enable) or hide (disable) the built-in fields' values on documents"
        SwitchPath, Nothing, Nothing => Success | DifyError;
    /// Documents enabled, disabled, archived or un-archived.
    SetDocumentsStatus Patch "/v1/datasets/{dataset_id}/documents/status/{action}" (Dataset, Json)
        "Dify: enable, disable, archive or un_archive documents {document_ids}"
        StatusPath, Nothing, DocumentIdsRequest => Success | DifyError;
    /// Documents' metadata values.
    SetDocumentMetadata Post "/v1/datasets/{dataset_id}/documents/metadata" (Dataset, Json)
        "Dify: set documents' metadata values {operation_data}"
        DatasetPath, Nothing, DocumentMetadataRequest => Success | DifyError;
    /// The knowledge tags.
    ListTags Get "/v1/datasets/tags" (Server, None)
        "Dify: knowledge tags (the server token, or any dataset's key)"
        Nothing, Nothing, Nothing => Vec<Tag> | DifyError;
    /// A tag made.
    CreateTag Post "/v1/datasets/tags" (Server, Json)
        "Dify: create a tag {name}"
        Nothing, Nothing, TagNameRequest => Tag | DifyError;
    /// A tag renamed.
    RenameTag Patch "/v1/datasets/tags" (Server, Json)
        "Dify: rename a tag {tag_id, name}"
        Nothing, Nothing, RenameTagRequest => Tag | DifyError;
    /// A tag deleted.
    DeleteTag Delete "/v1/datasets/tags" (Server, Json)
        "Dify: delete a tag {tag_id}"
        Nothing, Nothing, TagIdRequest => Success | DifyError;
    /// Tags bound to a dataset.
    BindTags Post "/v1/datasets/tags/binding" (Dataset, Json)
        "Dify: bind tags to a dataset {tag_ids, target_id}"
        Nothing, Nothing, BindTagsRequest => Success | DifyError;
    /// A tag unbound from a dataset.
    UnbindTag Post "/v1/datasets/tags/unbinding" (Dataset, Json)
        "Dify: unbind a tag {tag_id, target_id}"
        Nothing, Nothing, UnbindTagRequest => Success | DifyError;
    /// A dataset's tags.
    DatasetTags Get "/v1/datasets/{dataset_id}/tags" (Dataset, None)
        "Dify: a dataset's tags"
        DatasetPath, Nothing, Nothing => DatasetTagList | DifyError;
}
