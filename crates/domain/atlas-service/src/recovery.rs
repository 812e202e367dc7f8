//! A refused write changes nothing: memory read again from what is durable, and writes taken
//! again once the store can.
//!
//! A write changes memory before its journal record is durable (so that concurrent writers share
//! one fsync, see the crate's doc). When the record cannot be written — a full disk, a failing
//! `fsync` — memory holds a write that was never kept, and every write applied after it may rest
//! on it. Undoing each change would need an inverse of every change the graph knows; reading the
//! state again from the store gives exactly what is durable, by the same code that starts the
//! service, and costs a start-up's time once per failure. So: the store counts its failures
//! ([`Store::write_failures`]); the state remembers the count it is in step with; a failed
//! write's waiter, the next write and the next checkpoint each read the state again when the
//! counts differ, before anything else. The refusal is answered only after that, so the client
//! that retries it finds memory without it.

use std::time::{Duration, Instant};

use atlas_model::Result;

use crate::state::State;
use crate::{Atlas, store_failure};

/// How often writes are tried again while the store refuses them: each try of the folder store
/// makes a journal segment, which should not happen once a request.
const RESUME_EVERY: Duration = Duration::from_secs(1);

impl Atlas {
    /// Reads the state again from the store when a write failed since `in_step_with` (the
    /// store's failure count the caller's write was applied at): memory then holds no write the
    /// store refused. A state already read again since is left as it is. When reading fails,
    /// memory stays ahead, and writes and checkpoints go on being refused until a read works.
    pub(crate) fn catch_up(&self, state: &mut State, in_step_with: u64) {
        let failures = self.store.write_failures();
        if failures == state.synced_failures || state.synced_failures != in_step_with {
            return;
        }
        let started = Instant::now();
        match State::load(self.store.as_ref(), self.embedder.as_ref()) {
            Ok((mut fresh, replayed)) => {
                fresh.graph.defer_route_trees(self.tree_wanted.clone());
                *state = fresh;
                tracing::warn!(
                    "a write failed: the state was read again from {} ({replayed} journal \
                     records) in {} ms, without the writes that were refused",
                    self.store.describe(),
                    started.elapsed().as_millis()
                );
            }
            Err(e) => tracing::error!(
                "a write failed and the state cannot be read again ({e}); writes stay refused"
            ),
        }
    }

    /// Whether a write may change memory now: the state in step with what is durable, the
    /// store taking writes (tried again at most once a second after it refused), and room on
    /// its disk. Under the write lock, before a write builds anything.
    pub(crate) fn writes_ready(&self, state: &mut State) -> Result<()> {
        let in_step_with = state.synced_failures;
        self.catch_up(state, in_step_with);
        if self.store.write_failures() != state.synced_failures {
            return Err(crate::AtlasError::unavailable(
                "a write failed and the graph is being read again from the store; try again",
            ));
        }
        let refused = match self.store.writable() {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        let mut resumed_at = self.resumed_at.lock();
        if resumed_at.is_some_and(|at| at.elapsed() < RESUME_EVERY) {
            return Err(store_failure("the write", refused));
        }
        *resumed_at = Some(Instant::now());
        self.store
            .resume_writes()
            .and_then(|()| self.store.writable())
            .map_err(|e| store_failure("the write", e))
    }
}
