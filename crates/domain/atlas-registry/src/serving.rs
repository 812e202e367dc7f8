//! What a server's own routes ask of the domains beside the tools: its health, the graph's live
//! events, a page's screenshot, the business graph as one document, and Dify's knowledge API.
//! The faces reach the domains only through here and the tools.

use atlas_api::server::{GraphFormat, HealthAnswer, HealthStatus};
use atlas_biz::{BusinessData, ImportReport};
use atlas_model::{AtlasError, Result};
use serde_json::Value;

use crate::{Datasets, ToolContext, biz_error, business_graph_of};

/// Whether the process serves, as `GET /healthz` says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Health {
    /// It serves and its writes are durable; a warning when its disk is filling up.
    Ok {
        /// Why a watcher should look (free space under the warning threshold).
        warning: Option<String>,
        /// Its disk, for a store on one.
        disk: Option<Value>,
    },
    /// It serves reads, but writes are refused (a full disk) or its checkpoints fail.
    Degraded {
        /// Why.
        reason: String,
        /// The checkpoints' state, when they fail.
        checkpoint: Option<Value>,
        /// Its disk, for a store on one.
        disk: Option<Value>,
    },
    /// Its store cannot be reached: it takes no writes.
    Unavailable,
}

impl Health {
    /// The HTTP status and the body: 503 while the database is away (for a load balancer to
    /// send writers to another replica), 200 otherwise, and no more than that.
    pub fn answer(&self) -> (u16, HealthAnswer) {
        let answer = |status, reason: Option<String>, warning, checkpoint, disk| HealthAnswer {
            status,
            reason,
            warning,
            checkpoint,
            disk,
        };
        match self {
            Health::Ok { warning, disk } => (
                200,
                answer(HealthStatus::Ok, None, warning.clone(), None, disk.clone()),
            ),
            Health::Degraded {
                reason,
                checkpoint,
                disk,
            } => (
                200,
                answer(
                    HealthStatus::Degraded,
                    Some(reason.clone()),
                    None,
                    checkpoint.clone(),
                    disk.clone(),
                ),
            ),
            Health::Unavailable => (
                503,
                answer(
                    HealthStatus::Unavailable,
                    Some("the database cannot be reached".into()),
                    None,
                    None,
                    None,
                ),
            ),
        }
    }
}

impl ToolContext {
    /// The process's health.
    pub fn health(&self) -> Health {
        if !self.atlas.store_available() {
            return Health::Unavailable;
        }
        // The folder's path stays out: the route is open to anyone who can reach the port.
        let space = self.atlas.disk();
        let disk = space.as_ref().map(|d| {
            serde_json::json!({
                "free_bytes": d.free_bytes,
                "reserve_bytes": d.reserve_bytes,
                "warn_below_bytes": d.warn_below_bytes,
            })
        });
        if let Some(refused) = self.atlas.writes_refused() {
            return Health::Degraded {
                reason: format!("writes are refused, reads are served: {refused}"),
                checkpoint: None,
                disk,
            };
        }
        let checkpoints = self.atlas.checkpoint_health();
        if checkpoints.failing() {
            return Health::Degraded {
                reason: "checkpoints fail: every acknowledged write is kept in the journal, \
                         which grows until one succeeds"
                    .into(),
                checkpoint: Some(serde_json::to_value(checkpoints).unwrap_or_default()),
                disk,
            };
        }
        // A probe of a healthy server learns nothing but that it answers; the disk is told once
        // it is worth a look.
        let low = space
            .as_ref()
            .is_some_and(|d| d.free_bytes < d.warn_below_bytes);
        let warning = space.filter(|_| low).map(|d| {
            format!(
                "the disk is filling up: {} bytes free; writes stop under {}",
                d.free_bytes, d.reserve_bytes
            )
        });
        Health::Ok {
            warning,
            disk: disk.filter(|_| low),
        }
    }

    /// What the graph learns from now on, each event once durable.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<Value> {
        self.atlas.events()
    }

    /// Page `page_id`'s screenshot (PNG) from its folder, if it has one.
    pub fn page_screenshot(&self, app_id: &str, page_id: &str) -> Result<Option<Vec<u8>>> {
        self.atlas.page_screenshot(app_id, page_id)
    }

    /// Dify's knowledge API over this process's knowledge bases; `token`, the server's, opens
    /// every dataset.
    pub fn datasets(&self, token: Option<std::sync::Arc<str>>) -> Option<Datasets> {
        self.kb.clone().map(|kb| Datasets::new(kb, token))
    }

    fn biz(&self) -> Result<&atlas_biz::BizStore> {
        self.biz
            .as_deref()
            .ok_or_else(|| AtlasError::NotFound("this server has no business graph".into()))
    }

    /// The business graph as one document.
    pub fn business_graph(&self) -> Result<BusinessData> {
        Ok(self.biz()?.current().graph().data().clone())
    }

    /// Replaces the business graph with `body`, checked whole and durable before it answers.
    /// It may write for long: call it where blocking is allowed.
    pub fn replace_business_graph(&self, format: GraphFormat, body: &[u8]) -> Result<ImportReport> {
        let biz = self.biz()?;
        let (data, skipped) = match format {
            GraphFormat::Json => (business_graph_of(body)?, 0),
            GraphFormat::Apoc | GraphFormat::Jsonl => {
                let text = std::str::from_utf8(body)
                    .map_err(|_| AtlasError::invalid("body", "the body is not UTF-8 text"))?;
                atlas_biz::import::from_apoc_jsonl(text).map_err(biz_error)?
            }
        };
        biz.replace(data, skipped).map_err(biz_error)
    }
}
