//! Opening services from a configuration and serving them on loopback at once, through the
//! seam [`atlas_services::Serve`] the server implements.

use anyhow::Result;

use crate::{Config, Serve, Served};

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
