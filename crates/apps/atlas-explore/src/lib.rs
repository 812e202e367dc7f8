//! The web explorer: a website explored in headless Chromium into seed 001's folder database,
//! the way Crawljax builds a state-flow graph.
//!
//! Each state of the site (a DOM fingerprint, [`snapshot`]) becomes a page of an Atlas app, each
//! action that moves between states a transition; the page's folder gets the screenshot, the DOM
//! snapshot, its candidate actions as task files, a script that navigates to it, test ideas and a
//! report ([`artifacts`]).
//!
//! Key design decisions:
//! - **Pages and transitions go through the service** ([`atlas_service::Atlas`]), like every
//!   other writer: they are journaled before they count, the folder's meta.json, links, index and
//!   graph files are written by the store's checkpoints, and `atlas serve` answers over an
//!   explored site as over any app. The explorer writes only what the service does not know
//!   (screenshots, tasks, scripts, ideas, reports), into the page's folder.
//! - **The queue is the files** ([`tasks`]): a task moves todos → processing → completed by
//!   atomic renames, so a killed exploration resumes exactly where it stopped.
//! - **Safety before coverage**: the network guard ([`guard`]) lets no request but GET and HEAD
//!   leave the browser (the sign-in excepted) and gives credentials to the start origin alone;
//!   on top of it, what would delete, pay, order, sign out or create content is recorded as a
//!   task and left undone unless allowed ([`safety`]). Page text never becomes code: the
//!   navigation scripts carry their steps in literals a real encoder writes ([`artifacts`]).

pub mod artifacts;
pub mod browser;
pub mod demo_site;
mod explorer;
pub mod guard;
pub mod hostile_site;
pub mod safety;
pub mod snapshot;
pub mod tasks;

pub use explorer::{ExploreOptions, ExploreReport, Progress, State, Step, explore, start_address};

/// Why exploring failed.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The browser failed, or a page could not be read.
    #[error("browser: {0}")]
    Browser(String),
    /// Atlas refused a write.
    #[error("{0}")]
    Atlas(#[from] atlas_model::AtlasError),
    /// A file could not be written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The options or the site make no sense (an address that is not one).
    #[error("{0}")]
    Invalid(String),
}
