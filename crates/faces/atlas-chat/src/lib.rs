//! The chat of seed 003 (§6): a person asks about processes, APIs and tables in their own words;
//! a model answers by calling Atlas's tools.
//!
//! Two halves:
//! - [`chat`]: the tool-calling loop against any OpenAI-compatible endpoint (LiteLLM, vLLM,
//!   OpenAI), with the seed's orchestration rules as its system prompt, streaming each tool call,
//!   tool result and piece of the answer as an event.
//! - [`sim`]: `atlas model-sim`, a scripted model server speaking the same API. It plays back
//!   turns from a script, tool calls included, so a prompt, a page or a test runs offline.
//!
//! Key design decision: **the loop trusts nothing a model sends.** Arguments may come as a JSON
//! string, an object, or broken; a call may lack an id or name a tool that does not exist. Each of
//! these becomes a tool result the model can read and correct, never an error of the chat.

pub mod chat;
pub mod sim;

pub use chat::{ChatConfig, ChatEvent, SYSTEM_PROMPT, run_chat};
