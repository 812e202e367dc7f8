//! How far long work has got: an import of thousands of recordings, a migration of a million
//! transitions, a document embedded segment by segment, an evaluation of every DroidTask task.
//!
//! Key design decision: **the work counts, the face shows.** The crates that do long work take a
//! `&dyn Progress` and say what they are doing and how much of it is done; they never draw
//! anything. The command line renders it as a bar when its error stream is a terminal and ignores
//! it otherwise; the server passes [`Quiet`]. So the same code runs under a person watching, a
//! CI log and an HTTP request, and a test can count what the work reported ([`Tally`]).
//! The trait has no dependencies, so the pure core can take it too.

use std::sync::Mutex;

/// Told by long work how far it has got. Calls come from whichever thread does the work, so an
/// implementation is shared (`Send + Sync`) and must be cheap: work calls it per unit.
pub trait Progress: Send + Sync {
    /// A stage of the work begins: `what` it is, for a person ("embedding segments"), and how
    /// many units it has (`None` when that is not known in advance).
    fn stage(&self, what: &str, total: Option<u64>);
    /// `done` more units of the current stage are finished.
    fn advance(&self, done: u64);
    /// A line worth a person's reading while the work goes on (what a stage found); shown
    /// above a bar rather than through it. Dropped by default.
    fn note(&self, _line: &str) {}
}

/// Progress nobody watches: the server's requests, the tests, and a command whose output is not
/// a terminal.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Progress for Quiet {
    fn stage(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
}

/// One stage as a [`Tally`] saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// What the stage was.
    pub what: String,
    /// Its units, when known in advance.
    pub total: Option<u64>,
    /// Its units done.
    pub done: u64,
}

/// Progress written down: each stage with its units done, for tests and for a summary of what
/// the work did.
#[derive(Debug, Default)]
pub struct Tally {
    stages: Mutex<Vec<Stage>>,
}

impl Tally {
    /// The stages so far, oldest first.
    pub fn stages(&self) -> Vec<Stage> {
        self.stages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Progress for Tally {
    fn stage(&self, what: &str, total: Option<u64>) {
        self.stages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Stage {
                what: what.to_string(),
                total,
                done: 0,
            });
    }

    fn advance(&self, done: u64) {
        let mut stages = self.stages.lock().unwrap_or_else(|e| e.into_inner());
        // Units before any stage are still counted, under a stage of no name.
        if stages.is_empty() {
            stages.push(Stage {
                what: String::new(),
                total: None,
                done: 0,
            });
        }
        if let Some(last) = stages.last_mut() {
            last.done += done;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_counts_each_stage_apart() {
        let tally = Tally::default();
        tally.advance(1);
        tally.stage("reading", Some(3));
        tally.advance(2);
        tally.advance(1);
        tally.stage("writing", None);
        tally.advance(5);
        let stages = tally.stages();
        assert_eq!(
            stages
                .iter()
                .map(|s| (s.what.as_str(), s.total, s.done))
                .collect::<Vec<_>>(),
            [("", None, 1), ("reading", Some(3), 3), ("writing", None, 5)]
        );
    }
}
