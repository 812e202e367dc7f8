//! Reaching the database: errors sorted into "away" and "refused", TLS with rustls, the
//! replica's name, and creating a database.

use std::sync::Arc;

use atlas_store::StoreError;

use crate::PgOptions;

pub(crate) fn db_error(e: tokio_postgres::Error) -> StoreError {
    // No SQL state: the connection, not the statement, failed. Class 08 (connection
    // exception), 57P01-57P03 (the server shutting down or starting) and 53300 (no connection
    // slot left) say the same from the server's side.
    let away = e.code().is_none_or(|code| {
        let code = code.code();
        code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
    });
    let disk_full = e
        .code()
        .is_some_and(|c| *c == tokio_postgres::error::SqlState::DISK_FULL);
    if e.is_closed() || away {
        StoreError::away("the database", e)
    } else if disk_full {
        // Refused for now, as a full data folder is: 503, and tried again once space is freed.
        let cause = e
            .as_db_error()
            .map_or_else(|| e.to_string(), |db| db.message().to_string());
        StoreError::DatabaseFull { cause }
    } else {
        match e.as_db_error() {
            // The server's own words (severity and message), without the driver's wrapping.
            Some(db) => StoreError::caused("database error", db.clone()),
            None => StoreError::caused("database error", e),
        }
    }
}

pub(crate) fn pool_error(e: deadpool_postgres::PoolError) -> StoreError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db_error(e),
        other => StoreError::away("the database", other),
    }
}

/// A random 63-bit name for this replica's rows: the standard library's randomly keyed hasher
/// over the process id and the clock (no random-number crate needed for a name).
pub(crate) fn replica_name() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    (h.finish() >> 1) as i64
}

/// The connection string without its password, for logs.
pub(crate) fn redacted(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
        .map(|(h, p)| match h {
            tokio_postgres::config::Host::Tcp(h) => format!("{h}:{p}"),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .collect();
    format!(
        "PostgreSQL {}@{}/{}",
        config.get_user().unwrap_or("?"),
        hosts.join(","),
        config.get_dbname().unwrap_or("?")
    )
}

pub(crate) fn tls(
    options: &PgOptions,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = &options.ca_file {
        let pem = std::fs::read(path)
            .map_err(|e| StoreError::caused(format!("cannot read {}", path.display()), e))?;
        let mut reader = std::io::Cursor::new(pem);
        for cert in rustls_pemfile_certs(&mut reader) {
            roots
                .add(cert)
                .map_err(|e| StoreError::caused(path.display().to_string(), e))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::caused("", e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The certificates of a PEM file.
pub(crate) fn rustls_pemfile_certs(
    reader: &mut dyn std::io::BufRead,
) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    let mut text = Vec::new();
    let _ = reader.read_to_end(&mut text);
    rustls::pki_types::CertificateDer::pem_slice_iter(&text)
        .filter_map(Result::ok)
        .collect()
}

/// Creates the database `name` on the server of `url` (connecting to `url`'s own database to do
/// it) and answers the address of the new one: for tests, benchmarks, and `atlas migrate` into a
/// database that does not exist yet.
pub fn create_database(url: &str, name: &str) -> Result<String, StoreError> {
    on_server(url, &format!("CREATE DATABASE \"{}\"", checked(name)?))?;
    Ok(with_database(url, name))
}

/// Drops the database `name` of the server of `url`, if it exists, closing its connections:
/// what a benchmark or a test created goes when it is done.
pub fn drop_database(url: &str, name: &str) -> Result<(), StoreError> {
    on_server(
        url,
        &format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            checked(name)?
        ),
    )
}

/// `name`, if it can stand in a statement unquoted by anything but double quotes.
fn checked(name: &str) -> Result<&str, StoreError> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(StoreError::Io(format!("bad database name {name:?}")));
    }
    Ok(name)
}

/// Runs `sql` on `url`'s database, from a thread of its own (callers may or may not be inside
/// a runtime).
fn on_server(url: &str, sql: &str) -> Result<(), StoreError> {
    let config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| StoreError::caused("bad PostgreSQL address", e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StoreError::caused("", e))?;
    let tls = tls(&PgOptions::default())?;
    let sql = sql.to_string();
    std::thread::spawn(move || {
        runtime.block_on(async move {
            let (client, connection) = config.connect(tls).await.map_err(db_error)?;
            tokio::spawn(connection);
            client.batch_execute(&sql).await.map_err(db_error)
        })
    })
    .join()
    .map_err(|_| StoreError::Io("a statement on the server panicked".into()))?
}

/// `url` with its database replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_end = base[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(base.len());
    format!("{}/{name}{query}", &base[..host_end])
}
