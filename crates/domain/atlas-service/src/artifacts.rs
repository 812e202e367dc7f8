//! The files an explorer keeps beside the graph, found by page id: the store names a page's
//! folder by the page's number and name, which only the service knows.

use std::sync::Arc;

use atlas_store::StoreError;
use atlas_store::files::{Artifacts, Files};

use crate::Atlas;

impl Artifacts for Atlas {
    fn page_files(&self, app_id: &str, page_id: &str) -> Result<Arc<dyn Files>, StoreError> {
        let page = self
            .page(app_id, page_id)
            .ok_or_else(|| StoreError::Io(format!("no page {page_id} in app {app_id:?}")))?;
        self.store.page_files(&page)
    }

    fn app_files(&self, app_id: &str) -> Result<Arc<dyn Files>, StoreError> {
        self.store.app_files(app_id)
    }

    fn page_folder(&self, app_id: &str, page_id: &str) -> Option<std::path::PathBuf> {
        self.store.page_folder(&self.page(app_id, page_id)?)
    }
}
