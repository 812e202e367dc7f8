//! The knowledge bases' and the business graph's files in the database (`atlas_files`), each
//! write a transaction that also adds its change to the feed, so the other replicas read the
//! file again.

use std::sync::Arc;

use atlas_store::StoreError;
use atlas_store::files::Files;

use crate::{PgStore, db_error, pool_error};

/// [`Files`] in the database of a [`PgStore`].
pub struct PgFiles {
    store: Arc<PgStore>,
}

impl PgStore {
    /// The database's files, for the knowledge bases and the business graph.
    pub fn files(self: &Arc<Self>) -> Arc<dyn Files> {
        Arc::new(PgFiles {
            store: self.clone(),
        })
    }

    /// The names of files other replicas change, batch by batch, as the follower finds them
    /// (the follower runs once the graph is followed, see `Store::follow`).
    pub fn follow_files(&self) -> std::sync::mpsc::Receiver<Vec<String>> {
        let (sink, names) = std::sync::mpsc::channel();
        *self.shared.file_sink.lock() = Some(sink);
        names
    }
}

impl Files for PgFiles {
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let (shared, name) = (self.store.shared.clone(), name.to_string());
        self.store.block_on(async move {
            let client = shared.pool.get().await.map_err(pool_error)?;
            let row = client
                .query_opt("SELECT body FROM atlas_files WHERE name = $1", &[&name])
                .await
                .map_err(db_error)?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), StoreError> {
        let (shared, name, bytes) = (self.store.shared.clone(), name.to_string(), bytes.to_vec());
        self.store.block_on(async move {
            let mut client = shared.pool.get().await.map_err(pool_error)?;
            let tx = client.transaction().await.map_err(db_error)?;
            tx.execute(
                "INSERT INTO atlas_files (name, body) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body",
                &[&name, &bytes],
            )
            .await
            .map_err(db_error)?;
            let names = vec![name];
            let seq = changed(&tx, &names, shared.writer).await?;
            tx.commit().await.map_err(db_error)?;
            shared.committed_up_to(seq);
            Ok(())
        })
    }

    fn remove(&self, name: &str) -> Result<(), StoreError> {
        let (shared, name) = (self.store.shared.clone(), name.to_string());
        self.store.block_on(async move {
            let mut client = shared.pool.get().await.map_err(pool_error)?;
            let tx = client.transaction().await.map_err(db_error)?;
            let removed = tx
                .query(
                    "DELETE FROM atlas_files WHERE name = $1 OR starts_with(name, $1 || '/')
                     RETURNING name",
                    &[&name],
                )
                .await
                .map_err(db_error)?;
            let mut names: Vec<String> = removed.iter().map(|r| r.get(0)).collect();
            names.push(name);
            let seq = changed(&tx, &names, shared.writer).await?;
            tx.commit().await.map_err(db_error)?;
            shared.committed_up_to(seq);
            Ok(())
        })
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let (shared, prefix) = (self.store.shared.clone(), prefix.to_string());
        self.store.block_on(async move {
            let client = shared.pool.get().await.map_err(pool_error)?;
            let rows = client
                .query(
                    "SELECT name FROM atlas_files WHERE $1 = '' OR starts_with(name, $1 || '/')",
                    &[&prefix],
                )
                .await
                .map_err(db_error)?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }
}

/// Adds the changes of `names` to the feed; answers the newest sequence number.
async fn changed(
    tx: &deadpool_postgres::Transaction<'_>,
    names: &[String],
    writer: i64,
) -> Result<Option<i64>, StoreError> {
    let row = tx
        .query_one(
            "WITH c AS (INSERT INTO atlas_changes (kind, app_id, id, writer)
                 SELECT 'file', '', n, $2 FROM unnest($1::text[]) AS n RETURNING seq)
             SELECT max(seq) FROM c",
            &[&names, &writer],
        )
        .await
        .map_err(db_error)?;
    Ok(row.get(0))
}
