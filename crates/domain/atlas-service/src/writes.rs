//! The one write path: records built from the state, applied to memory and enqueued in the
//! journal under the write lock, then waited on until durable outside it (see the crate's key
//! design decision).

use std::collections::HashMap;

use atlas_model::{AtlasError, Result};
use atlas_navigate::Prepared;
use atlas_store::Record;

use crate::state::State;
use crate::{Atlas, events, store_failure};

impl Atlas {
    /// Builds records from the current state, applies them to memory and enqueues them in the
    /// journal, all under the write lock (so read-modify-write is atomic and journal order equals
    /// memory order); then waits, outside the lock, until they are durable.
    pub(crate) async fn commit_with<T>(
        &self,
        build: impl FnOnce(&State) -> Result<(Vec<Record>, T)>,
    ) -> Result<T> {
        self.commit_embedded(&HashMap::new(), build).await
    }

    /// [`Atlas::commit_with`], the records' texts found first among `ready` (from
    /// [`Atlas::embed_ahead`]), so the write lock is not held while a model embeds them.
    pub(crate) async fn commit_embedded<T>(
        &self,
        ready: &HashMap<String, Vec<f32>>,
        build: impl FnOnce(&State) -> Result<(Vec<Record>, T)>,
    ) -> Result<T> {
        let embedder = Prepared {
            inner: self.embedder.as_ref(),
            ready,
        };
        let (pending, value, learned, applied_after) = {
            let mut state = self.state.write();
            self.writes_ready(&mut state)?;
            let (records, value) = build(&state)?;
            if records.is_empty() {
                return Ok(value);
            }
            if let Some((kind, size)) = records.iter().find_map(Record::oversized) {
                return Err(AtlasError::invalid(
                    kind,
                    format!(
                        "the {kind} would take {size} bytes, over the {} bytes one entity may",
                        atlas_store::MAX_ENTITY_BYTES
                    ),
                ));
            }
            for record in &records {
                state.apply(record, &embedder)?;
            }
            let learned = events::of(&state.graph, &records, self.events.receiver_count() > 0);
            (
                self.store.append(records),
                value,
                learned,
                state.synced_failures,
            )
        };
        if let Err(e) = pending.wait().await {
            // Memory holds the refused write: it goes before the refusal is answered.
            self.catch_up(&mut self.state.write(), applied_after);
            return Err(store_failure("the write", e));
        }
        // Told once durable, so a viewer never shows what was not kept.
        for event in learned {
            let _ = self.events.send(event);
        }
        if self.store.journal_bytes() >= self.policy.max_journal_bytes {
            // Folding is slow I/O: ask the checkpointer thread rather than block this caller.
            if let Some(nudge) = self.nudge.lock().as_ref() {
                let _ = nudge.send(());
            }
        }
        Ok(value)
    }
}
