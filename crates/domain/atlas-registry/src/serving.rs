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
    /// It serves and its writes are durable.
    Ok,
    /// It serves and keeps every write, in its journal, but its checkpoints fail.
    Degraded(Value),
    /// Its store cannot be reached: it takes no writes.
    Unavailable,
}

impl Health {
    /// The HTTP status and the body: 503 while the database is away (for a load balancer to
    /// send writers to another replica), 200 otherwise, and no more than that.
    pub fn answer(&self) -> (u16, HealthAnswer) {
        let (status, health, reason, checkpoint) = match self {
            Health::Ok => (200, HealthStatus::Ok, None, None),
            Health::Degraded(checkpoint) => (
                200,
                HealthStatus::Degraded,
                Some(
                    "checkpoints fail: every acknowledged write is kept in the journal, which grows until one succeeds",
                ),
                Some(checkpoint.clone()),
            ),
            Health::Unavailable => (
                503,
                HealthStatus::Unavailable,
                Some("the database cannot be reached"),
                None,
            ),
        };
        let reason = reason.map(String::from);
        (
            status,
            HealthAnswer {
                status: health,
                reason,
                checkpoint,
            },
        )
    }
}

impl ToolContext {
    /// The process's health.
    pub fn health(&self) -> Health {
        if !self.atlas.store_available() {
            return Health::Unavailable;
        }
        let checkpoints = self.atlas.checkpoint_health();
        if checkpoints.failing() {
            return Health::Degraded(serde_json::to_value(checkpoints).unwrap_or_default());
        }
        Health::Ok
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
