//! The database's tables, created and migrated by Atlas itself.
//!
//! Migrations are numbered SQL scripts applied in order inside one transaction that holds an
//! advisory lock, so replicas starting together migrate once; the number reached is kept in
//! `atlas_meta`. A database migrated by a newer Atlas (a number this build does not know) is
//! refused rather than misread.

use atlas_store::StoreError;

/// The schema scripts, the first being version 1. Append only: a released script never changes.
const MIGRATIONS: &[&str] = &[
    // 1: the graph's entities as JSON, a transition's counters as columns (so that concurrent
    // reports are added by the database), each row's last writer and its write number (so that
    // a replica's older write never overwrites its newer one), and the change feed the replicas
    // follow.
    r#"
    CREATE TABLE atlas_entities (
        kind text NOT NULL,
        app_id text NOT NULL,
        id text NOT NULL,
        data jsonb NOT NULL,
        writer bigint NOT NULL DEFAULT 0,
        wseq bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (kind, app_id, id)
    );
    CREATE TABLE atlas_transitions (
        app_id text NOT NULL,
        transition_id text NOT NULL,
        data jsonb NOT NULL,
        success_count bigint NOT NULL,
        fail_count bigint NOT NULL,
        latency_total_ms double precision NOT NULL,
        latency_samples bigint NOT NULL,
        writer bigint NOT NULL DEFAULT 0,
        wseq bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (app_id, transition_id)
    );
    CREATE TABLE atlas_changes (
        seq bigserial PRIMARY KEY,
        tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
        kind text NOT NULL,
        app_id text NOT NULL,
        id text NOT NULL,
        at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX atlas_changes_tx ON atlas_changes (tx);
    CREATE INDEX atlas_changes_at ON atlas_changes (at);
    "#,
    // 2: the knowledge bases' and the business graph's files, and who made each change (a
    // replica skips its own file changes instead of reading back what it wrote).
    r#"
    CREATE TABLE atlas_files (
        name text PRIMARY KEY,
        body bytea NOT NULL
    );
    ALTER TABLE atlas_changes ADD COLUMN writer bigint NOT NULL DEFAULT 0;
    "#,
    // 3: what a report added to an edge, carried by its change, so that the other replicas add
    // it to their memory without reading the edge back (`added_success` is null on a change of
    // a whole entity).
    r#"
    ALTER TABLE atlas_changes
        ADD COLUMN added_success bigint,
        ADD COLUMN added_fail bigint,
        ADD COLUMN added_latency double precision,
        ADD COLUMN added_samples bigint,
        ADD COLUMN added_at bigint,
        ADD COLUMN reason text;
    "#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// A key for `pg_advisory_xact_lock`: "atlas" in ASCII.
const MIGRATION_LOCK: i64 = 0x61_74_6c_61_73;

/// Brings the database to [`SCHEMA_VERSION`]; refuses one of a newer version.
pub async fn migrate(client: &mut tokio_postgres::Client) -> Result<usize, StoreError> {
    let tx = client.transaction().await.map_err(crate::db_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(crate::db_error)?;
    // Asked, not `IF NOT EXISTS`: that would log a notice at every start.
    let fresh = tx
        .query_one("SELECT to_regclass('atlas_meta') IS NULL", &[])
        .await
        .map_err(crate::db_error)?
        .get::<_, bool>(0);
    if fresh {
        tx.batch_execute("CREATE TABLE atlas_meta (key text PRIMARY KEY, value text NOT NULL)")
            .await
            .map_err(crate::db_error)?;
    }
    let found: usize = tx
        .query_opt(
            "SELECT value FROM atlas_meta WHERE key = 'schema_version'",
            &[],
        )
        .await
        .map_err(crate::db_error)?
        .map(|row| row.get::<_, String>(0))
        .map(|v| v.parse().unwrap_or(usize::MAX))
        .unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: "the database".into(),
            found: format!("schema {found}"),
            supported: format!("schema {SCHEMA_VERSION}"),
        });
    }
    for (i, script) in MIGRATIONS.iter().enumerate().skip(found) {
        tx.batch_execute(script).await.map_err(crate::db_error)?;
        tracing::info!("database migrated to schema {}", i + 1);
    }
    tx.execute(
        "INSERT INTO atlas_meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&SCHEMA_VERSION.to_string()],
    )
    .await
    .map_err(crate::db_error)?;
    tx.commit().await.map_err(crate::db_error)?;
    Ok(SCHEMA_VERSION)
}
