//! The explorer's browser: headless Chromium kept safe to point at any website, and what it
//! reads of a page.
//!
//! - [`browser`]: one Chromium over the DevTools protocol, a tab per worker; the explorer's
//!   scripts run in a world of their own, dialogs are cancelled, no operation waits forever.
//! - [`network_filter`]: which requests leave the browser (GET and HEAD; the sign-in excepted)
//!   and which origin gets the credentials (the start's alone).
//! - [`write_policy`]: what the explorer must not press (what deletes, pays, orders, signs out
//!   or creates content), and [`test_values`]: what it types.
//! - [`snapshot`]: a page as read (its links, buttons, forms, text and structure) and seed 001
//!   §6's fingerprint; [`template`]: what kind of page an address and a structure are;
//!   [`site_version`]: the release a page names.
//!
//! Key design decision: **the policy lives with the browser, outside the crawler.** What may
//! leave the browser is decided by a DevTools connection of its own, whatever the page's scripts
//! or the crawler's choice of action; what the crawler may press is decided here too, so a
//! reader checks the safety of exploring in one crate, and a change to how the crawler picks its
//! next action cannot widen it.

pub mod browser;
pub mod network_filter;
pub mod site_version;
pub mod snapshot;
pub mod template;
pub mod test_values;
pub mod write_policy;

pub use browser::{Browser, Tab, find_chromium};

/// Why the browser failed.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// The browser failed, or a page could not be read: the page's own trouble (an element
    /// gone, no answer in time), after which exploring goes on.
    #[error("browser: {0}")]
    Failed(String),
    /// The browser's protocol failed (Chrome DevTools).
    #[error("browser: {0}")]
    Cdp(#[from] chromiumoxide::error::CdpError),
    /// The network filter's connection to the browser failed.
    #[error("browser: {0}")]
    Socket(#[from] async_tungstenite::tungstenite::Error),
    /// The page reader answered what is not a page's description.
    #[error("browser: the page could not be read: {0}")]
    Unreadable(#[from] serde_json::Error),
    /// The browser's profile folder could not be made.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
