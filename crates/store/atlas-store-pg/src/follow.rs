//! Following the other replicas' writes.
//!
//! Every write adds rows to `atlas_changes`, stamped with its transaction id, and notifies
//! `atlas_changes` on commit. A sequence number alone cannot say what has been seen: numbers are
//! taken when a row is inserted, but transactions commit in another order, so a follower that
//! remembered "up to 11" would miss a 10 committed later. The follower therefore remembers a
//! **snapshot** (`pg_current_snapshot()`), the set of transactions committed when it last looked,
//! and each round reads the rows of the transactions committed since: visible in the new
//! snapshot, not in the old one. That is exact whatever the commit order, and the notification
//! only says when to look (a missed one is caught up by the next, or by the periodic look).
//!
//! Each change names an entity; the follower reads the entity as it stands now (a transition's
//! counters as the database merged them), so applying the same change twice, or an older and a
//! newer one in one round, leaves the replica with the database's values.
//!
//! A report on an edge the database holds is the exception, and the common case: its change
//! carries what the report added (`added_*`), and the follower adds the other replicas' growth to
//! its memory without reading the edge back (its own is in memory already). Each transaction's
//! growth is seen in exactly one round, so each is added once; an edge that is also read whole in
//! that round takes its row instead, which holds the growth.

use atlas_store::StoreError;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use atlas_store::{Added, Counts, Followed, Record};
use futures_util::StreamExt;

use crate::Shared;

/// The changes committed between two snapshots, `$1` (the last look's) and `$2` (this one's):
/// visible in the new one, not in the old one (every follower query asks it of `atlas_changes`;
/// the first condition lets the index on `tx` skip what the old snapshot saw in full).
macro_rules! committed_in_round {
    () => {
        "tx >= pg_snapshot_xmin($1::text::pg_snapshot)
         AND NOT pg_visible_in_snapshot(tx, $1::text::pg_snapshot)
         AND pg_visible_in_snapshot(tx, $2::text::pg_snapshot)"
    };
}

/// How often a follower looks even without a notification (one lost with a dropped connection).
const POLL: Duration = Duration::from_millis(500);
/// The least time between two looks: under a stream of writes one look takes in many commits,
/// instead of one look per commit competing with the writes for the database.
const MIN_GAP: Duration = Duration::from_millis(10);
/// How long changes are kept; a replica that could not look for longer reloads everything.
pub(crate) const RETENTION: Duration = Duration::from_secs(3600);

/// The order in which entity kinds apply cleanly: an app before its pages, pages before the
/// transitions between them.
pub(crate) fn kind_rank(kind: &str) -> u8 {
    match kind {
        "app" => 0,
        "page" => 1,
        "intent" => 2,
        "transition" => 3,
        _ => 4,
    }
}

/// Follows from `snapshot` (taken with the data the replica loaded), sending each round's
/// changed entities to `sink`, until the sink is dropped.
pub(crate) async fn run(shared: Arc<Shared>, mut snapshot: String, sink: Sender<Followed>) {
    let wake = Arc::new(tokio::sync::Notify::new());
    tokio::spawn(listen(shared.clone(), wake.clone()));
    let mut looked = Instant::now();
    let mut pruned = Instant::now();
    loop {
        let _ = tokio::time::timeout(POLL, wake.notified()).await;
        tokio::time::sleep(MIN_GAP.saturating_sub(looked.elapsed())).await;
        let round = if looked.elapsed() > RETENTION / 2 {
            // Changes may have been pruned since: read everything again.
            reload(&shared).await
        } else {
            changes_since(&shared, &snapshot).await
        };
        match round {
            Ok((next, rows, versions)) => {
                shared.mark(true);
                looked = Instant::now();
                if !rows.is_empty() {
                    let (pending, seen) = (shared.clone(), next.clone());
                    let round = Followed::new(rows, move |rows| {
                        match crate::pending::Snapshot::parse(&seen) {
                            Some(seen) => {
                                let me = pending.writer;
                                pending.pending.lock().overlay(&seen, rows, &versions, me)
                            }
                            None => rows,
                        }
                    });
                    if sink.send(round).is_err() {
                        return;
                    }
                }
                snapshot = next;
            }
            Err(e) => {
                shared.mark(false);
                tracing::warn!("following the database: {e}");
                tokio::time::sleep(POLL).await;
            }
        }
        if pruned.elapsed() > Duration::from_secs(60) {
            pruned = Instant::now();
            if let Ok(client) = shared.pool.get().await {
                let secs = RETENTION.as_secs_f64();
                let _ = client
                    .execute(
                        "DELETE FROM atlas_changes WHERE at < now() - make_interval(secs => $1)",
                        &[&secs],
                    )
                    .await;
            }
        }
    }
}

/// Holds a connection that LISTENs for `atlas_changes` and wakes the follower on each
/// notification; reconnects when the connection drops.
async fn listen(shared: Arc<Shared>, wake: Arc<tokio::sync::Notify>) {
    loop {
        match shared.config.connect(shared.tls.clone()).await {
            Ok((client, mut connection)) => {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                let listening = async {
                    client.batch_execute("LISTEN atlas_changes").await?;
                    // Changes made while this connection was down are caught up at once.
                    wake.notify_one();
                    std::future::pending::<Result<(), tokio_postgres::Error>>().await
                };
                tokio::pin!(listening);
                loop {
                    tokio::select! {
                        r = &mut listening => {
                            if let Err(e) = r { tracing::debug!("LISTEN failed: {e}"); }
                            break;
                        }
                        message = messages.next() => match message {
                            Some(Ok(tokio_postgres::AsyncMessage::Notification(n))) => {
                                // A replica's own writes are in its memory; the periodic look
                                // settles them (see `pending`) without a round per commit.
                                if !is_from(n.payload(), shared.writer) {
                                    wake.notify_one();
                                }
                            }
                            Some(Ok(_)) => {}
                            Some(Err(e)) => { tracing::debug!("listener connection: {e}"); break; }
                            None => break,
                        }
                    }
                }
            }
            Err(e) => tracing::debug!("listener cannot connect: {e}"),
        }
        if shared.closed() {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether a notification's payload (`writer:seq`) names `writer`; an older replica's payload
/// (the sequence number alone) names no one.
fn is_from(payload: &str, writer: i64) -> bool {
    payload
        .split_once(':')
        .is_some_and(|(from, _)| from.parse() == Ok(writer))
}

/// The entities changed by transactions committed after `snapshot`, and the snapshot to look
/// from next.
/// What a round read: the snapshot, the rows, and each row's (writer, wseq).
type Round = (String, Vec<Record>, Vec<crate::pending::Version>);

async fn changes_since(shared: &Shared, snapshot: &str) -> Result<Round, StoreError> {
    let mut client = shared.pool.get().await.map_err(crate::pool_error)?;
    let refresh = shared.pending.lock().take_refresh();
    // One snapshot for the round: the rows must be read in the very snapshot the round names,
    // or a transaction committed between two statements would be in the rows yet not "seen",
    // and this replica's own report laid over a row that already counts it.
    let result = match client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
    {
        Ok(tx) => {
            let mut result = read_changes(&tx, snapshot, &refresh, shared.writer).await;
            if let Ok((now, _, _)) = &result
                && let Err(e) = send_changed_files(shared, &tx, snapshot, now).await
            {
                result = Err(e);
            }
            if let Err(e) = tx.commit().await {
                result = Err(crate::db_error(e));
            }
            result
        }
        Err(e) => Err(crate::db_error(e)),
    };
    if result.is_err() {
        // Read them again next round.
        let mut pending = shared.pending.lock();
        for key in refresh {
            pending.refresh_later(key);
        }
    }
    result
}

/// Sends the names of files other replicas changed between the two snapshots to whoever asked
/// for them (`PgStore::follow_files`).
async fn send_changed_files(
    shared: &Shared,
    client: &deadpool_postgres::Transaction<'_>,
    from: &str,
    to: &str,
) -> Result<(), StoreError> {
    if shared.file_sink.lock().is_none() {
        return Ok(());
    }
    let rows = client
        .query(
            &cached(
                client,
                concat!(
                    "SELECT DISTINCT id FROM atlas_changes
                     WHERE kind = 'file' AND writer <> $3 AND ",
                    committed_in_round!()
                ),
            )
            .await?,
            &[&from, &to, &shared.writer],
        )
        .await
        .map_err(crate::db_error)?;
    send_files(shared, rows.iter().map(|r| r.get(0)).collect());
    Ok(())
}

fn send_files(shared: &Shared, names: Vec<String>) {
    if names.is_empty() {
        return;
    }
    let mut sink = shared.file_sink.lock();
    if sink.as_ref().is_some_and(|s| s.send(names).is_err()) {
        *sink = None;
    }
}

/// The entities changed by transactions committed after `snapshot` (and the `refresh` ones),
/// as the database holds them now, then what the other replicas' reports added to edges not
/// read whole, and the snapshot they were read in.
async fn read_changes(
    client: &deadpool_postgres::Transaction<'_>,
    snapshot: &str,
    refresh: &[crate::pending::Key],
    me: i64,
) -> Result<Round, StoreError> {
    let kinds: Vec<&str> = refresh.iter().map(|k| k.0).collect();
    let apps: Vec<&str> = refresh.iter().map(|k| k.1.as_str()).collect();
    let ids: Vec<&str> = refresh.iter().map(|k| k.2.as_str()).collect();
    let now: String = client
        .query_one(
            &cached(client, "SELECT pg_current_snapshot()::text").await?,
            &[],
        )
        .await
        .map_err(crate::db_error)?
        .get(0);
    let rows = client
        .query(
            &cached(
                client,
                concat!(
                    "WITH k AS (
                 SELECT DISTINCT kind, app_id, id FROM atlas_changes
                 WHERE ",
                    committed_in_round!(),
                    " AND added_success IS NULL
                 UNION SELECT * FROM unnest($3::text[], $4::text[], $5::text[]))
             -- Each changed entity looked up by its key (a lateral join, so a round of a few
             -- changes never scans a table).
             SELECT k.kind, x.data, x.success_count, x.fail_count, x.latency_total_ms,
                    x.latency_samples, x.writer, x.wseq
             FROM k CROSS JOIN LATERAL (
                 SELECT e.data, NULL::bigint AS success_count, NULL::bigint AS fail_count,
                        NULL::float8 AS latency_total_ms, NULL::bigint AS latency_samples,
                        e.writer, e.wseq
                 FROM atlas_entities e
                 WHERE k.kind <> 'transition' AND e.kind = k.kind AND e.app_id = k.app_id
                   AND e.id = k.id
                 UNION ALL
                 SELECT t.data, t.success_count, t.fail_count, t.latency_total_ms,
                        t.latency_samples, t.writer, t.wseq
                 FROM atlas_transitions t
                 WHERE k.kind = 'transition' AND t.app_id = k.app_id AND t.transition_id = k.id
             ) x"
                ),
            )
            .await?,
            &[&snapshot, &now, &kinds, &apps, &ids],
        )
        .await
        .map_err(crate::db_error)?;
    let mut read = Vec::with_capacity(rows.len());
    for row in rows {
        let kind: String = row.get(0);
        let Some(data) = row.get::<_, Option<serde_json::Value>>(1) else {
            continue;
        };
        let counters = (row.get(2), row.get(3), row.get(4), row.get(5));
        let version: crate::pending::Version = (row.get(6), row.get(7));
        match crate::record_of(&kind, data, counters) {
            Ok(r) => read.push((r, version)),
            Err(e) => tracing::warn!("skipping an unreadable {kind} in the database: {e}"),
        }
    }
    read.sort_by_key(|(r, _)| kind_rank(crate::kind_of(r)));
    let (mut records, versions): (Vec<Record>, Vec<_>) = read.into_iter().unzip();
    // Growth after the whole rows (the overlay pairs rows with versions by position), and
    // none on an edge read whole: its row holds every growth this snapshot sees.
    let whole: HashSet<(&str, &str)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Transition(t) => Some((t.app_id.as_str(), t.transition_id.as_str())),
            _ => None,
        })
        .collect();
    let growth = read_growth(client, snapshot, &now, me).await?;
    let growth: Vec<Record> = growth
        .into_iter()
        .filter(|a| !whole.contains(&(a.app_id.as_str(), a.transition_id.as_str())))
        .map(Record::Added)
        .collect();
    records.extend(growth);
    Ok((now, records, versions))
}

/// What the other replicas' reports committed between the two snapshots added to edges, in
/// the order they were made. This replica's own are in its memory already.
async fn read_growth(
    client: &deadpool_postgres::Transaction<'_>,
    from: &str,
    to: &str,
    me: i64,
) -> Result<Vec<Added>, StoreError> {
    let rows = client
        .query(
            &cached(
                client,
                concat!(
                    "SELECT app_id, id, added_success, added_fail, added_latency,
                        added_samples, added_at, reason
                     FROM atlas_changes WHERE ",
                    committed_in_round!(),
                    " AND added_success IS NOT NULL AND writer <> $3 ORDER BY seq"
                ),
            )
            .await?,
            &[&from, &to, &me],
        )
        .await
        .map_err(crate::db_error)?;
    let count = |row: &tokio_postgres::Row, i: usize| {
        row.get::<_, Option<i64>>(i).unwrap_or(0).max(0) as u64
    };
    Ok(rows
        .iter()
        .map(|row| Added {
            app_id: row.get(0),
            transition_id: row.get(1),
            added: Counts {
                success: count(row, 2),
                fail: count(row, 3),
                latency_total_ms: row.get::<_, Option<f64>>(4).unwrap_or(0.0),
                latency_samples: count(row, 5),
            },
            at: row.get::<_, Option<i64>>(6).unwrap_or(0),
            reason: row.get(7),
        })
        .collect())
}

/// Everything in the database, as one round (without the rows' versions: after a database
/// absence this long, this replica's own writes have long been answered).
async fn reload(shared: &Shared) -> Result<Round, StoreError> {
    let (snapshot, apps) = crate::load_all(shared).await?;
    if shared.file_sink.lock().is_some() {
        let client = shared.pool.get().await.map_err(crate::pool_error)?;
        let rows = client
            .query("SELECT name FROM atlas_files", &[])
            .await
            .map_err(crate::db_error)?;
        send_files(shared, rows.iter().map(|r| r.get(0)).collect());
    }
    let mut records = Vec::new();
    for app in apps {
        records.push(Record::App(app.app));
        records.extend(app.pages.into_iter().map(Record::Page));
        records.extend(app.intents.into_iter().map(Record::Intent));
        records.extend(app.transitions.into_iter().map(Record::Transition));
        records.extend(app.traces.into_iter().map(Record::Trace));
    }
    records.sort_by_key(|r| kind_rank(crate::kind_of(r)));
    Ok((snapshot, records, Vec::new()))
}

/// A statement prepared once per connection: followers ask the same few questions hundreds of
/// times a second, which parsed and planned anew cost the database more than the answers.
async fn cached(
    client: &deadpool_postgres::Transaction<'_>,
    sql: &str,
) -> Result<tokio_postgres::Statement, StoreError> {
    client.prepare_cached(sql).await.map_err(crate::db_error)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_notification_names_its_writer() {
        assert!(super::is_from("42:1007", 42));
        assert!(super::is_from("-42:1", -42));
        assert!(!super::is_from("43:1007", 42));
        assert!(
            !super::is_from("1007", 1007),
            "an older replica's payload names no one"
        );
        assert!(!super::is_from("", 42));
    }
}
