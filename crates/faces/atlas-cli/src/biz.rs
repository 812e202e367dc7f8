//! `atlas biz`: the business graph of seed 003 in the data folder.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use atlas_text::HashEmbedder;
use clap::Subcommand;

use crate::args::*;

#[derive(Subcommand)]
pub(crate) enum BizCommand {
    /// Replace the business graph with the files given: one Atlas JSON document, the lines of
    /// Neo4j's apoc.export.json.all (.jsonl), or CSV tables of entities and relations (docs/business-graph.md).
    /// Refused while a server holds the data folder: use PUT /api/v1/business-graph then.
    Import {
        #[command(flatten)]
        data: DataArgs,
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// json, apoc or csv (default: from the files' extensions).
        #[arg(long)]
        format: Option<String>,
    },
    /// Write the business graph as Atlas's JSON document to stdout.
    Export {
        #[command(flatten)]
        data: DataArgs,
    },
}

pub(crate) fn biz_command(what: BizCommand) -> Result<ExitCode> {
    match what {
        BizCommand::Import {
            data,
            files,
            format,
        } => {
            let extension = |f: &PathBuf| {
                f.extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or("")
                    .to_lowercase()
            };
            let format = format.unwrap_or_else(|| match extension(&files[0]).as_str() {
                "csv" => "csv".into(),
                "jsonl" | "ndjson" => "apoc".into(),
                _ => "json".into(),
            });
            let mut texts = Vec::new();
            for f in &files {
                let text = std::fs::read_to_string(f)
                    .with_context(|| format!("cannot read {}", f.display()))?;
                texts.push((f.display().to_string(), text));
            }
            let parsed = match format.as_str() {
                "csv" => atlas_biz::import::from_csv(&texts).map(|d| (d, 0)),
                "json" | "apoc" if texts.len() > 1 => {
                    anyhow::bail!("a {format} import reads one file; CSV reads several")
                }
                "json" => atlas_biz::import::from_json(&texts[0].1).map(|d| (d, 0)),
                "apoc" => atlas_biz::import::from_apoc_jsonl(&texts[0].1),
                other => anyhow::bail!("--format must be json, apoc or csv, not {other}"),
            };
            let (graph, skipped) = parsed?;
            // The index this process builds is dropped at exit (a server indexes the graph with
            // its own embedder when it opens it), so the cheapest embedder does.
            let store = open_biz(&data, Arc::new(HashEmbedder::default()))?;
            let report = store.replace(graph, skipped)?;
            print_json(&report)?;
        }
        BizCommand::Export { data } => {
            let graph = match atlas_wiring::shared_files(&data.address(), &data.pg(), "biz")? {
                Some(files) => atlas_biz::BizStore::read_from(files.as_ref()),
                None => atlas_biz::BizStore::read(&data.data.join("biz")),
            };
            print_json(&graph.map_err(|e| anyhow::anyhow!("business graph: {e}"))?)?
        }
    }
    Ok(ExitCode::SUCCESS)
}
