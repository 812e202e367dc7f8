//! The stores a test suite runs against: each test runs once on a temporary folder and once on a
//! fresh database of the PostgreSQL server that `ATLAS_TEST_PG` names (`scripts/test.sh` starts
//! one). Without `ATLAS_TEST_PG` the PostgreSQL runs are skipped, unless `ATLAS_REQUIRE_PG=1`
//! says the server must be there, as the test script does once it started one.

pub mod http;
pub mod small_disk;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use atlas_service::{Atlas, CheckpointPolicy};
use atlas_store::Store;
use atlas_text::HashEmbedder;

use crate::{PgOptions, StoreAddress, open_store};

/// The PostgreSQL server `ATLAS_TEST_PG` names for tests, or `None` (the caller skips) when it
/// names none; with `ATLAS_REQUIRE_PG=1` a missing server is a failure, not a skip.
pub fn test_server() -> Option<String> {
    let url = std::env::var("ATLAS_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty());
    if url.is_none() {
        assert!(
            std::env::var("ATLAS_REQUIRE_PG").as_deref() != Ok("1"),
            "ATLAS_REQUIRE_PG=1 but ATLAS_TEST_PG names no server"
        );
        eprintln!("ATLAS_TEST_PG is not set: skipping the PostgreSQL run");
    }
    url
}

/// One test's store.
pub enum TestStore {
    /// A temporary folder, removed with it.
    Folder(tempfile::TempDir),
    /// A database of the test server, by its URL.
    Postgres(String),
}

impl TestStore {
    /// A new, empty temporary folder.
    pub fn folder() -> TestStore {
        TestStore::Folder(tempfile::tempdir().expect("a temporary folder"))
    }

    /// A new, empty database on the test server; `None` when there is none to use.
    pub fn postgres() -> Option<TestStore> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let url = test_server()?;
        let name = format!(
            "atlas_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0)
        );
        let url = atlas_store_pg::create_database(&url, &name).expect("create a test database");
        Some(TestStore::Postgres(url))
    }

    /// Where the store is, as a process is told it.
    pub fn address(&self) -> StoreAddress {
        match self {
            TestStore::Folder(dir) => StoreAddress::Folder(dir.path().to_path_buf()),
            TestStore::Postgres(url) => StoreAddress::Postgres(url.clone()),
        }
    }

    /// The store, opened.
    pub fn open(&self) -> Arc<dyn Store> {
        open_store(&self.address(), &PgOptions::default()).expect("open the test store")
    }

    /// The knowledge bases on this store: the folder's `kb/` (its one writer), or the database's
    /// files (shared), with the built-in embedder.
    pub fn kb(&self) -> atlas_kb::KnowledgeBase {
        let embedder = Arc::new(HashEmbedder::default());
        match self {
            TestStore::Folder(dir) => {
                atlas_kb::KnowledgeBase::open(&dir.path().join("kb"), embedder)
            }
            TestStore::Postgres(_) => {
                atlas_kb::KnowledgeBase::open_shared(self.files("kb"), embedder)
            }
        }
        .expect("open the knowledge bases")
    }

    /// The business graph on this store, as [`TestStore::kb`].
    pub fn biz(&self) -> Result<atlas_biz::BizStore, atlas_biz::BizError> {
        let embedder = Arc::new(HashEmbedder::default());
        match self {
            TestStore::Folder(dir) => atlas_biz::BizStore::open(&dir.path().join("biz"), embedder),
            TestStore::Postgres(_) => atlas_biz::BizStore::open_shared(self.files("biz"), embedder),
        }
    }

    /// The files under `scope` (`kb`, `biz`) as this store keeps them.
    pub fn files(&self, scope: &str) -> Arc<dyn atlas_store::files::Files> {
        match self {
            TestStore::Folder(dir) => {
                Arc::new(atlas_store::files::Folder::new(&dir.path().join(scope)))
            }
            TestStore::Postgres(url) => {
                let pg = atlas_store_pg::PgStore::connect(url, PgOptions::default())
                    .expect("connect to the test database");
                Arc::new(atlas_store::files::Scoped::new(pg.files(), scope))
            }
        }
    }

    /// The graph service on this store, with the built-in embedder.
    pub fn open_atlas(&self) -> Arc<Atlas> {
        Atlas::open(
            self.open(),
            Arc::new(HashEmbedder::default()),
            CheckpointPolicy::default(),
        )
        .expect("open atlas")
    }
}

/// The graph service on the data folder `dir`, with the built-in embedder.
pub fn open_atlas_at(dir: &std::path::Path) -> Arc<Atlas> {
    let store = Arc::new(atlas_store_fs::FsStore::open(dir).expect("open the data folder"));
    Atlas::open(
        store,
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )
    .expect("open atlas")
}

/// The runtime `on_every_store!`'s tests run on, named through this crate.
#[doc(hidden)]
pub use tokio as __tokio;

/// Declares each named `async fn NAME(store: TestStore)` as two tests, `folder::NAME` and
/// `postgres::NAME`, on this crate's tokio (the suite needs none of its own).
#[macro_export]
macro_rules! on_every_store {
    ($($name:ident),* $(,)?) => {
        mod folder {
            $(
                #[$crate::testing::__tokio::test(
                    crate = "atlas_wiring::testing::__tokio",
                    flavor = "multi_thread",
                    worker_threads = 2
                )]
                async fn $name() {
                    super::$name($crate::testing::TestStore::folder()).await
                }
            )*
        }
        mod postgres {
            $(
                #[$crate::testing::__tokio::test(
                    crate = "atlas_wiring::testing::__tokio",
                    flavor = "multi_thread",
                    worker_threads = 2
                )]
                async fn $name() {
                    if let Some(store) = $crate::testing::TestStore::postgres() {
                        super::$name(store).await
                    }
                }
            )*
        }
    };
}
