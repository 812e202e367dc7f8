//! The viewer at `GET /`: apps, an app's graph, a page, paths asked for, and live learning,
//! drawn in the browser from the tools (`get_graph_stats`, `get_app_graph`, `get_page_details`,
//! `query_path`, `get_next_action`) and `GET /api/v1/events`; plus the one route the tools cannot
//! serve, a page's screenshot as an image. And the runs page at `GET /runs`, drawn from
//! `get_test_runs`.
//!
//! The page's files ship inside the binary: its own script and styles, readable as written, and
//! the graph drawing library (sigma.js with graphology, WebGL) bundled from npm by
//! `crates/faces/atlas-server/viewer/build.sh` and committed, so nothing is fetched at run time.

use atlas_api::server as own;
use atlas_model::AtlasError;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::extract::{Answer, RoutePath};

/// The viewer's files, served as they ship: (path, content type, body).
pub(crate) const PAGE_FILES: [(&str, &str, &str); 9] = [
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("viewer_page/index.html"),
    ),
    (
        "/viewer/viewer.js",
        "text/javascript; charset=utf-8",
        include_str!("viewer_page/viewer.js"),
    ),
    (
        "/viewer/viewer.css",
        "text/css; charset=utf-8",
        include_str!("viewer_page/viewer.css"),
    ),
    (
        "/viewer/graph-lib.js",
        "text/javascript; charset=utf-8",
        include_str!("viewer_page/graph-lib.js"),
    ),
    (
        "/viewer/graph-model.js",
        "text/javascript; charset=utf-8",
        include_str!("viewer_page/graph-model.js"),
    ),
    (
        "/viewer/graph-canvas.js",
        "text/javascript; charset=utf-8",
        include_str!("viewer_page/graph-canvas.js"),
    ),
    // The runs page: test runs as `atlas test run` reports them (`get_test_runs`), live.
    (
        "/runs",
        "text/html; charset=utf-8",
        include_str!("runs_page/index.html"),
    ),
    (
        "/runs/runs.js",
        "text/javascript; charset=utf-8",
        include_str!("runs_page/runs.js"),
    ),
    (
        "/runs/runs.css",
        "text/css; charset=utf-8",
        include_str!("runs_page/runs.css"),
    ),
];

/// `GET /api/v1/apps/{app_id}/pages/{page_id}/screenshot`: the PNG in the page's folder.
pub(crate) async fn screenshot(
    State(state): State<AppState>,
    RoutePath(page): RoutePath<own::Screenshot>,
) -> Answer<Response> {
    let services = state.services.clone();
    let read =
        tokio::task::spawn_blocking(move || services.page_screenshot(&page.app_id, &page.page_id))
            .await
            .map_err(|e| AtlasError::fault("reading the screenshot stopped", e))?;
    let png = read?.ok_or_else(|| AtlasError::NotFound("the page has no screenshot".into()))?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        png,
    )
        .into_response())
}
