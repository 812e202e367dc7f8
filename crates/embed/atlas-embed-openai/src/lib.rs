//! An [`Embedder`] over an OpenAI-compatible `POST {base}/embeddings` endpoint (OpenAI, vLLM,
//! LiteLLM, Ollama's OpenAI mode, a local text-embeddings server).
//!
//! Key design decision: **a blocking client.** The `Embedder` trait is synchronous because the
//! built-in embedder costs microseconds; this remote one says so through `is_remote()`, and the
//! server moves such calls off its event loop. `ureq` keeps the dependency small.

use std::time::Duration;

use atlas_text::{EmbedError, Embedder};
use serde::Deserialize;

/// Configuration of the endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiEmbedderConfig {
    /// E.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The model the endpoint embeds with.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when given.
    pub api_key: Option<String>,
    /// Cosine above which two texts mean the same (depends on the model).
    pub threshold: f32,
    /// How long one request may take.
    pub timeout: Duration,
}

/// An OpenAI-compatible `/v1/embeddings` endpoint as an embedder.
pub struct OpenAiEmbedder {
    config: OpenAiEmbedderConfig,
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl OpenAiEmbedder {
    /// The embedder of `config`.
    pub fn new(config: OpenAiEmbedderConfig) -> OpenAiEmbedder {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .build()
            .new_agent();
        OpenAiEmbedder { config, agent }
    }
}

impl Embedder for OpenAiEmbedder {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let body = serde_json::json!({ "model": self.config.model, "input": texts });
        let mut request = self.agent.post(&url);
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(&body)
            .map_err(|e| EmbedError::caused(url.clone(), e))?;
        let parsed: Response = response
            .body_mut()
            .read_json()
            .map_err(|e| EmbedError::caused(format!("{url}: unreadable answer"), e))?;
        if parsed.data.len() != texts.len() {
            return Err(EmbedError::new(format!(
                "{url}: asked for {} vectors, got {}",
                texts.len(),
                parsed.data.len()
            )));
        }
        let mut items = parsed.data;
        items.sort_by_key(|i| i.index.unwrap_or(0));
        Ok(items.into_iter().map(|i| i.embedding).collect())
    }

    fn match_threshold(&self) -> f32 {
        self.config.threshold
    }

    fn is_remote(&self) -> bool {
        true
    }
}
