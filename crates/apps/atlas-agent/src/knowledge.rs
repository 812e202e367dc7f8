//! GET_KNOWLEDGE_DATA's lookup: a Dify-compatible knowledge base's retrieve route (Atlas's own
//! or a real Dify), configured as seed 002 does, by `PHONE_AGENT_KNOWLEDGE_*` variables.

use std::time::Duration;

use serde_json::{Value, json};

/// Where the knowledge base is.
#[derive(Debug, Clone)]
pub struct KnowledgeConfig {
    /// e.g. http://127.0.0.1:7700 (the route is `{base}/v1/datasets/{dataset}/retrieve`).
    pub base_url: String,
    /// The dataset to search.
    pub dataset_id: String,
    /// The dataset's key (or the server token), sent as a bearer token.
    pub token: Option<String>,
    /// How long a lookup may take.
    pub timeout: Duration,
}

impl KnowledgeConfig {
    /// From `PHONE_AGENT_KNOWLEDGE_BASE_URL`, `_DATASET_ID`, `_AUTH_TOKEN` (or `_TOKEN`) and
    /// `_TIMEOUT_SECONDS` (10 by default); `None` without a base URL and a dataset.
    pub fn from_env() -> Option<KnowledgeConfig> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Some(KnowledgeConfig {
            base_url: var("PHONE_AGENT_KNOWLEDGE_BASE_URL")?
                .trim_end_matches('/')
                .to_string(),
            dataset_id: var("PHONE_AGENT_KNOWLEDGE_DATASET_ID")?,
            token: var("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN")
                .or_else(|| var("PHONE_AGENT_KNOWLEDGE_TOKEN")),
            timeout: var("PHONE_AGENT_KNOWLEDGE_TIMEOUT_SECONDS")
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|s| *s > 0.0 && s.is_finite())
                .map_or(Duration::from_secs(10), Duration::from_secs_f64),
        })
    }

    /// The best record's content for `query`; `Ok(None)` when the base has no answer, `Err`
    /// when it could not be asked (what the model is told either way).
    pub fn retrieve(&self, query: &str) -> Result<Option<String>, crate::KnowledgeError> {
        let url = format!("{}/v1/datasets/{}/retrieve", self.base_url, self.dataset_id);
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = agent.post(&url).header("Content-Type", "application/json");
        if let Some(token) = &self.token {
            let value = if token.to_ascii_lowercase().starts_with("bearer ") {
                token.clone()
            } else {
                format!("Bearer {token}")
            };
            request = request.header("Authorization", &value);
        }
        let mut response = request.send(json!({ "query": query }).to_string())?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string()?;
        if !(200..300).contains(&status) {
            return Err(crate::KnowledgeError::Status {
                status,
                body: text.chars().take(200).collect(),
            });
        }
        let body: Value = serde_json::from_str(&text)?;
        Ok(body
            .pointer("/records/0/segment/content")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from))
    }
}
