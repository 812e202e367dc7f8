//! A store that keeps nothing: the graph a setup is built on before it is written whole.
//!
//! A setup (the demo app, an import) makes hundreds of writes through the interfaces an agent
//! uses. Made on the real store, a stop between two of them would leave half a setup that looks
//! like a whole one. Made on a service over [`Scratch`], it is then written to the real store as
//! one atomic [`Store::append`]: the whole setup, or nothing of it.

use crate::{CheckReport, Commit, Cut, Loaded, Store, StoreError};

/// A store in memory that starts empty and makes nothing durable (every append succeeds and is
/// forgotten).
#[derive(Debug, Default, Clone, Copy)]
pub struct Scratch;

impl Store for Scratch {
    fn load(&self) -> Result<Loaded, StoreError> {
        Ok(Loaded::default())
    }

    fn append(&self, _records: Vec<crate::Record>) -> Commit {
        let (done, commit) = Commit::new();
        let _ = done.send(Ok(()));
        commit
    }

    fn begin_checkpoint(&self) -> Result<Cut, StoreError> {
        Ok(Cut(0))
    }

    fn finish_checkpoint(&self, _cut: Cut, _changed: &[crate::AppData]) -> Result<(), StoreError> {
        Ok(())
    }

    fn wants_checkpoints(&self) -> bool {
        false
    }

    fn check(&self, _repair: bool) -> Result<CheckReport, StoreError> {
        Ok(CheckReport::default())
    }

    fn describe(&self) -> String {
        "a scratch graph in memory".into()
    }

    fn page_files(
        &self,
        _page: &atlas_model::Page,
    ) -> Result<std::sync::Arc<dyn crate::files::Files>, StoreError> {
        Err(keeps_no_files())
    }

    fn app_files(
        &self,
        _app_id: &str,
    ) -> Result<std::sync::Arc<dyn crate::files::Files>, StoreError> {
        Err(keeps_no_files())
    }
}

fn keeps_no_files() -> StoreError {
    StoreError::Io("a scratch graph keeps no files".into())
}
