//! Accepting connections so that no client, however many or slow, stops the server.
//!
//! `axum::serve` keeps every connection for as long as its client likes: a client that sends
//! half a header (slowloris) or opens a connection and says nothing holds memory and a file
//! descriptor for good, and twenty thousand of them reach the process's descriptor limit, after
//! which nobody, `/healthz` included, gets an answer. Here each connection's request head must
//! arrive within [`HEADER_TIMEOUT`] (and an idle keep-alive connection's next one too: hyper
//! starts that clock when it waits for a head), and at most [`Limits::max_connections`]
//! connections are served at once, a number kept below the descriptor limit. A connection past
//! it is answered at once, briefly, by a small pool of its own: `GET /healthz` with the health
//! of the server, anything else with 503 and `Retry-After`, then closed.
//!
//! Key design decision: **past the cap, answer rather than refuse.** A refused connection tells
//! a load balancer nothing; a 503 says "busy, come back", and a health probe still learns whether
//! the store is well.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::AppState;

/// How long a client may take to send a request's head, and how long a keep-alive connection
/// may sit idle before its next one.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection past the cap is given to say what it wants.
const OVER_CAP_READ: Duration = Duration::from_millis(500);
/// Connections past the cap given [`OVER_CAP_READ`] to speak at once; beyond, each is given
/// [`OVER_CAP_GLANCE`], or answered at once from what it sent.
const OVER_CAP_ANSWERED: usize = 1024;
/// How long a connection past the cap is given to speak when that many are being answered: a
/// client a moment behind its connect, not one that keeps silent.
const OVER_CAP_GLANCE: Duration = Duration::from_millis(50);
/// Descriptors kept for everything but connections: files, the journal, the database, the
/// connections past the cap.
const DESCRIPTORS_KEPT: u64 = 1024;

/// How many connections the server holds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; past it a connection is answered 503 and closed.
    pub max_connections: usize,
}

impl Limits {
    /// The limits for this process: the descriptor limit raised to its hard ceiling (as servers
    /// do), and `wanted` connections at most, fewer if the descriptors would not last.
    pub fn for_process(wanted: usize) -> Limits {
        let descriptors = raise_descriptor_limit();
        let room = descriptors.saturating_sub(DESCRIPTORS_KEPT).max(64);
        Limits {
            max_connections: wanted.min(room as usize).max(1),
        }
    }
}

/// Raises the soft limit on open files to the hard one; returns the limit in force.
fn raise_descriptor_limit() -> u64 {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit and setrlimit read and write the struct passed, which lives here.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return 1024;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit.rlim_cur = limit.rlim_max;
                }
            }
        }
        limit.rlim_cur
    }
    #[cfg(not(unix))]
    {
        8192
    }
}

/// Connections the kernel holds for the server before it accepts them (capped by the system's
/// `somaxconn`): a burst of agents connecting at once should wait in it, not be dropped.
const BACKLOG: u32 = 4096;

/// A listener on `addr` (`HOST:PORT`, a name resolved first) with a backlog for bursts.
pub async fn bind(addr: &str) -> std::io::Result<TcpListener> {
    let mut last = None;
    for address in tokio::net::lookup_host(addr).await? {
        let socket = match address {
            std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.set_reuseaddr(true)?;
        match socket.bind(address).and_then(|()| socket.listen(BACKLOG)) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other(format!("{addr} names no address"))))
}

/// Serves `state`'s router on `listener` within `limits` until `shutdown` resolves, then lets
/// the requests under way finish.
pub async fn serve_within(
    listener: TcpListener,
    state: AppState,
    limits: Limits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = crate::router(state.clone());
    let served = Arc::new(Semaphore::new(limits.max_connections));
    let answered = Arc::new(Semaphore::new(OVER_CAP_ANSWERED));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // The stop first, every turn: connections arriving faster than they are accepted (a
        // flood, or a backlog queued while the folder opened) never put it off.
        let tcp = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors or memory for a moment: wait rather than spin.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Agents send small requests and wait for each answer: without TCP_NODELAY, Nagle's
        // algorithm meets the client's delayed ACK and a reply can sit for tens of milliseconds.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let Ok(permit) = served.clone().try_acquire_owned() else {
            // What the client sent already is answered at once; one that has said nothing yet
            // is waited for briefly while the small pool has room, else answered 503 as is.
            // The socket's own calls, not tokio's: a socket just accepted has no readiness
            // known to tokio yet, and its `try_read` and `try_write` would do nothing.
            let Ok(socket) = tcp.into_std() else { continue };
            let mut head = [0u8; 64];
            let ready = std::io::Read::read(&mut &socket, &mut head).unwrap_or(0);
            match answered.clone().try_acquire_owned() {
                Ok(permit) => {
                    let Ok(tcp) = TcpStream::from_std(socket) else {
                        continue;
                    };
                    let services = state.services.clone();
                    tokio::spawn(async move {
                        answer_over_cap(tcp, head, ready, &services, OVER_CAP_READ).await;
                        drop(permit);
                    });
                }
                // The pool is full and the client has not spoken yet, perhaps a moment behind
                // its connect: it is given that moment (a health probe then gets its answer),
                // in a task too short-lived for a flood to pile up.
                Err(_) if ready == 0 => {
                    let Ok(tcp) = TcpStream::from_std(socket) else {
                        continue;
                    };
                    let services = state.services.clone();
                    tokio::spawn(async move {
                        answer_over_cap(tcp, head, ready, &services, OVER_CAP_GLANCE).await;
                    });
                }
                Err(_) => {
                    let answer = over_cap_answer(&head[..ready], &state.services);
                    let _ = std::io::Write::write(&mut &socket, answer.as_bytes());
                }
            }
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_TIMEOUT)
            .serve_connection(TokioIo::new(tcp), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::trace!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A connection past the cap (`ready` bytes of its request read already), given `wait` for
/// each of reading, writing and closing: `/healthz` is told the server's health, anything else
/// 503.
async fn answer_over_cap(
    mut tcp: TcpStream,
    mut head: [u8; 64],
    mut ready: usize,
    services: &atlas_registry::ToolContext,
    wait: Duration,
) {
    if ready == 0
        && let Ok(Ok(n)) = tokio::time::timeout(wait, tcp.read(&mut head)).await
    {
        ready = n;
    }
    let answer = over_cap_answer(&head[..ready], services);
    let _ = tokio::time::timeout(wait, tcp.write_all(answer.as_bytes())).await;
    // Read what the client still sends before closing, so that its unread request does not
    // turn the close into a reset that loses the answer on its way.
    let _ = tcp.shutdown().await;
    let mut rest = [0u8; 4096];
    let _ = tokio::time::timeout(wait, async {
        while matches!(tcp.read(&mut rest).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// The answer to `asked`, the start of a request past the cap.
fn over_cap_answer(asked: &[u8], services: &atlas_registry::ToolContext) -> String {
    if asked.starts_with(b"GET /healthz ") || asked.starts_with(b"GET /healthz?") {
        let (status, body) = crate::health(services);
        whole_answer((status, serde_json::to_value(body.0).unwrap_or_default()))
    } else {
        whole_answer(busy())
    }
}

/// 503 in seed 000's error format.
fn busy() -> (axum::http::StatusCode, serde_json::Value) {
    let error = atlas_model::AtlasError::unavailable(
        "the server holds as many connections as it serves; try again",
    );
    (axum::http::StatusCode::SERVICE_UNAVAILABLE, error.to_body())
}

/// A whole HTTP/1.1 answer that closes its connection.
fn whole_answer((status, body): (axum::http::StatusCode, serde_json::Value)) -> String {
    let body = body.to_string();
    format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         x-content-type-options: nosniff\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
}
