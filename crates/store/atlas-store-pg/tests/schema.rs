//! The schema on a real server (`ATLAS_TEST_PG`): created once, refused when a newer Atlas
//! migrated it, and an unreachable server is an error, not a hang or a panic.

use atlas_store::StoreError;
use atlas_store_pg::{PgOptions, PgStore, create_database};

fn server() -> Option<String> {
    let url = std::env::var("ATLAS_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty());
    assert!(
        url.is_some() || std::env::var("ATLAS_REQUIRE_PG").as_deref() != Ok("1"),
        "ATLAS_REQUIRE_PG=1 but ATLAS_TEST_PG names no server"
    );
    url
}

fn execute(url: &str, sql: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
    });
}

#[test]
fn a_database_migrated_by_a_newer_atlas_is_refused() {
    let Some(server) = server() else { return };
    let url = create_database(&server, &format!("atlas_schema_{}", std::process::id())).unwrap();
    drop(PgStore::connect(&url, PgOptions::default()).unwrap());
    // Opening again finds the schema in place and changes nothing.
    drop(PgStore::connect(&url, PgOptions::default()).unwrap());
    execute(
        &url,
        "UPDATE atlas_meta SET value = '99' WHERE key = 'schema_version'",
    );
    match PgStore::connect(&url, PgOptions::default()) {
        Err(StoreError::TooNew {
            found, supported, ..
        }) => {
            assert_eq!(found, "schema 99");
            assert_eq!(
                supported,
                format!("schema {}", atlas_store_pg::SCHEMA_VERSION)
            );
        }
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("a newer schema was opened"),
    }
}

#[test]
fn a_server_that_does_not_answer_is_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = PgOptions {
        connect_timeout: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    match PgStore::connect(&format!("postgres://atlas@127.0.0.1:{port}/atlas"), options) {
        Err(e @ StoreError::Unavailable { .. }) => {
            assert!(e.to_string().contains("database"), "{e}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("connected to nothing"),
    }
    assert!(matches!(
        PgStore::connect("postgres://[not an address", PgOptions::default()),
        Err(StoreError::Caused { .. })
    ));
}

#[test]
fn a_full_database_disk_refuses_the_write_for_now_and_keeps_nothing_of_it() {
    use atlas_store::{Record, Store};
    let Some(server) = server() else { return };
    let url = create_database(&server, &format!("atlas_full_{}", std::process::id())).unwrap();
    let store = PgStore::connect(&url, PgOptions::default()).unwrap();
    let app = |id: &str| {
        Record::App(atlas_model::App {
            app_id: id.into(),
            ..Default::default()
        })
    };
    store
        .append(vec![app("com.kept.first")])
        .wait_blocking()
        .unwrap();
    // The server's disk fills at the commit: a deferred trigger raises what PostgreSQL raises
    // then (SQLSTATE 53100).
    execute(
        &url,
        "CREATE FUNCTION atlas_test_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; \
         END $$; \
         CREATE CONSTRAINT TRIGGER atlas_test_full AFTER INSERT OR UPDATE ON atlas_entities \
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION atlas_test_full();",
    );
    let refused = store
        .append(vec![app("com.refused")])
        .wait_blocking()
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::DatabaseFull { .. }) && refused.is_transient(),
        "{refused}"
    );
    assert!(refused.to_string().contains("No space left"), "{refused}");
    // Writes are refused up front (health says so) until one is tried again.
    assert!(matches!(
        store.writable(),
        Err(StoreError::DatabaseFull { .. })
    ));
    store.resume_writes().unwrap();
    assert!(store.writable().is_ok());
    assert!(
        store
            .append(vec![app("com.refused.again")])
            .wait_blocking()
            .is_err()
    );
    assert!(store.writable().is_err());
    execute(&url, "DROP TRIGGER atlas_test_full ON atlas_entities");
    store.resume_writes().unwrap();
    store
        .append(vec![app("com.kept.after")])
        .wait_blocking()
        .unwrap();
    let apps: Vec<String> = store
        .load()
        .unwrap()
        .apps
        .into_iter()
        .map(|a| a.app.app_id)
        .collect();
    assert!(apps.contains(&"com.kept.first".to_string()), "{apps:?}");
    assert!(apps.contains(&"com.kept.after".to_string()), "{apps:?}");
    assert!(!apps.contains(&"com.refused".to_string()), "{apps:?}");
    assert!(!apps.contains(&"com.refused.again".to_string()), "{apps:?}");
}
