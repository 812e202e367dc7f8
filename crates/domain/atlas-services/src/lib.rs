//! An opened Atlas process: the graph service, the knowledge bases, the business graph and the
//! tool registry over them ([`Services`]), and the seam that serves them over HTTP in process
//! ([`Serve`]).
//!
//! Serving on loopback is a seam so that what lives below the faces (the evaluations and the
//! benchmarks, which measure the real server) starts one without depending on the server crate.
//! The server implements it (`atlas_server::Loopback`), and it is the one way a local server is
//! started: by `atlas test run --serve`, `atlas bench` and `atlas eval` alike.
//!
//! Key design decision: **what is opened apart from how it is opened.** Opening reads a
//! configuration and so reaches every store and embedder (`atlas-wiring`); the server only serves
//! what is open, so it depends on this crate and on none of them.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use anyhow::Result;
use atlas_registry::{ToolContext, ToolRegistry};
use atlas_service::Atlas;

/// The services of one process, opened.
#[derive(Clone)]
pub struct Services {
    /// The GUI graph.
    pub atlas: Arc<Atlas>,
    /// The knowledge bases.
    pub kb: Arc<atlas_kb::KnowledgeBase>,
    /// The business graph.
    pub biz: Arc<atlas_biz::BizStore>,
    /// Every tool, over all three.
    pub tools: Arc<ToolRegistry>,
}

impl Services {
    /// What a tool call runs against.
    pub fn context(&self) -> ToolContext {
        ToolContext {
            atlas: self.atlas.clone(),
            biz: Some(self.biz.clone()),
            kb: Some(self.kb.clone()),
            holds_server_token: false,
        }
    }

    /// Makes what was acknowledged durable before the process ends.
    /// Both are tried, whichever fails.
    pub fn close(&self) -> Result<()> {
        let kb = self
            .kb
            .flush()
            .map_err(|e| anyhow::anyhow!("knowledge base hit counts and vectors: {e}"));
        let graph = self
            .atlas
            .checkpoint()
            .map_err(|e| anyhow::anyhow!("final checkpoint: {e}"));
        match (kb, graph) {
            (Ok(()), Ok(())) => Ok(()),
            (Err(e), Ok(())) | (Ok(()), Err(e)) => Err(e),
            (Err(kb), Err(graph)) => Err(anyhow::anyhow!("{graph}; {kb}")),
        }
    }
}

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
