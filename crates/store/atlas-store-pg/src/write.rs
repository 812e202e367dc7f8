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

/// Concurrent transactions per replica: enough for PostgreSQL to flush several commits at once,
/// few enough that each takes in many reports (`atlas bench postgres`, 16 clients, 2026-11-27:
/// one replica 3,600 reports/s with 8 lanes, 5,500 with 4, 5,200 with 2).
pub(crate) const LANES: usize = 4;

/// What one transaction writes: each entity's last version and the number of the write it
/// came from, each transition's counters.
#[derive(Default)]
struct Group {
    /// (kind, app_id, id) → data, write number. Sorted, so every writer locks rows in one order.
    entities: BTreeMap<(&'static str, String, String), (Value, u64)>,
    /// (app_id, id) → data, write number and counters.
    transitions: BTreeMap<(String, String), (Value, u64, Tally)>,
    /// (app_id, id) → what reports added to an edge the database holds (no whole version of it
    /// in this group).
    added: BTreeMap<(String, String), Growth>,
}

/// What a group's reports added to one edge: the counters, the last failure's reason, the time
/// of the last.
#[derive(Default)]
struct Growth {
    counts: Counts,
    reason: Option<String>,
    at: i64,
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
            Record::Added(a) => {
                let key = (a.app_id.clone(), a.transition_id.clone());
                match self.transitions.get_mut(&key) {
                    // The edge is written whole in this group: the growth joins its counters.
                    Some((data, _, Tally::Set(c) | Tally::Add(c))) => {
                        c.add(a.added);
                        let mut t: atlas_model::Transition = serde_json::from_value(data.take())?;
                        a.apply_to(&mut t);
                        *data = serde_json::to_value(&t)?;
                    }
                    None => {
                        let growth = self.added.entry(key).or_default();
                        growth.counts.add(a.added);
                        if a.reason.is_some() {
                            growth.reason.clone_from(&a.reason);
                        }
                        growth.at = growth.at.max(a.at);
                    }
                }
                return Ok(());
            }
            Record::App(a) => ("app", &a.app_id, &a.app_id, serde_json::to_value(a)?),
            Record::Page(p) => ("page", &p.app_id, &p.page_id, serde_json::to_value(p)?),
            Record::Intent(i) => ("intent", &i.app_id, &i.intent_id, serde_json::to_value(i)?),
            Record::Trace(t) => ("trace", &t.app_id, &t.trace_id, serde_json::to_value(t)?),
            Record::Stepped(_) => unreachable!("the store's append refuses steps"),
            Record::Transition(t) => {
                let key = (t.app_id.clone(), t.transition_id.clone());
                // Its counters are what memory held after every growth before it.
                self.added.remove(&key);
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
                    // Growth of this group before it (only an edge not written whole in the
                    // group has any) joins its counters; its JSON is newer.
                    None => {
                        let mut c = *added;
                        if let Some(growth) = self.added.remove(&key) {
                            c.add(growth.counts);
                        }
                        Tally::Add(c)
                    }
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
        shared.mark(!matches!(outcome, Err(StoreError::Unavailable { .. })));
        shared.note_commit(&outcome);
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
                // Long enough for the transaction in the way to end: 2, 4, … 32 ms.
                tokio::time::sleep(std::time::Duration::from_millis(1 << attempt)).await;
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
    let seq = match write_group(&tx, group, shared.writer).await {
        Ok(seq) => seq,
        Err(e) => {
            // Forgotten while the transaction is open (see `Pending::unbegin`).
            shared.pending.lock().unbegin(ids);
            return Err(e);
        }
    };
    // A failed COMMIT is never tried again: it has ended by the time it answers, and its
    // outcome may be unknown (a lost connection). The writes fail, and their entities are read
    // back from the database, whichever way it went.
    tx.commit()
        .await
        .map_err(|e| Failure::Fatal(crate::db_error(e)))?;
    if let Some(seq) = seq {
        shared
            .latest
            .fetch_max(seq, std::sync::atomic::Ordering::Relaxed);
        shared.committed.notify_one();
    }
    Ok(())
}

/// Writes a group's entities, transitions, growth and changes in `tx`; answers the newest
/// change's number.
async fn write_group(
    tx: &deadpool_postgres::Transaction<'_>,
    group: &Group,
    writer: i64,
) -> Result<Option<i64>, Failure> {
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
        tx.execute(&statement, &[&kinds, &apps, &ids, &data, &writer, &wseqs])
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
                &apps, &ids, &data, &ok, &fail, &latency, &samples, &writer, &wseqs,
            ],
        )
        .await?;
    }
    let grown = add_growth(tx, group, writer).await?;
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
    if kinds.is_empty() {
        Ok(grown)
    } else {
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
        Ok(seq.max(grown))
    }
}

/// Adds what reports added to edges to their rows, and writes each growth as a change the other
/// replicas add in turn; answers the newest change's number. An edge this replica created may
/// still be in another lane's transaction, not yet committed: then the whole transaction is
/// tried again a moment later, as for a deadlock.
async fn add_growth(
    tx: &deadpool_postgres::Transaction<'_>,
    group: &Group,
    writer: i64,
) -> Result<Option<i64>, Failure> {
    if group.added.is_empty() {
        return Ok(None);
    }
    let mut apps = Vec::with_capacity(group.added.len());
    let mut ids = Vec::with_capacity(group.added.len());
    let (mut ok, mut fail, mut latency, mut samples) = (vec![], vec![], vec![], vec![]);
    let (mut at, mut times, mut reasons) = (vec![], vec![], vec![]);
    for ((app, id), growth) in &group.added {
        apps.push(app.as_str());
        ids.push(id.as_str());
        ok.push(growth.counts.success as i64);
        fail.push(growth.counts.fail as i64);
        latency.push(growth.counts.latency_total_ms);
        samples.push(growth.counts.latency_samples as i64);
        at.push(growth.at);
        times.push(atlas_model::rfc3339_of_seconds(growth.at));
        reasons.push(growth.reason.as_deref());
    }
    // One statement: the rows' counters grow (their JSON keeps the edge's time and last
    // failure), and each growth becomes a change.
    let statement = tx
        .prepare_cached(
            "WITH u AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[],
                     $5::float8[], $6::int8[], $7::int8[], $8::text[], $9::text[])
                     AS u(a, i, o, f, l, n, s, w, r)),
                  grown AS (UPDATE atlas_transitions AS t
                     SET success_count = t.success_count + u.o,
                         fail_count = t.fail_count + u.f,
                         latency_total_ms = t.latency_total_ms + u.l,
                         latency_samples = t.latency_samples + u.n,
                         data = t.data || jsonb_strip_nulls(
                             jsonb_build_object('updated_at', u.w, 'last_failure_reason', u.r))
                     FROM u WHERE t.app_id = u.a AND t.transition_id = u.i
                     RETURNING 1),
                  changed AS (INSERT INTO atlas_changes (kind, app_id, id, writer,
                         added_success, added_fail, added_latency, added_samples, added_at,
                         reason)
                     SELECT 'transition', a, i, $10, o, f, l, n, s, r FROM u
                     RETURNING seq)
             SELECT (SELECT count(*) FROM grown), (SELECT max(seq) FROM changed)",
        )
        .await?;
    let row = tx
        .query_one(
            &statement,
            &[
                &apps, &ids, &ok, &fail, &latency, &samples, &at, &times, &reasons, &writer,
            ],
        )
        .await?;
    let updated: i64 = row.get(0);
    if updated < group.added.len() as i64 {
        return Err(Failure::Retry(format!(
            "{} of {} reported edges are not in the database yet",
            group.added.len() as i64 - updated,
            group.added.len()
        )));
    }
    Ok(row.get(1))
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
        // At most one a few milliseconds: under a stream of commits a notification per commit
        // cost the database as much as the writes, and a follower looks at most every
        // `follow::MIN_GAP` anyway.
        let gap = tokio::time::sleep(NOTIFY_GAP);
        let seq = shared.latest.load(std::sync::atomic::Ordering::Relaxed);
        let Ok(client) = shared.pool.get().await else {
            continue;
        };
        // The writer's name first: a replica's own follower skips its notifications.
        let sql = format!(
            "BEGIN; SET LOCAL synchronous_commit TO off; \
             SELECT pg_notify('atlas_changes', '{}:{seq}'); COMMIT",
            shared.writer
        );
        if let Err(e) = client.batch_execute(&sql).await {
            tracing::debug!("notifying the other replicas: {e}");
        }
        drop(client);
        gap.await;
    }
}

/// The least time between two notifications of one replica.
const NOTIFY_GAP: std::time::Duration = std::time::Duration::from_millis(5);

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_store::Added;

    fn edge() -> atlas_model::Transition {
        atlas_model::Transition {
            transition_id: "t".into(),
            app_id: "a".into(),
            ..Default::default()
        }
    }

    fn grown(success: u64, reason: Option<&str>, at: i64) -> Record {
        Record::Added(Added {
            app_id: "a".into(),
            transition_id: "t".into(),
            added: Counts {
                success,
                ..Default::default()
            },
            reason: reason.map(str::to_string),
            at,
        })
    }

    fn tally(group: &Group) -> Option<(bool, u64)> {
        group.transitions.values().next().map(|(_, _, t)| match t {
            Tally::Set(c) => (true, c.success),
            Tally::Add(c) => (false, c.success),
        })
    }

    #[test]
    fn a_groups_growth_is_summed_and_joins_a_whole_version_of_its_edge() {
        // Growth alone: summed, the last reason and the latest time kept.
        let mut group = Group::default();
        group.add(&grown(1, Some("first"), 10), 1).unwrap();
        group.add(&grown(2, None, 12), 2).unwrap();
        let growth = &group.added[&("a".to_string(), "t".to_string())];
        assert_eq!((growth.counts.success, growth.at), (3, 12));
        assert_eq!(growth.reason.as_deref(), Some("first"));
        assert!(group.transitions.is_empty());

        // A report that writes the edge whole after it: both increments, once, in one row.
        let counted = Record::Counted {
            transition: edge(),
            added: Counts {
                success: 5,
                ..Default::default()
            },
        };
        group.add(&counted, 3).unwrap();
        assert!(group.added.is_empty());
        assert_eq!(tally(&group), Some((false, 8)));

        // Growth after a whole edge joins its counters; a whole edge set afterwards holds it.
        group.add(&grown(1, None, 13), 4).unwrap();
        assert_eq!(tally(&group), Some((false, 9)));
        let mut group = Group::default();
        group.add(&grown(4, None, 10), 1).unwrap();
        group.add(&Record::Transition(edge()), 2).unwrap();
        assert!(
            group.added.is_empty(),
            "the whole edge's counters include it"
        );
        assert_eq!(tally(&group), Some((true, 0)));
    }
}
