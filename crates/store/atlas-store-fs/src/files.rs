//! The JSON files of seed 001 §3 as typed records, validated on write and on read.
//!
//! Serde's typed parsing enforces the schemas' required fields and types; the checks here add what
//! types cannot say (formats, enums, ranges). `schemas/` at the repository root holds the seed's
//! JSON Schemas, and a test validates what this module writes against them.

use std::fs;
use std::path::Path;

use atlas_model::{App, Intent, Page, Trace, Transition};
use atlas_store::{AppData, StoreError};
use serde::{Deserialize, Serialize};

/// The format version this build writes (seed 001 §7.1).
pub const FORMAT_VERSION: &str = "1.0";
/// Seed 001 §9.2: no JSON file over 10 MB (larger graphs are split into parts).
pub const MAX_JSON_BYTES: usize = 10 * 1024 * 1024;
/// Seed 001 §9.2: no screenshot over 5 MB.
pub const MAX_SCREENSHOT_BYTES: usize = 5 * 1024 * 1024;
/// What one graph part holds at most, leaving head-room under [`MAX_JSON_BYTES`].
pub(crate) const GRAPH_PART_BUDGET: usize = 8 * 1024 * 1024;

fn corrupt(path: &Path, message: impl ToString) -> StoreError {
    StoreError::Corrupt {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Migrations between format versions (§7.2): each step rewrites a folder from one version to the
/// next. 1.0 is the first version, so the chain is empty; a folder from a newer Atlas is refused
/// rather than misread.
pub(crate) fn migrate(path: &Path, found: &str) -> Result<(), StoreError> {
    /// A step: the version it rewrites from, and the rewrite.
    type Step = (&'static str, fn(&Path) -> Result<(), StoreError>);
    const STEPS: &[Step] = &[];
    let mut version = found.to_string();
    while version != FORMAT_VERSION {
        let parse = |v: &str| {
            v.split('.')
                .map(|p| p.parse::<u32>().unwrap_or(0))
                .collect::<Vec<_>>()
        };
        if parse(&version) > parse(FORMAT_VERSION) {
            return Err(StoreError::TooNew {
                path: path.display().to_string(),
                found: version,
                supported: FORMAT_VERSION.into(),
            });
        }
        let Some((_, step)) = STEPS.iter().find(|(from, _)| *from == version) else {
            return Err(corrupt(path, format!("no migration from format {version}")));
        };
        step(path.parent().unwrap_or(path))?;
        version = FORMAT_VERSION.to_string();
    }
    Ok(())
}

/// `config.json`: what this project memory is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Config {
    pub app_id: String,
    pub version: String,
    pub created_at: String,
}

pub(crate) fn read_config(app_root: &Path) -> Result<Config, StoreError> {
    let path = app_root.join("config.json");
    let bytes = fs::read(&path).map_err(|e| corrupt(&path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| corrupt(&path, e))
}

/// `index.json` (§3.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Index {
    pub version: String,
    pub created_at: String,
    pub updated_at: String,
    pub root_node: String,
    pub nodes: std::collections::BTreeMap<String, IndexNode>,
    pub statistics: IndexStatistics,
    /// Beyond §3.1: the app's versions, in the order the graph met them (the last is current).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app_versions: Vec<atlas_model::AppVersion>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexNode {
    pub path: String,
    pub url: String,
    pub summary: String,
    pub created_at: String,
    /// Beyond §3.1: the versions the page was seen in, and the one it was found gone in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_in: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexStatistics {
    pub total_nodes: u64,
    pub total_edges: u64,
    pub max_depth: u64,
}

/// `meta.json` (§3.2) plus the page fields of seed 000.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub id: String,
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dom_fingerprint: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub screenshot: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    pub created_at: String,
    #[serde(default)]
    pub visited_count: u64,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Seed 000's page record, whole.
    pub page: Page,
}

/// How a file breaks its seed 001 schema, in words that name the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SchemaViolation(pub String);

impl From<&str> for SchemaViolation {
    fn from(message: &str) -> Self {
        SchemaViolation(message.into())
    }
}

impl From<String> for SchemaViolation {
    fn from(message: String) -> Self {
        SchemaViolation(message)
    }
}

pub(crate) fn validate_meta(meta: &Meta) -> Result<(), SchemaViolation> {
    if meta.id.is_empty() || meta.url.is_empty() {
        return Err("id and url are required".into());
    }
    check_date_time("created_at", &meta.created_at)?;
    if meta.page.page_id != meta.id {
        return Err(format!(
            "id {} differs from page.page_id {}",
            meta.id, meta.page.page_id
        )
        .into());
    }
    Ok(())
}

fn check_date_time(field: &str, value: &str) -> Result<(), SchemaViolation> {
    chrono::DateTime::parse_from_rfc3339(value)
        .map(|_| ())
        .map_err(|_| format!("{field} is not an RFC 3339 date-time: {value:?}").into())
}

/// A task file (§3.3) in `todos/`, `processing/` or `completed/`.
pub fn validate_task(value: &serde_json::Value) -> Result<(), SchemaViolation> {
    let obj = value.as_object().ok_or("a task is a JSON object")?;
    for field in ["id", "selector", "action", "priority"] {
        if !obj.contains_key(field) {
            return Err(format!("task lacks required field {field}").into());
        }
    }
    let text = |f: &str| {
        obj.get(f)
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| SchemaViolation::from(format!("task {f} must be a string")))
            })
            .transpose()
    };
    text("id")?;
    text("selector")?;
    let action = text("action")?.unwrap_or_default();
    if !["click", "type", "navigate", "scroll"].contains(&action) {
        return Err(
            format!("task action {action:?} is not one of click, type, navigate, scroll").into(),
        );
    }
    let priority = obj["priority"]
        .as_i64()
        .ok_or("task priority must be an integer")?;
    if !(1..=10).contains(&priority) {
        return Err(format!("task priority {priority} is outside 1..=10").into());
    }
    if let Some(status) = obj.get("status") {
        let status = status.as_str().ok_or("task status must be a string")?;
        if !["pending", "processing", "completed", "failed"].contains(&status) {
            return Err(format!("task status {status:?} is not a known status").into());
        }
    }
    if let Some(p) = obj.get("parameters") {
        p.as_object().ok_or("task parameters must be an object")?;
    }
    if let Some(d) = obj.get("is_destructive") {
        d.as_bool().ok_or("task is_destructive must be a boolean")?;
    }
    if let Some(c) = obj.get("created_at") {
        check_date_time(
            "created_at",
            c.as_str().ok_or("task created_at must be a string")?,
        )?;
    }
    Ok(())
}

/// A test-idea file (§3.4) in `test_ideas/`.
pub fn validate_test_idea(value: &serde_json::Value) -> Result<(), SchemaViolation> {
    let obj = value.as_object().ok_or("a test idea is a JSON object")?;
    for field in ["id", "name", "type"] {
        if !obj.get(field).is_some_and(|v| v.is_string()) {
            return Err(format!("test idea lacks string field {field}").into());
        }
    }
    let kind = obj["type"].as_str().unwrap_or_default();
    if ![
        "boundary",
        "injection",
        "permission",
        "performance",
        "accessibility",
    ]
    .contains(&kind)
    {
        return Err(format!("test idea type {kind:?} is not a known type").into());
    }
    if let Some(cases) = obj.get("test_cases") {
        let cases = cases.as_array().ok_or("test_cases must be an array")?;
        if cases.iter().any(|c| !c.is_object()) {
            return Err("each test case must be an object".into());
        }
    }
    if let Some(p) = obj.get("priority") {
        p.as_i64().ok_or("test idea priority must be an integer")?;
    }
    Ok(())
}

/// `.atlas/graph.json` and its parts: the whole app graph with transition statistics.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GraphFile {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<App>,
    /// Further part files (same shape, no `app`), named by generation so a half-written set is
    /// never referenced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<String>,
    /// The journal segment the files cover up to (every one numbered below it is folded in):
    /// replay takes none of the app's records from before it, so a report's counters
    /// ([`atlas_store::Record::Added`]) are never added twice. Files without it hold no report
    /// of a journal of frames, so every record replayed is new to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_folded_before: Option<u64>,
    #[serde(default)]
    pub pages: Vec<Page>,
    #[serde(default)]
    pub intents: Vec<Intent>,
    #[serde(default)]
    pub transitions: Vec<Transition>,
    #[serde(default)]
    pub traces: Vec<Trace>,
}

/// An app as its graph files hold it, and the journal segment they cover up to (see
/// [`GraphFile::journal_folded_before`]).
pub(crate) fn read_graph(app_root: &Path) -> Result<(AppData, u64), StoreError> {
    let dir = app_root.join(".atlas");
    let head_path = dir.join("graph.json");
    let read = |path: &Path| -> Result<GraphFile, StoreError> {
        atlas_store::files::refuse_links(app_root, path).map_err(|e| corrupt(path, e))?;
        let bytes = atlas_store::files::read_regular(path, MAX_JSON_BYTES as u64)
            .map_err(|e| corrupt(path, e))?
            .ok_or_else(|| corrupt(path, "no such file"))?;
        serde_json::from_slice(&bytes).map_err(|e| corrupt(path, e))
    };
    let head = read(&head_path)?;
    migrate(&head_path, &head.version)?;
    let app = head
        .app
        .clone()
        .ok_or_else(|| corrupt(&head_path, "graph.json lacks its app"))?;
    let mut data = AppData {
        app,
        pages: head.pages,
        intents: head.intents,
        transitions: head.transitions,
        traces: head.traces,
    };
    for part in &head.parts {
        if part.contains('/') || part.contains("..") {
            return Err(corrupt(
                &head_path,
                format!("part name {part:?} leaves the folder"),
            ));
        }
        let p = read(&dir.join(part))?;
        data.pages.extend(p.pages);
        data.intents.extend(p.intents);
        data.transitions.extend(p.transitions);
        data.traces.extend(p.traces);
    }
    Ok((data, head.journal_folded_before.unwrap_or(0)))
}
