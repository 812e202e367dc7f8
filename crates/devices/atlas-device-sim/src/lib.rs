//! A simulated Android phone for agents and their tests, where no phone or emulator can run.
//!
//! It replays a recorded app — the screens and transitions a DroidBot run saved, as DroidTask's
//! demonstrations hold them, or an app of Atlas's graph ([`graph_app`]) — and answers the shell commands an agent's adb sends as Android
//! answers them ([`phone`]). It speaks adb's device-side protocol over TCP ([`adb`]), so
//! Debian's `adb connect 127.0.0.1:5555` and then any adb command, or Atlas's own ADB backend,
//! drive it unchanged: a recording becomes a device in CI.
//!
//! Key design decision: **the simulator is a device, not a mock of one.** Agents reach it through
//! the same adb client and the same commands as a phone, so what passes here exercised the real
//! client path; what it cannot know (a screen nobody recorded) it answers as an app that ignores
//! the tap: the screen stays. A recording can be updated ([`update`]): a seeded next release,
//! with the changes real releases make, for measuring what an update does to an agent.

pub mod adb;
pub mod app;
pub mod device;
mod error;
pub mod graph_app;
pub mod phone;
pub mod render;
pub mod shell;
pub mod storage;
pub mod sync;
pub mod typing;
pub mod update;

pub use app::{AppVersion, RecordedApp};
pub use error::{SimError, WriteError};
pub use phone::Phone;
