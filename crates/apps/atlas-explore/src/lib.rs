//! The web explorer: a website explored in headless Chromium into seed 001's folder database,
//! the way Crawljax builds a state-flow graph.
//!
//! Each state of the site (a DOM fingerprint, [`atlas_browser::snapshot`]) becomes a page of an Atlas app, each
//! action that moves between states a transition; the page's folder gets the screenshot, the DOM
//! snapshot, its candidate actions as task files, a script that navigates to it, test ideas and a
//! report ([`artifacts`]).
//!
//! Key design decisions:
//! - **Pages and transitions go through the graph's tools** ([`atlas_client`]), as every other
//!   client's do (the phone agent's among them): checked, journaled before they count, and
//!   served by `atlas serve` like any app's. What the graph does not hold (screenshots, DOM
//!   snapshots, tasks, scripts, ideas, reports) goes to the page's own files through the store's
//!   [`atlas_store::files::Artifacts`]: the page's folder of seed 001 on a data folder, the files
//!   table on PostgreSQL, so `--store postgres://` explores as a folder does.
//! - **The queue is the files** ([`tasks`]): a task moves todos → processing → completed, by
//!   atomic renames in a folder, so a killed exploration resumes exactly where it stopped.
//! - **Safety before coverage, and not here**: what may leave the browser and what may be pressed
//!   is [`atlas_browser`]'s (its network filter and write policy); the crawler only chooses among
//!   what that policy lets it do, and records the rest as tasks left undone. Page text never
//!   becomes code: the navigation scripts carry their steps in literals a real encoder writes
//!   ([`artifacts`]).
//! - **The crawler knows no releases.** A site explored before is checked against what it shows
//!   now by whoever the caller passes as the [`Recheck`] (`atlas-explore-release`'s), before the
//!   queue is taken up; that crate imports this one, never the other way.

pub mod artifacts;
pub mod crawl;
mod explorer;
mod novelty;
mod state;
pub mod tasks;

pub use atlas_browser::BrowserError;
pub use explorer::{
    ExploreOptions, Frontier, Graph, Progress, Recheck, Rechecking, Saved, Session,
    candidate_tasks, explore, perform, start_address,
};
pub use state::{ExploreReport, PageFiles, ReleaseReport, State, Step};

/// Why exploring failed.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The browser failed ([`BrowserError::Failed`] is a page's own trouble, after which
    /// exploring goes on).
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// Atlas refused a write.
    #[error("{0}")]
    Atlas(#[from] atlas_model::AtlasError),
    /// The graph's tools refused a call, or could not be reached.
    #[error("{0}")]
    Graph(atlas_client::CallError),
    /// A file could not be written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The store refused a page's file.
    #[error("{0}")]
    Store(#[from] atlas_store::StoreError),
    /// The options or the site make no sense (an address that is not one).
    #[error("{0}")]
    Invalid(String),
    /// An address that does not parse.
    #[error("{address} is not an address: {source}")]
    Address {
        /// What was given.
        address: String,
        /// Why it is not one.
        #[source]
        source: url::ParseError,
    },
    /// The saved frontier of an interrupted exploration cannot be read.
    #[error("the saved exploration of {app} cannot be read: {source}")]
    Saved {
        /// The app.
        app: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A task of the exploration (a call to the graph, a tab's worker) stopped before it
    /// answered: it panicked or was cancelled.
    #[error("a task of the exploration stopped: {0}")]
    Stopped(#[from] tokio::task::JoinError),
}
