//! Following a store other processes write too (PostgreSQL replicas): what they commit is
//! applied here, its texts embedded before the lock.

use std::collections::HashMap;
use std::sync::Arc;

use atlas_navigate::{DocTexts, Prepared};
use atlas_store::Record;

use crate::{Atlas, activity, events};

impl Atlas {
    /// For a store other processes write too: applies what they (and this one) committed, on a
    /// thread of its own, as the store reports it; it stops when the service is dropped.
    pub(crate) fn start_following(self: &Arc<Self>) {
        let Some(changes) = self.store.follow() else {
            return;
        };
        let weak = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("atlas-follow".into())
            .spawn(move || {
                for batch in changes {
                    let Some(atlas) = weak.upgrade() else { return };
                    atlas.apply_followed(batch);
                }
            })
            .expect("spawn follower");
    }

    /// Applies entities as the store now holds them, their texts embedded before the lock.
    fn apply_followed(&self, round: atlas_store::Followed) {
        let mut by_app: HashMap<String, Vec<(String, DocTexts)>> = HashMap::new();
        for record in round.rows() {
            let doc = match record {
                Record::Page(p) => (
                    atlas_navigate::page_key(&p.page_id),
                    DocTexts::of_page(&p.page_name, &p.description, &p.intents),
                ),
                Record::Intent(i) => (
                    atlas_navigate::intent_key(&i.intent_id),
                    DocTexts::of_intent(&i.intent_text, &i.keywords),
                ),
                _ => continue,
            };
            by_app
                .entry(record.app_id().to_string())
                .or_default()
                .push(doc);
        }
        let mut ready = HashMap::new();
        for (app_id, docs) in &by_app {
            match self.embed_ahead(app_id, docs) {
                Ok(vectors) => ready.extend(vectors),
                Err(e) => tracing::warn!("embedding followed changes: {e}"),
            }
        }
        let embedder = Prepared {
            inner: self.embedder.as_ref(),
            ready: &ready,
        };
        let mut state = self.state.write();
        // Settled under the write lock: no write of ours can slip between the overlay and this.
        let records = activity::as_reports(&state.graph, round.settle());
        for event in events::of(&state.graph, &records, self.events.receiver_count() > 0) {
            let _ = self.events.send(event);
        }
        for (app_id, report) in activity::Activity::reports_of(&records) {
            self.activity.remember(&app_id, report);
        }
        for record in records {
            if let Err(e) = state.apply(&record, &embedder) {
                tracing::warn!("a followed change did not apply: {e}");
            }
        }
    }
}
