//! Serving opened services over HTTP on loopback: a seam, so that what lives below the faces (the
//! evaluations and the benchmarks, which measure the real server) starts one without depending on
//! the server crate. The server implements it (`atlas_server::Loopback`), and it is the one way
//! a local server is started: by `atlas test run --serve`, `atlas bench` and `atlas eval` alike.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use anyhow::Result;

use crate::{Config, Services};

/// A future of the seam's, boxed so the trait can be a trait object.
pub type ServeFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Starts HTTP servers over services.
pub trait Serve: Send + Sync {
    /// Serves `services` on `addr` (`127.0.0.1:0` for any free port) as `atlas serve` does, until
    /// [`Served::stop`]; the services are closed (made durable) when it stops.
    fn serve<'a>(&'a self, services: &'a Services, addr: &'a str) -> ServeFuture<'a, Served>;
}

/// A server [`Serve`] started: where it listens, and how to stop it.
pub struct Served {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Box<dyn FnOnce() -> ServeFuture<'static, ()> + Send>,
}

impl Served {
    /// A server listening on `addr`, stopped by `stop` (which returns once the server has let go
    /// of its services).
    pub fn new(
        addr: SocketAddr,
        stop: impl FnOnce() -> ServeFuture<'static, ()> + Send + 'static,
    ) -> Served {
        Served {
            addr,
            stop: Box::new(stop),
        }
    }

    /// `http://ADDR`, for clients.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server and waits until it has let go of the services (its last connection
    /// closed, the services closed), so the data folder can be opened again.
    pub async fn stop(self) -> Result<()> {
        (self.stop)().await
    }
}

/// Opens `config`'s services and serves them on `addr` with `server`; stopping it stops the
/// server, then closes the services (what was acknowledged made durable).
pub async fn open_and_serve(config: &Config, server: &dyn Serve, addr: &str) -> Result<Served> {
    let services = crate::open(config).await?;
    let served = server.serve(&services, addr).await?;
    Ok(Served::new(served.addr, move || {
        Box::pin(async move {
            served.stop().await?;
            services.close()
        })
    }))
}
