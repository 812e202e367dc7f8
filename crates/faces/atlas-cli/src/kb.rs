//! `atlas kb`: knowledge bases (Dify-compatible datasets) in the data folder.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use atlas_text::{Embedder, HashEmbedder};
use clap::Subcommand;

use crate::args::*;
use crate::progress::Shown;
use atlas_progress::Progress;

#[derive(Subcommand)]
pub(crate) enum KbCommand {
    /// Create a dataset; prints {"id", "api_key"}.
    Create {
        #[command(flatten)]
        data: DataArgs,
        name: String,
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Add a file (text, .md, or a question,answer .csv/.json) to a dataset.
    Add {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        id: String,
        file: PathBuf,
        /// The document's name (default: the file's name).
        #[arg(long)]
        name: Option<String>,
        /// Metadata as a JSON object, filterable at retrieval.
        #[arg(long)]
        metadata: Option<String>,
    },
    /// List datasets, or with an id the documents of one.
    List {
        #[command(flatten)]
        data: DataArgs,
        id: Option<String>,
    },
    /// Search a dataset as the retrieve route does; prints the hits as JSON.
    Search {
        #[command(flatten)]
        data: DataArgs,
        #[command(flatten)]
        embed: EmbedArgs,
        id: String,
        query: String,
        #[arg(long, default_value_t = 3)]
        top_k: usize,
        /// hybrid, keyword or semantic.
        #[arg(long, default_value = "hybrid")]
        method: String,
    },
    /// Delete a dataset, or with --document one of its documents.
    Delete {
        #[command(flatten)]
        data: DataArgs,
        id: String,
        #[arg(long)]
        document: Option<String>,
    },
}

pub(crate) fn kb_command(what: KbCommand) -> Result<ExitCode> {
    let lexical = || -> Arc<dyn Embedder> { Arc::new(HashEmbedder::default()) };
    match what {
        KbCommand::Create {
            data,
            name,
            description,
        } => {
            let kb = open_kb(&data, lexical(), &atlas_progress::Quiet)?;
            let dataset = kb.create_dataset(&name, &description)?;
            print_json(&serde_json::json!({ "id": dataset.id, "api_key": dataset.api_key }))?;
        }
        KbCommand::Add {
            data,
            embed,
            id,
            file,
            name,
            metadata,
        } => {
            let shown = Shown::start();
            shown.stage("opening the knowledge bases", None);
            let kb = open_kb(&data, embedder(&embed)?, shown.as_ref())?;
            shown.stage(&format!("reading {}", file.display()), None);
            let bytes =
                std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = name.unwrap_or_else(|| {
                file.file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default()
            });
            let metadata = match metadata {
                Some(text) => match serde_json::from_str::<serde_json::Value>(&text)? {
                    serde_json::Value::Object(map) => map,
                    _ => anyhow::bail!("--metadata must be a JSON object"),
                },
                None => Default::default(),
            };
            let added = kb.add_document_with(&id, &name, &bytes, None, metadata, shown.as_ref())?;
            // The new segments' vectors kept: the next opening embeds none of them.
            kb.flush()?;
            shown.pause();
            print_json(&added)?;
            shown.finish(&format!(
                "added {} to dataset {id}: {} segments",
                added.name, added.segment_count
            ));
        }
        KbCommand::List { data, id } => {
            let kb = read_kb(&data, lexical())?;
            match id {
                Some(id) => print_json(&kb.documents(&id)?)?,
                None => print_json(&kb.datasets())?,
            }
        }
        KbCommand::Search {
            data,
            embed,
            id,
            query,
            top_k,
            method,
        } => {
            let kb = read_kb(&data, embedder(&embed)?)?;
            let method = match method.as_str() {
                "hybrid" => atlas_kb::SearchMethod::Hybrid,
                "keyword" => atlas_kb::SearchMethod::Keyword,
                "semantic" => atlas_kb::SearchMethod::Semantic,
                other => anyhow::bail!("--method is hybrid, keyword or semantic, not {other}"),
            };
            let hits = kb.search(
                &id,
                &query,
                &atlas_kb::SearchOptions {
                    method,
                    top_k,
                    ..Default::default()
                },
            )?;
            let hits: Vec<serde_json::Value> = hits
                .iter()
                .map(|h| serde_json::json!({ "score": h.score, "content": h.segment.content, "question": h.segment.question, "document": h.document_name, "segment_id": h.segment.id }))
                .collect();
            print_json(&hits)?;
        }
        KbCommand::Delete { data, id, document } => {
            let kb = open_kb(&data, lexical(), &atlas_progress::Quiet)?;
            match &document {
                Some(doc) => kb.delete_document(&id, doc)?,
                None => kb.delete_dataset(&id)?,
            }
            print_json(&serde_json::json!({ "deleted": document.unwrap_or(id) }))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
