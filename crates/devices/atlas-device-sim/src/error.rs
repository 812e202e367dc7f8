//! What goes wrong reading a recording or starting a simulated phone on it.

use std::path::PathBuf;

/// A recording that cannot be read, or a phone that cannot start on it.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A file or folder cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A recording's file is not the JSON it should be.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// A folder that lacks what a recording needs.
    #[error("{}: {what}", path.display())]
    Incomplete {
        /// The folder.
        path: PathBuf,
        /// What it lacks.
        what: &'static str,
    },
    /// An app of a graph that has no pages to show.
    #[error("the app {0} has no pages")]
    NoPages(String),
    /// A start screen the recording does not have, or names twice.
    #[error("{0}")]
    NoSuchScreen(String),
    /// An update the recording gives nothing to change for.
    #[error("the recording has no recorded tap on a view to change")]
    NothingToUpdate,
}

/// A file write the phone's storage refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// Outside the folders apps may write.
    #[error("Read-only file system")]
    ReadOnly,
    /// Over what the storage holds.
    #[error("No space left on device")]
    Full,
}
