//! Retrieval: Dify's retrieve (and hit-testing) and its External Knowledge API.

use atlas_api::dify::{
    self, DifyError, ExternalError, ExternalMetadata, ExternalRecord, ExternalRecords,
    QueryContent, RetrieveAnswer, RetrieveRequest,
};
use atlas_api::routes::{Caller, Nothing, RouteError};
use atlas_kb::KbError;

use super::{Admit, Admitted, Datasets, Serve, search_options, shapes};

impl Datasets {
    fn retrieve(
        &self,
        dataset: &str,
        request: RetrieveRequest,
    ) -> Result<RetrieveAnswer, DifyError> {
        let RetrieveRequest {
            query,
            retrieval_model,
        } = request;
        let model = retrieval_model.unwrap_or_default();
        let options = search_options(
            model.search_method,
            model.top_k,
            model
                .score_threshold
                .filter(|_| model.score_threshold_enabled == Some(true)),
            model
                .weights
                .and_then(|w| w.vector_setting)
                .and_then(|v| v.vector_weight),
            model.metadata_filtering_conditions,
        )?;
        let hits = self.kb.search(dataset, &query, &options)?;
        Ok(RetrieveAnswer {
            query: QueryContent { content: query },
            records: hits.iter().map(shapes::record).collect(),
        })
    }
}

macro_rules! retrieval {
    ($($route:ty),*) => {$(
        impl Serve<$route> for Datasets {
            fn serve(
                &self,
                admitted: Admitted<$route>,
                _: Nothing,
                body: RetrieveRequest,
            ) -> Result<RetrieveAnswer, DifyError> {
                self.retrieve(&admitted.path.dataset_id, body)
            }
        }
    )*};
}

retrieval!(dify::Retrieve, dify::HitTesting);

/// A request without a bearer key is refused before its body is read; which knowledge it opens
/// is in the body.
impl Admit<dify::ExternalRetrieval> for Datasets {
    fn admit(
        &self,
        caller: Caller,
        path: Nothing,
    ) -> Result<Admitted<dify::ExternalRetrieval>, ExternalError> {
        Self::key(&caller).map_err(|_| ExternalError::unauthorized())?;
        Ok(Admitted::new(caller, path))
    }
}

impl Serve<dify::ExternalRetrieval> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::ExternalRetrieval>,
        _: Nothing,
        body: dify::ExternalRetrievalRequest,
    ) -> Result<ExternalRecords, ExternalError> {
        let dataset = body.knowledge_id;
        // The dataset's own key, or the server token, which opens every dataset; refused in
        // this API's own codes.
        match self.open_dataset(&admitted.caller, &dataset) {
            Ok(()) => {}
            Err(KbError::DatasetNotFound) => return Err(ExternalError::no_knowledge()),
            Err(_) => return Err(ExternalError::refused()),
        }
        let setting = body.retrieval_setting.unwrap_or_default();
        let known = |e: KbError| ExternalError::from(DifyError::from(e));
        let options = search_options(
            None,
            setting.top_k,
            setting.score_threshold.filter(|t| *t > 0.0),
            None,
            body.metadata_condition,
        )
        .map_err(known)?;
        let hits = self
            .kb
            .search(&dataset, &body.query, &options)
            .map_err(known)?;
        Ok(ExternalRecords {
            records: hits
                .into_iter()
                .map(|h| ExternalRecord {
                    content: h.segment.content,
                    score: h.score,
                    title: h.document_name,
                    metadata: ExternalMetadata {
                        document_id: h.document_id,
                        segment_id: h.segment.id,
                        question: h.segment.question,
                    },
                })
                .collect(),
        })
    }
}
