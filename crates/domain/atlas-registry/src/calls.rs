//! How the registry calls the GUI graph's service: a synchronous interface off the async workers
//! when it may wait on the network, and page recognition with the screen remembered.

use std::sync::Arc;

use atlas_model::{AtlasError, Result};
use atlas_service::{Atlas, MatchPageRequest, MatchPageResponse};

/// Runs a synchronous interface. With a remote embedder it may wait on the network, so it runs on
/// tokio's blocking pool instead of stalling a worker that serves other connections; with a local
/// one it takes microseconds and runs in place, where a hop to another thread would cost more.
pub(crate) async fn sync_call<R: Send + 'static>(
    atlas: Arc<Atlas>,
    f: impl FnOnce(&Atlas) -> Result<R> + Send + 'static,
) -> Result<R> {
    if atlas.embedder().is_remote() {
        tokio::task::spawn_blocking(move || f(&atlas))
            .await
            .map_err(|e| AtlasError::fault("the interface stopped", e))?
    } else {
        f(&atlas)
    }
}

/// `match_current_page`: recognises the page (off the async workers with a remote embedder)
/// and remembers what this screen of it shows.
pub(crate) async fn match_page(
    atlas: Arc<Atlas>,
    req: MatchPageRequest,
) -> Result<MatchPageResponse> {
    let (response, screen) = sync_call(atlas.clone(), move |a| a.recognise_page(req)).await?;
    if let (Some(page), Some(widgets)) = (&response.page, screen) {
        atlas.remember_screen(&page.page_id, widgets).await?;
    }
    Ok(response)
}
