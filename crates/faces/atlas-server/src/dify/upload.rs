//! Bodies as Dify's clients send them: a JSON object, or the upload form (the file in `file`,
//! its settings as JSON in `data`).

use atlas_api::dify::{UploadForm, UploadSettings};
use atlas_api::routes::RouteError;
use atlas_registry::Datasets;
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

/// The body as the route's JSON object.
pub(super) async fn json_body<T: DeserializeOwned, E: RouteError>(body: Body) -> Result<T, E> {
    let limit = Datasets::max_upload_bytes();
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|e| {
        if over_limit(&e) {
            E::too_large(limit + 1, limit)
        } else {
            E::unreadable(format!("cannot read the body: {e}"))
        }
    })?;
    // Read as every request is: a whole float taken where an integer is wanted, the field
    // named in a refusal.
    atlas_registry::parse_json_input(&bytes).map_err(|e| E::unreadable(e.to_string()))
}

/// Whether reading stopped at the length limit (a body sent without its length announced).
fn over_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(e) = cause {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Dify's upload form: the file (its name and bytes) and the settings from `data`.
pub(super) async fn form<E: RouteError>(request: Request) -> Result<UploadForm, E> {
    let mut form = Multipart::from_request(request, &())
        .await
        .map_err(|e| E::unreadable(format!("a multipart form is expected: {}", e.body_text())))?;
    let limit = Datasets::max_upload_bytes();
    let bad = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            E::too_large(limit + 1, limit)
        } else {
            E::unreadable(format!("cannot read the form: {}", e.body_text()))
        }
    };
    let mut upload = UploadForm::default();
    while let Some(field) = form.next_field().await.map_err(bad)? {
        match field.name() {
            Some("file") => {
                upload.file_name = field.file_name().map(str::to_string);
                upload.file = Some(field.bytes().await.map_err(bad)?.to_vec());
            }
            Some("data") => {
                let text = field.text().await.map_err(bad)?;
                // An empty field gives no settings.
                if text.trim().is_empty() {
                    continue;
                }
                upload.settings =
                    atlas_registry::parse_json_input::<UploadSettings>(text.as_bytes())
                        .map_err(|e| E::unreadable(format!("data: {e}")))?;
            }
            _ => {}
        }
    }
    Ok(upload)
}
