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
    #[error("cannot read {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
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
    pub(crate) fn io(path: &Path, e: std::io::Error) -> ImportError {
        ImportError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }

    pub(crate) fn format(path: &Path, message: String) -> ImportError {
        ImportError::Format {
            path: path.display().to_string(),
            message,
        }
    }
}
