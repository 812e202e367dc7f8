//! What can go wrong in a run, as types: a step that cannot be taken ends the run as an error;
//! an action that is not done is told to the model; a knowledge base that cannot be asked is
//! one such action.

use atlas_device::DeviceError;
use atlas_llm::ModelError;

/// Why a step could not be taken: the run ends with it as an error.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The phone did not give its screen.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The model did not answer.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Why an action was not done (what the model is told next).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The phone refused it.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A point off the 0..999 screen.
    #[error("relative coordinates are 0..999, got [{0}, {1}]")]
    OffScreen(u16, u16),
    /// The person did not confirm a sensitive tap.
    #[error("The person did not confirm the sensitive tap ({0}); it was not done.")]
    NotConfirmed(String),
    /// GET_KNOWLEDGE_DATA without a knowledge base.
    #[error(
        "GET_KNOWLEDGE_DATA has no knowledge base: set PHONE_AGENT_KNOWLEDGE_BASE_URL and PHONE_AGENT_KNOWLEDGE_DATASET_ID"
    )]
    NoKnowledgeBase,
    /// The knowledge base has no answer.
    #[error("The knowledge base has no answer for {0:?}; nothing was sent.")]
    NoAnswer(String),
    /// The knowledge base could not be asked.
    #[error(transparent)]
    Knowledge(#[from] KnowledgeError),
}

/// Why the knowledge base could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    /// The request did not get an answer.
    #[error("Knowledge API error: {0}")]
    Transport(#[from] ureq::Error),
    /// It answered with an error status.
    #[error("Knowledge API HTTP error: {status} {body}")]
    Status {
        /// The status.
        status: u16,
        /// The start of its body.
        body: String,
    },
    /// It answered what is not JSON.
    #[error("Failed to parse knowledge response: {0}")]
    NotJson(#[from] serde_json::Error),
}
