//! Readers of what devices and benchmarks record, turned into Atlas's terms: screens as lists of
//! widgets, and the steps taken between them.
//!
//! Key design decision: **readers only read.** They produce plain traces (screen, action) and
//! never touch a graph; what those traces teach is decided by the agent side (`atlas-agent`),
//! which sends them through the same interfaces a live agent uses. So an import can never learn
//! anything a real agent could not have told Atlas, and one teaching path serves every format.

pub mod droidbot;
pub mod droidtask;
pub mod recording;
pub mod state_html;
pub mod utg;

use std::path::Path;

/// Why a recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file that its parser cannot read as what it should be.
    #[error("{path}: {what}{source}")]
    Unreadable {
        /// The file.
        path: String,
        /// Which part of it (`record 3: `), or nothing.
        what: String,
        /// The parser's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file is not in the format it should be.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl ImportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ImportError {
        ImportError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    /// `path` (the part `what` of it, when not empty) cannot be parsed, as `source` says.
    pub(crate) fn unreadable(
        path: &Path,
        what: &str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> ImportError {
        ImportError::Unreadable {
            path: path.display().to_string(),
            what: if what.is_empty() {
                String::new()
            } else {
                format!("{what}: ")
            },
            source: source.into(),
        }
    }

    pub(crate) fn format(path: &Path, message: String) -> ImportError {
        ImportError::Format {
            path: path.display().to_string(),
            message,
        }
    }
}
