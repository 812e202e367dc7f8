//! The domain model of Atlas: what an app's user interface *is* to an agent.
//!
//! An app has pages (screens); a transition is one action (type, widget, input) that leads from one
//! page to another, with the success statistics agents report; an intent ("点外卖") names a page
//! that serves it. Everything else in the workspace—graph engine, store, service, faces—speaks
//! these types.
//!
//! Key design decision: **ids are derived, never allocated.** A page id is a hash of its app id and
//! page name, a transition id a hash of its from page, action and to page, an intent id a hash of
//! its app and text. So the same page reported twice is the same page, a replayed journal record
//! lands on the same entity, and two agents that never talked agree on ids. The crate has no I/O so
//! every other crate can depend on it.

mod counts;
mod entity;
mod error;
mod fingerprint;
mod ids;
pub mod image;
mod point;
mod time;
mod trust;
pub mod versions;
mod way;

pub use counts::Counts;
pub use entity::{
    Action, App, Intent, MAX_OTHER_RENDERINGS, Page, PageType, Trace, TraceStep, Transition, Widget,
};
pub use error::{AtlasError, ErrorCode, RETRY_AFTER_SECS, Result};
pub use fingerprint::{
    features_fingerprint, is_stable_label, jaccard, label_lines, one_rendering, screen_page_name,
    ui_features, ui_fingerprint,
};
pub use ids::{
    MAX_TEXT_LEN, NON_BLANK_TEXT, REQUIRED_TEXT_PATTERN, intent_id, page_id, sanitize_node_id,
    transition_id, validate_text,
};
pub use point::Point;
pub use time::{rfc3339_of_seconds, seconds_of_rfc3339};
pub use trust::{
    AnswerKind, BOUND_Z, BREAKER_WINDOW, CALIBRATION_CHECKS, Check, INHERITED_CHECKS,
    PRECISION_GOAL, PRIOR_CHECKS, RECENT_PRIOR_CHECKS, Tally, Trust, WAY_PRIOR_CHECKS, now_ms,
    recent_precision, shrunk_confidence, way_confidence,
};
pub use versions::{
    AppDiff, AppVersion, DiffPage, DiffTransition, IntentChanges, IntentPathChange, PageChange,
    PageChanges, PageFace, TransitionChanges, VersionSource, Versioned, face_in, keep_face,
};
pub use way::{RunOutcome, Verdict, WayRun, WayTrust, screen_content, screen_step, way_key};

/// The current time in whole seconds since 1970 (UTC): what [`rfc3339_of_seconds`] writes out.
pub fn unix_seconds_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The current time as RFC 3339 with second precision and `Z`, the format every Atlas file uses.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// How many bytes `value` takes as compact JSON, counted without building the text.
pub fn json_size<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, and the entities' serialisations do not.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
