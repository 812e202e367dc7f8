//! The one way a server is started in this process over services already opened
//! ([`atlas_services::Serve`]): `atlas test run --data`, the benchmarks and the evaluations all
//! serve through it, so each measures and tests the server `atlas serve` runs.

use anyhow::Context;
use atlas_services::{Serve, ServeFuture, Served, Services};

use crate::AppState;

/// Serves on a local address, with no token, until stopped.
pub struct Loopback;

impl Serve for Loopback {
    fn serve<'a>(&'a self, services: &'a Services, addr: &'a str) -> ServeFuture<'a, Served> {
        Box::pin(async move {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let local = listener.local_addr()?;
            let state = AppState::local(services.context(), services.tools.clone());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(crate::serve(listener, state, async {
                let _ = stopped.await;
            }));
            Ok(Served::new(local, move || {
                Box::pin(async move {
                    let _ = stop.send(());
                    task.await??;
                    Ok(())
                })
            }))
        })
    }
}
