//! Reading the graph out of the tables: all of it in one snapshot at start-up, or row by row.

use std::collections::HashMap;

use atlas_model::{App, Intent, Page, Trace, Transition};
use atlas_store::{AppData, Record, StoreError};
use futures_util::{StreamExt, TryStreamExt};

use crate::Shared;
use crate::connect::{db_error, pool_error};

pub(crate) fn kind_of(record: &Record) -> &'static str {
    match record {
        Record::App(_) => "app",
        Record::Page(_) => "page",
        Record::Intent(_) => "intent",
        Record::Trace(_) | Record::Stepped(_) => "trace",
        Record::Transition(_) | Record::Counted { .. } | Record::Added(_) => "transition",
    }
}

type Counters = (Option<i64>, Option<i64>, Option<f64>, Option<i64>);

/// The record of one row: `data` is the entity's JSON; a transition's counters come from their
/// columns, which the database keeps added up.
pub(crate) fn record_of(
    kind: &str,
    data: serde_json::Value,
    counters: Counters,
) -> Result<Record, serde_json::Error> {
    Ok(match kind {
        "app" => Record::App(serde_json::from_value::<App>(data)?),
        "page" => Record::Page(serde_json::from_value::<Page>(data)?),
        "intent" => Record::Intent(serde_json::from_value::<Intent>(data)?),
        "trace" => Record::Trace(serde_json::from_value::<Trace>(data)?),
        _ => {
            let mut t: Transition = serde_json::from_value(data)?;
            t.success_count = counters.0.unwrap_or(0).max(0) as u64;
            t.fail_count = counters.1.unwrap_or(0).max(0) as u64;
            t.latency_total_ms = counters.2.unwrap_or(0.0);
            t.latency_samples = counters.3.unwrap_or(0).max(0) as u64;
            Record::Transition(t)
        }
    })
}

/// Everything in the database, read in one snapshot, and that snapshot (for the follower to
/// start from).
pub(crate) async fn load_all(shared: &Shared) -> Result<(String, Vec<AppData>), StoreError> {
    let mut client = shared.pool.get().await.map_err(pool_error)?;
    let tx = client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(db_error)?;
    let snapshot: String = tx
        .query_one("SELECT pg_current_snapshot()::text", &[])
        .await
        .map_err(db_error)?
        .get(0);
    let mut apps: HashMap<String, AppData> = HashMap::new();
    let mut orphans = 0usize;
    let no_params: [&(dyn tokio_postgres::types::ToSql + Sync); 0] = [];
    // Apps first (ORDER BY kind puts 'app' before the rest), so every other row finds its app.
    let rows = tx
        .query_raw(
            "SELECT kind, data FROM atlas_entities ORDER BY kind = 'app' DESC",
            no_params,
        )
        .await
        .map_err(db_error)?;
    let mut rows = std::pin::pin!(rows);
    while let Some(row) = rows.try_next().await.map_err(db_error)? {
        let kind: String = row.get(0);
        let record = record_of(&kind, row.get(1), (None, None, None, None))
            .map_err(|e| corrupt(&kind, e))?;
        place(&mut apps, record, &mut orphans);
    }
    let rows = tx
        .query_raw(
            "SELECT data, success_count, fail_count, latency_total_ms, latency_samples
             FROM atlas_transitions",
            no_params,
        )
        .await
        .map_err(db_error)?;
    let mut rows = std::pin::pin!(rows.map(|r| r.map_err(db_error)));
    while let Some(row) = rows.next().await {
        let row = row?;
        let counters = (row.get(1), row.get(2), row.get(3), row.get(4));
        let record =
            record_of("transition", row.get(0), counters).map_err(|e| corrupt("transition", e))?;
        place(&mut apps, record, &mut orphans);
    }
    tx.commit().await.map_err(db_error)?;
    if orphans > 0 {
        tracing::warn!("{orphans} rows belong to no app in the database and were skipped");
    }
    let mut apps: Vec<AppData> = apps.into_values().collect();
    apps.sort_by(|a, b| a.app.app_id.cmp(&b.app.app_id));
    for app in &mut apps {
        app.pages.sort_by_key(|p| p.ordinal);
    }
    Ok((snapshot, apps))
}

fn corrupt(kind: &str, e: serde_json::Error) -> StoreError {
    StoreError::Corrupt {
        path: format!("a {kind} row of the database"),
        message: e.to_string(),
    }
}

fn place(apps: &mut HashMap<String, AppData>, record: Record, orphans: &mut usize) {
    if let Record::App(app) = record {
        apps.insert(
            app.app_id.clone(),
            AppData {
                app,
                pages: Vec::new(),
                intents: Vec::new(),
                transitions: Vec::new(),
                traces: Vec::new(),
            },
        );
        return;
    }
    let Some(data) = apps.get_mut(record.app_id()) else {
        *orphans += 1;
        return;
    };
    match record {
        Record::Page(p) => data.pages.push(p),
        Record::Intent(i) => data.intents.push(i),
        Record::Trace(t) => data.traces.push(t),
        Record::Transition(t) | Record::Counted { transition: t, .. } => data.transitions.push(t),
        Record::App(_) => unreachable!("handled above"),
        Record::Added(_) | Record::Stepped(_) => unreachable!("rows are read as whole entities"),
    }
}
