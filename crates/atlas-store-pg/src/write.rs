//! The writer: appends become transactions, many appends to one transaction (group commit).
//!
//! One writer per replica keeps this replica's appends in the order it made them (a page's newer
//! version never lands before its older one); many replicas write at once, and what they could
//! race on—a transition's counters—is added by the database, never overwritten.

use std::collections::BTreeMap;

use atlas_store::{CommitSender, Counts, Record, StoreError};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::Shared;

/// Most appends folded into one transaction.
const MAX_GROUP: usize = 512;
/// Retries of a transaction the database aborted for a deadlock or serialization failure.
const MAX_RETRIES: usize = 5;

/// A write: its id among this replica's pending writes, its records, and who waits for it.
pub(crate) type Append = (u64, Vec<Record>, CommitSender);

/// What one transaction writes: each entity's last version, each transition's counters.
#[derive(Default)]
struct Group {
    /// (kind, app_id, id) → data. Sorted, so every writer locks rows in one order.
    entities: BTreeMap<(&'static str, String, String), Value>,
    /// (app_id, id) → data and its counters.
    transitions: BTreeMap<(String, String), (Value, Tally)>,
}

/// A transition's counters in a group: set to a value (a whole transition, as an import or a
/// migration writes it) or added to what the database holds (a report).
#[derive(Clone, Copy)]
enum Tally {
    Set(Counts),
    Add(Counts),
}

fn counts_of(t: &atlas_model::Transition) -> Counts {
    Counts {
        success: t.success_count,
        fail: t.fail_count,
        latency_total_ms: t.latency_total_ms,
        latency_samples: t.latency_samples,
    }
}

impl Group {
    fn add(&mut self, record: &Record) -> Result<(), serde_json::Error> {
        let (kind, app_id, id, data) = match record {
            Record::App(a) => ("app", &a.app_id, &a.app_id, serde_json::to_value(a)?),
            Record::Page(p) => ("page", &p.app_id, &p.page_id, serde_json::to_value(p)?),
            Record::Intent(i) => ("intent", &i.app_id, &i.intent_id, serde_json::to_value(i)?),
            Record::Trace(t) => ("trace", &t.app_id, &t.trace_id, serde_json::to_value(t)?),
            Record::Transition(t) => {
                let key = (t.app_id.clone(), t.transition_id.clone());
                self.transitions
                    .insert(key, (serde_json::to_value(t)?, Tally::Set(counts_of(t))));
                return Ok(());
            }
            Record::Counted {
                transition: t,
                added,
            } => {
                let key = (t.app_id.clone(), t.transition_id.clone());
                let data = serde_json::to_value(t)?;
                let tally = match self.transitions.get(&key).map(|(_, tally)| *tally) {
                    Some(Tally::Set(mut c)) => {
                        c.add(*added);
                        Tally::Set(c)
                    }
                    Some(Tally::Add(mut c)) => {
                        c.add(*added);
                        Tally::Add(c)
                    }
                    None => Tally::Add(*added),
                };
                self.transitions.insert(key, (data, tally));
                return Ok(());
            }
        };
        self.entities
            .insert((kind, app_id.clone(), id.clone()), data);
        Ok(())
    }
}

/// Takes appends off `queue` until it closes, committing whatever has queued up as one
/// transaction and answering each append once its transaction committed (or failed).
pub(crate) async fn run(
    shared: std::sync::Arc<Shared>,
    mut queue: mpsc::UnboundedReceiver<Append>,
) {
    while let Some(first) = queue.recv().await {
        let mut waiting = vec![first];
        while waiting.len() < MAX_GROUP {
            match queue.try_recv() {
                Ok(more) => waiting.push(more),
                Err(_) => break,
            }
        }
        let mut group = Group::default();
        let mut built = Ok(());
        let ids: Vec<u64> = waiting.iter().map(|(id, _, _)| *id).collect();
        for record in waiting.iter().flat_map(|(_, records, _)| records) {
            if let Err(e) = group.add(record) {
                built = Err(e.to_string());
                break;
            }
        }
        let outcome = match built {
            Ok(()) => commit_with_retries(&shared, &group, &ids).await,
            Err(e) => Err(StoreError::Io(e)),
        };
        if outcome.is_err() {
            shared.pending.lock().failed(&ids);
        }
        shared.mark(!matches!(outcome, Err(StoreError::Unavailable(_))));
        for (_, _, answer) in waiting {
            let _ = answer.send(outcome.clone());
        }
    }
}

async fn commit_with_retries(
    shared: &Shared,
    group: &Group,
    ids: &[u64],
) -> Result<(), StoreError> {
    let mut attempt = 0;
    loop {
        match commit(shared, group, ids).await {
            Ok(()) => return Ok(()),
            Err(Failure::Retry(e)) if attempt < MAX_RETRIES => {
                attempt += 1;
                tracing::debug!("retrying a write the database aborted: {e}");
            }
            Err(Failure::Retry(e)) => return Err(StoreError::Io(e)),
            Err(Failure::Fatal(e)) => return Err(e),
        }
    }
}

enum Failure {
    /// A deadlock or serialization failure: the transaction did nothing and can run again.
    Retry(String),
    Fatal(StoreError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        use tokio_postgres::error::SqlState;
        match e.code() {
            Some(c)
                if *c == SqlState::T_R_DEADLOCK_DETECTED
                    || *c == SqlState::T_R_SERIALIZATION_FAILURE =>
            {
                Failure::Retry(e.to_string())
            }
            _ => Failure::Fatal(crate::db_error(e)),
        }
    }
}

async fn commit(shared: &Shared, group: &Group, ids: &[u64]) -> Result<(), Failure> {
    let mut client = shared
        .pool
        .get()
        .await
        .map_err(|e| Failure::Fatal(crate::pool_error(e)))?;
    let tx = client.transaction().await?;
    // The transaction's id first: the follower knows these writes are in the database once its
    // snapshot sees this id (see `pending`).
    let xid: String = tx
        .query_one("SELECT pg_current_xact_id()::text", &[])
        .await?
        .get(0);
    if let Ok(xid) = xid.parse() {
        shared.pending.lock().began(ids, xid);
    }
    if !group.entities.is_empty() {
        let mut kinds = Vec::new();
        let mut apps = Vec::new();
        let mut ids = Vec::new();
        let mut data = Vec::new();
        for ((kind, app, id), value) in &group.entities {
            kinds.push(*kind);
            apps.push(app.as_str());
            ids.push(id.as_str());
            data.push(value);
        }
        tx.execute(
            "INSERT INTO atlas_entities (kind, app_id, id, data)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
             ON CONFLICT (kind, app_id, id) DO UPDATE SET data = EXCLUDED.data",
            &[&kinds, &apps, &ids, &data],
        )
        .await?;
    }
    for setting in [true, false] {
        let rows: Vec<_> = group
            .transitions
            .iter()
            .filter_map(|((app, id), (data, tally))| match (tally, setting) {
                (Tally::Set(c), true) | (Tally::Add(c), false) => Some((app, id, data, *c)),
                _ => None,
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let apps: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        let ids: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
        let data: Vec<&Value> = rows.iter().map(|r| r.2).collect();
        let ok: Vec<i64> = rows.iter().map(|r| r.3.success as i64).collect();
        let fail: Vec<i64> = rows.iter().map(|r| r.3.fail as i64).collect();
        let latency: Vec<f64> = rows.iter().map(|r| r.3.latency_total_ms).collect();
        let samples: Vec<i64> = rows.iter().map(|r| r.3.latency_samples as i64).collect();
        // Reports add to the counters in the database, in one statement: two replicas reporting
        // the same edge at once both count.
        let merge = if setting {
            "success_count = EXCLUDED.success_count, fail_count = EXCLUDED.fail_count,
             latency_total_ms = EXCLUDED.latency_total_ms, latency_samples = EXCLUDED.latency_samples"
        } else {
            "success_count = t.success_count + EXCLUDED.success_count,
             fail_count = t.fail_count + EXCLUDED.fail_count,
             latency_total_ms = t.latency_total_ms + EXCLUDED.latency_total_ms,
             latency_samples = t.latency_samples + EXCLUDED.latency_samples"
        };
        let sql = format!(
            "INSERT INTO atlas_transitions AS t (app_id, transition_id, data, success_count,
                 fail_count, latency_total_ms, latency_samples)
             SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::int8[], $5::int8[],
                 $6::float8[], $7::int8[])
             ON CONFLICT (app_id, transition_id) DO UPDATE SET data = EXCLUDED.data, {merge}"
        );
        tx.execute(&sql, &[&apps, &ids, &data, &ok, &fail, &latency, &samples])
            .await?;
    }
    // The change feed: one row per entity written, and a notification carrying the newest
    // sequence number, delivered by PostgreSQL when (and only if) the transaction commits.
    let mut kinds: Vec<&str> = Vec::new();
    let mut apps: Vec<&str> = Vec::new();
    let mut ids: Vec<&str> = Vec::new();
    for (kind, app, id) in group.entities.keys() {
        kinds.push(kind);
        apps.push(app);
        ids.push(id);
    }
    for (app, id) in group.transitions.keys() {
        kinds.push("transition");
        apps.push(app);
        ids.push(id);
    }
    tx.execute(
        "WITH c AS (INSERT INTO atlas_changes (kind, app_id, id)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) RETURNING seq)
         SELECT pg_notify('atlas_changes', max(seq)::text) FROM c",
        &[&kinds, &apps, &ids],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
