//! Folding the journal into the readable files: when ([`CheckpointPolicy`]), how it went
//! ([`CheckpointHealth`]), the checkpointer thread, and what the store's disk allows now.

use std::sync::Arc;
use std::time::{Duration, Instant};

use atlas_model::{AtlasError, Result};
use atlas_store::StoreError;

use crate::{Atlas, store_error};

/// How often the background checkpointer folds the journal into the readable files, and after how
/// many records it folds early.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointPolicy {
    /// How long after a change a checkpoint is written at the latest.
    pub interval: Duration,
    /// How many bytes of journal (what a restart replays beyond the files) trigger a
    /// checkpoint at the latest. Bytes, not records: a checkpoint rewrites whole apps, so its
    /// cost is the graph's size, and a report's record is a hundred bytes where a page's may be
    /// ten thousand.
    pub max_journal_bytes: u64,
}

impl Default for CheckpointPolicy {
    fn default() -> Self {
        CheckpointPolicy {
            interval: Duration::from_secs(30),
            max_journal_bytes: 64 << 20,
        }
    }
}

/// The longest the checkpointer waits between attempts while checkpoints fail.
pub const MAX_CHECKPOINT_BACKOFF: Duration = Duration::from_secs(600);

/// How the checkpoints have gone (`/healthz` shows it): all well, or failing since when and why.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CheckpointHealth {
    /// Checkpoints failed in a row.
    pub failures: u64,
    /// When the first of them failed (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failing_since: Option<String>,
    /// Why the last one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Bytes of journal written since the last checkpoint began: what the next start replays
    /// beyond the files, at least.
    pub journal_bytes: u64,
}

impl CheckpointHealth {
    /// Whether the last checkpoint failed.
    pub fn failing(&self) -> bool {
        self.failures > 0
    }
}

impl Atlas {
    /// Folds every app changed since the last checkpoint into the store's files and trims the
    /// journal. When it fails, nothing acknowledged is lost: the changed apps stay to be folded
    /// by the next checkpoint, the journal keeps their records, and [`Atlas::checkpoint_health`]
    /// says so.
    pub fn checkpoint(&self) -> Result<()> {
        let _serial = self.checkpointing.lock();
        let outcome = self.fold_changes();
        let mut health = self.checkpoints.lock();
        match &outcome {
            Ok(()) => *health = CheckpointHealth::default(),
            Err(e) => {
                health.failures += 1;
                health
                    .failing_since
                    .get_or_insert_with(atlas_model::now_rfc3339);
                health.error = Some(e.to_string());
            }
        }
        outcome
    }

    /// How the checkpoints have gone: failing ones since when, and why.
    pub fn checkpoint_health(&self) -> CheckpointHealth {
        let mut health = self.checkpoints.lock().clone();
        health.journal_bytes = self.store.journal_bytes();
        health
    }

    fn fold_changes(&self) -> Result<()> {
        let (folding, images) = {
            let mut state = self.state.write();
            // Never fold a write the journal refused.
            let in_step_with = state.synced_failures;
            self.catch_up(&mut state, in_step_with);
            if self.store.write_failures() != state.synced_failures {
                return Err(AtlasError::unavailable(
                    "the checkpoint waits: a write failed and its state is being read again",
                ));
            }
            if !self.store.wants_checkpoints() {
                state.dirty.clear();
                return Ok(());
            }
            let keeps_images = self.store.keeps_images();
            if state.dirty.is_empty() && (!keeps_images || state.unimaged.is_empty()) {
                return Ok(());
            }
            let folding = match state.dirty.is_empty() {
                true => None,
                false => {
                    let cut = self.store.begin_checkpoint().map_err(store_error)?;
                    // The cut flushed the writes before it: one that failed is in memory.
                    if self.store.write_failures() != state.synced_failures {
                        return Err(AtlasError::unavailable(
                            "the checkpoint stopped: a write before it failed",
                        ));
                    }
                    Some((cut, state.take_dirty()))
                }
            };
            // Images of what is folded now, and of apps read from JSON whose files are current.
            let mut imaged = std::mem::take(&mut state.unimaged);
            if !keeps_images {
                imaged.clear();
            }
            if let Some((_, changed)) = &folding {
                imaged.extend(changed.iter().map(|app| app.app.app_id.clone()));
            }
            let images: Vec<(String, Vec<u8>)> = imaged
                .into_iter()
                .filter_map(|app_id| {
                    let image = state.image_of(&app_id, self.embedder.as_ref())?;
                    Some((app_id, image))
                })
                .collect();
            (folding, images)
        };
        if let Some((cut, changed)) = folding
            && let Err(e) = self.store.finish_checkpoint(cut, &changed)
        {
            // Folded again next time, the journal's records of the apps not folded yet with them.
            let mut state = self.state.write();
            state
                .dirty
                .extend(changed.into_iter().map(|app| app.app.app_id));
            return Err(store_error(e));
        }
        // An image not kept costs the next start-up time, never data: the files are folded.
        for (app_id, image) in images {
            if let Err(e) = self.store.keep_image(&app_id, &image) {
                tracing::warn!("no image of {app_id} for the next start-up: {e}");
            }
        }
        Ok(())
    }

    /// Why writes are refused now, if they are (a full disk, a failed write not yet behind
    /// it), in words that name no file: `/healthz` says so to anyone who can reach the port,
    /// and the server goes on serving reads.
    pub fn writes_refused(&self) -> Option<String> {
        if self.store.write_failures() != self.state.read().synced_failures {
            return Some("a write failed; the graph is read again from the store".into());
        }
        let refused = self.store.writable().err()?;
        Some(match refused {
            StoreError::Full { .. } | StoreError::NoSpace { .. } => {
                "the data folder's disk is full".into()
            }
            StoreError::DatabaseFull { .. } => "the database's disk is full".into(),
            StoreError::WriteFailed { cause, .. } => format!("a write to the disk failed: {cause}"),
            other => other.to_string(),
        })
    }

    /// The disk under the store, measured now (none for a database).
    pub fn disk(&self) -> Option<atlas_store::DiskSpace> {
        self.store.disk()
    }

    /// Whether the store takes writes now (see [`Store::available`]): `/healthz` says so, for a
    /// load balancer to send writers elsewhere.
    pub fn store_available(&self) -> bool {
        self.store.available()
    }

    /// Starts the periodic checkpointer on its own thread; it stops when the service is dropped.
    /// After a failure it waits twice as long each time (up to [`MAX_CHECKPOINT_BACKOFF`]) and
    /// is not nudged early: each attempt starts a journal segment, and a disk that refuses the
    /// files should not also be filled with empty segments.
    pub fn start_checkpointer(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let interval = self.policy.interval;
        let (nudge, woken) = std::sync::mpsc::channel();
        *self.nudge.lock() = Some(nudge);
        std::thread::Builder::new()
            .name("atlas-checkpoint".into())
            .spawn(move || {
                let backoff = |failures: u32| {
                    interval
                        .saturating_mul(1 << failures.min(16))
                        .min(MAX_CHECKPOINT_BACKOFF.max(interval))
                };
                let mut failures = 0u32;
                loop {
                    let deadline = Instant::now() + backoff(failures);
                    loop {
                        let left = deadline.saturating_duration_since(Instant::now());
                        match woken.recv_timeout(left) {
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => break,
                            Ok(()) if failures == 0 => break,
                            Ok(()) => {}
                        }
                    }
                    let Some(atlas) = weak.upgrade() else { return };
                    match atlas.checkpoint() {
                        Ok(()) => failures = 0,
                        Err(e) => {
                            failures += 1;
                            tracing::error!(
                                "checkpoint failed ({failures} in a row): {e}; every acknowledged \
                                 write is in the journal; trying again in {} s",
                                backoff(failures).as_secs()
                            );
                        }
                    }
                    // Nudges sent while it ran asked for the checkpoint just made.
                    while woken.try_recv().is_ok() {}
                }
            })
            .expect("spawn checkpointer");
    }
}
