//! The writers: appends become transactions, many appends to one transaction (group commit),
//! and several transactions at once, so that PostgreSQL flushes their commits together.
//!
//! Transactions of one replica may therefore commit out of the order it made its writes in. What
//! keeps a page's newer version from being overwritten by its older one is the database: each
//! row remembers which replica wrote it last and that write's number (`writer`, `wseq`), and an
//! upsert from the same replica with a lower number leaves the row alone. Between replicas the
//! last commit wins; what they could race on—a transition's counters—is added by the database,
//! never overwritten.

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

/// Concurrent transactions per replica.
pub(crate) const LANES: usize = 8;

/// What one transaction writes: each entity's last version and the number of the write it
/// came from, each transition's counters.
#[derive(Default)]
struct Group {
    /// (kind, app_id, id) → data, write number. Sorted, so every writer locks rows in one order.
    entities: BTreeMap<(&'static str, String, String), (Value, u64)>,
    /// (app_id, id) → data, write number and counters.
    transitions: BTreeMap<(String, String), (Value, u64, Tally)>,
}

/// A transition's counters in a group: set to a value (a whole transition, as an import or a
/// migration writes it) or added to what the database holds (a report).
#[derive(Clone, Copy)]
enum Tally {
    Set(Counts),
    Add(Counts),
}

impl Group {
    fn add(&mut self, record: &Record, wseq: u64) -> Result<(), serde_json::Error> {
        let (kind, app_id, id, data) = match record {
            // Refused by `append`: this store is given reports' transitions whole.
            Record::Added(_) => return Ok(()),
            Record::App(a) => ("app", &a.app_id, &a.app_id, serde_json::to_value(a)?),
            Record::Page(p) => ("page", &p.app_id, &p.page_id, serde_json::to_value(p)?),
            Record::Intent(i) => ("intent", &i.app_id, &i.intent_id, serde_json::to_value(i)?),
            Record::Trace(t) => ("trace", &t.app_id, &t.trace_id, serde_json::to_value(t)?),
            Record::Transition(t) => {
                let key = (t.app_id.clone(), t.transition_id.clone());
                self.transitions.insert(
                    key,
                    (serde_json::to_value(t)?, wseq, Tally::Set(Counts::of(t))),
                );
                return Ok(());
            }
            Record::Counted {
                transition: t,
                added,
            } => {
                let key = (t.app_id.clone(), t.transition_id.clone());
                let data = serde_json::to_value(t)?;
                let tally = match self.transitions.get(&key).map(|(_, _, tally)| *tally) {
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
                self.transitions.insert(key, (data, wseq, tally));
                return Ok(());
            }
        };
        self.entities
            .insert((kind, app_id.clone(), id.clone()), (data, wseq));
        Ok(())
    }
}

/// One lane: takes appends off the shared `queue` until it closes, committing whatever has
/// queued up as one transaction and answering each append once its transaction committed (or
/// failed).
pub(crate) async fn run(
    shared: std::sync::Arc<Shared>,
    queue: std::sync::Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Append>>>,
) {
    loop {
        let waiting = {
            let mut queue = queue.lock().await;
            let Some(first) = queue.recv().await else {
                return;
            };
            let mut waiting = vec![first];
            while waiting.len() < MAX_GROUP {
                match queue.try_recv() {
                    Ok(more) => waiting.push(more),
                    Err(_) => break,
                }
            }
            waiting
        };
        let mut group = Group::default();
        let mut built = Ok(());
        let ids: Vec<u64> = waiting.iter().map(|(id, _, _)| *id).collect();
        for (id, records, _) in &waiting {
            for record in records {
                if let Err(e) = group.add(record, *id) {
                    built = Err(e.to_string());
                }
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
    let statement = tx
        .prepare_cached("SELECT pg_current_xact_id()::text")
        .await?;
    let xid: String = tx.query_one(&statement, &[]).await?.get(0);
    if let Ok(xid) = xid.parse() {
        shared.pending.lock().began(ids, xid);
    }
    if !group.entities.is_empty() {
        let mut kinds = Vec::new();
        let mut apps = Vec::new();
        let mut ids = Vec::new();
        let mut data = Vec::new();
        let mut wseqs = Vec::new();
        for ((kind, app, id), (value, wseq)) in &group.entities {
            kinds.push(*kind);
            apps.push(app.as_str());
            ids.push(id.as_str());
            data.push(value);
            wseqs.push(*wseq as i64);
        }
        let statement = tx
            .prepare_cached(
            "INSERT INTO atlas_entities AS e (kind, app_id, id, data, writer, wseq)
             SELECT k, a, i, d, $5, w
             FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $6::int8[]) AS u(k, a, i, d, w)
             ON CONFLICT (kind, app_id, id) DO UPDATE
             SET data = EXCLUDED.data, writer = EXCLUDED.writer, wseq = EXCLUDED.wseq
             WHERE e.writer <> EXCLUDED.writer OR e.wseq < EXCLUDED.wseq",
        )
        .await?;
        tx.execute(
            &statement,
            &[&kinds, &apps, &ids, &data, &shared.writer, &wseqs],
        )
        .await?;
    }
    for setting in [true, false] {
        let rows: Vec<_> = group
            .transitions
            .iter()
            .filter_map(|((app, id), (data, wseq, tally))| match (tally, setting) {
                (Tally::Set(c), true) | (Tally::Add(c), false) => Some((app, id, data, *c, *wseq)),
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
        let wseqs: Vec<i64> = rows.iter().map(|r| r.4 as i64).collect();
        // Reports add to the counters in the database, in one statement: two replicas reporting
        // the same edge at once both count.
        // A newer write of this replica is never overwritten by an older one; the counters of a
        // report are added whatever the order.
        let newer = "(t.writer <> EXCLUDED.writer OR t.wseq < EXCLUDED.wseq)";
        let merge = if setting {
            format!(
                "data = EXCLUDED.data, writer = EXCLUDED.writer, wseq = EXCLUDED.wseq,
                 success_count = EXCLUDED.success_count, fail_count = EXCLUDED.fail_count,
                 latency_total_ms = EXCLUDED.latency_total_ms,
                 latency_samples = EXCLUDED.latency_samples
                 WHERE {newer}"
            )
        } else {
            format!(
                "data = CASE WHEN {newer} THEN EXCLUDED.data ELSE t.data END,
                 wseq = CASE WHEN {newer} THEN EXCLUDED.wseq ELSE t.wseq END,
                 writer = CASE WHEN {newer} THEN EXCLUDED.writer ELSE t.writer END,
                 success_count = t.success_count + EXCLUDED.success_count,
                 fail_count = t.fail_count + EXCLUDED.fail_count,
                 latency_total_ms = t.latency_total_ms + EXCLUDED.latency_total_ms,
                 latency_samples = t.latency_samples + EXCLUDED.latency_samples"
            )
        };
        let sql = format!(
            "INSERT INTO atlas_transitions AS t (app_id, transition_id, data, success_count,
                 fail_count, latency_total_ms, latency_samples, writer, wseq)
             SELECT a, i, d, o, f, l, n, $8, w
             FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::int8[], $5::int8[],
                 $6::float8[], $7::int8[], $9::int8[]) AS u(a, i, d, o, f, l, n, w)
             ON CONFLICT (app_id, transition_id) DO UPDATE SET {merge}"
        );
        let statement = tx.prepare_cached(&sql).await?;
        tx.execute(
            &statement,
            &[
                &apps,
                &ids,
                &data,
                &ok,
                &fail,
                &latency,
                &samples,
                &shared.writer,
                &wseqs,
            ],
        )
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
    let statement = tx
        .prepare_cached(
            "WITH c AS (INSERT INTO atlas_changes (kind, app_id, id)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) RETURNING seq)
             SELECT max(seq) FROM c",
        )
        .await?;
    let seq: Option<i64> = tx
        .query_one(&statement, &[&kinds, &apps, &ids])
        .await?
        .get(0);
    tx.commit().await?;
    if let Some(seq) = seq {
        shared
            .latest
            .fetch_max(seq, std::sync::atomic::Ordering::Relaxed);
        shared.committed.notify_one();
    }
    Ok(())
}

/// Tells the other replicas that changes were committed, up to which sequence number: one
/// NOTIFY for however many commits happened since the last. Not in the writes' transactions:
/// PostgreSQL serialises the commits of notifying transactions under one lock, which would cost
/// every write its own disk flush; and not flushed itself (`synchronous_commit` off), since a
/// lost notification only delays a follower until its next periodic look.
pub(crate) async fn notify(shared: std::sync::Arc<Shared>) {
    loop {
        shared.committed.notified().await;
        if shared.closed() {
            return;
        }
        let seq = shared.latest.load(std::sync::atomic::Ordering::Relaxed);
        let Ok(client) = shared.pool.get().await else {
            continue;
        };
        let sql = format!(
            "BEGIN; SET LOCAL synchronous_commit TO off; SELECT pg_notify('atlas_changes', '{seq}'); COMMIT"
        );
        if let Err(e) = client.batch_execute(&sql).await {
            tracing::debug!("notifying the other replicas: {e}");
        }
    }
}
