//! Versions of an app: a release recorded with what was checked in it (`record_app_version`),
//! the version a write names (`add_page`, `report_transition`), and what changed between two
//! (`get_app_diff`). What the model means by a version is `atlas_model::versions`.

use std::collections::HashMap;

pub use atlas_api::versions::{
    AppDiff, AppDiffRequest, DiffPage, RecordAppVersionRequest, RecordAppVersionResponse,
};
use atlas_graph::AppGraph;
use atlas_model::{
    App, AppVersion, AtlasError, Intent, Page, Result, VersionSource, Versioned, validate_text,
};
use atlas_store::Record;

use crate::Atlas;

/// A version's name as a request gives it (`field` names it in an error): trimmed; none when
/// absent or blank (an empty `app_version` is no version, as for trust).
pub(crate) fn version_named(field: &str, version: Option<&str>) -> Result<Option<String>> {
    let Some(version) = version.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    validate_text(field, version, true)?;
    Ok(Some(version.to_string()))
}

/// `app` with `version` among its versions (the current one when new); whether that changed
/// it. A version only `reported` so far (named by a write, as `add_page` names the one a
/// first exploration starts) takes the source a later call tells: the writes come first.
pub(crate) fn with_version(app: &mut App, version: &str, source: VersionSource) -> bool {
    if let Some(known) = app.versions.iter_mut().find(|v| v.version == version) {
        let told = known.source == VersionSource::Reported && source != VersionSource::Reported;
        if told {
            known.source = source;
        }
        return told;
    }
    app.versions.push(AppVersion {
        version: version.to_string(),
        source,
        first_seen: atlas_model::now_rfc3339(),
    });
    app.updated_at = atlas_model::now_rfc3339();
    true
}

/// The record of `app` (of the graph, else the one being made) once it knows `version`, when
/// it did not.
pub(crate) fn app_knowing(
    app: &App,
    version: Option<&str>,
    source: VersionSource,
) -> Option<Record> {
    let mut app = app.clone();
    with_version(&mut app, version?, source).then_some(Record::App(app))
}

/// The record of a page of `graph` once seen in `version`, when that changes it.
pub(crate) fn page_seen(graph: &AppGraph, page_id: &str, version: &str) -> Option<Record> {
    let mut page: Page = graph.page(page_id)?.clone();
    page.saw(version).then_some(Record::Page(page))
}

fn unknown(kind: &str, id: &str, app_id: &str) -> AtlasError {
    AtlasError::NotFound(format!("{kind} {id} is not one of {app_id}'s"))
}

impl Atlas {
    /// `record_app_version`: the version (new ones become current), what was seen in it and what
    /// was found gone. Every id is checked before anything is written.
    pub async fn record_app_version(
        &self,
        req: RecordAppVersionRequest,
    ) -> Result<RecordAppVersionResponse> {
        validate_text("app_id", &req.app_id, true)?;
        let version = version_named("version", Some(&req.version))?
            .ok_or_else(|| AtlasError::invalid("version", "version must not be blank"))?;
        let source = req.source.unwrap_or_default();
        self.commit_with(|state| {
            let graph = state
                .graph
                .app(&req.app_id)
                .ok_or_else(|| AtlasError::NotFound(format!("app not found: {}", req.app_id)))?;
            let mut marks = Marks::new(graph, &version);
            for id in &req.seen_pages {
                marks.page(id, true)?;
            }
            for id in &req.seen_transitions {
                marks.transition(id, true)?;
            }
            for id in &req.gone_pages {
                marks.page(id, false)?;
            }
            for id in &req.gone_transitions {
                marks.transition(id, false)?;
            }
            let new_version = !graph.app.versions.iter().any(|v| v.version == version);
            let mut records: Vec<Record> = app_knowing(&graph.app, Some(&version), source)
                .into_iter()
                .collect();
            let (seen, gone) = (marks.seen, marks.gone);
            records.extend(marks.records);
            let response = RecordAppVersionResponse {
                success: true,
                current_version: if new_version {
                    version.clone()
                } else {
                    graph.app.current_version().unwrap_or(&version).to_string()
                },
                new_version,
                marked_seen: seen,
                marked_gone: gone,
            };
            Ok((records, response))
        })
        .await
    }

    /// `get_app_diff`: what changed between two versions of an app.
    pub fn get_app_diff(&self, req: AppDiffRequest) -> Result<AppDiff> {
        validate_text("app_id", &req.app_id, true)?;
        let from = version_named("from_version", req.from_version.as_deref())?;
        let to = version_named("to_version", req.to_version.as_deref())?;
        self.read(|g| {
            let app = g
                .app(&req.app_id)
                .ok_or_else(|| AtlasError::NotFound(format!("app not found: {}", req.app_id)))?;
            app.diff(from.as_deref(), to.as_deref())
                // A request the schema takes, about versions the app does not have: not found.
                .map_err(|e| AtlasError::NotFound(e.to_string()))
        })
    }
}

/// The records that mark entities of one app seen in, or gone in, one version: each entity
/// once, and never both.
struct Marks<'g> {
    graph: &'g AppGraph,
    version: &'g str,
    /// Every page, transition and intent marked, and how (seen: true).
    marked: HashMap<String, bool>,
    records: Vec<Record>,
    seen: usize,
    gone: usize,
}

impl<'g> Marks<'g> {
    fn new(graph: &'g AppGraph, version: &'g str) -> Marks<'g> {
        Marks {
            graph,
            version,
            marked: HashMap::new(),
            records: Vec::new(),
            seen: 0,
            gone: 0,
        }
    }

    /// Whether `id` is still to be marked `seen`; an error when it was marked the other way.
    fn first_time(&mut self, kind: &str, id: &str, seen: bool) -> Result<bool> {
        match self.marked.insert(id.to_string(), seen) {
            None => Ok(true),
            Some(before) if before == seen => Ok(false),
            Some(_) => Err(AtlasError::invalid(
                if seen { "seen" } else { "gone" },
                format!(
                    "{kind} {id} would be both seen and gone in {}",
                    self.version
                ),
            )),
        }
    }

    /// Marks an entity; keeps its record when that changed it.
    fn mark<T: Versioned>(&mut self, entity: &mut T, seen: bool) -> bool {
        let changed = if seen {
            entity.saw(self.version)
        } else {
            entity.went(self.version)
        };
        match (changed, seen) {
            (false, _) => {}
            (true, true) => self.seen += 1,
            (true, false) => self.gone += 1,
        }
        changed
    }

    fn page(&mut self, id: &str, seen: bool) -> Result<()> {
        let graph = self.graph;
        let mut page = graph
            .page(id)
            .cloned()
            .ok_or_else(|| unknown("page", id, graph.app_id()))?;
        if !self.first_time("page", id, seen)? {
            return Ok(());
        }
        if self.mark(&mut page, seen) {
            self.records.push(Record::Page(page));
        }
        if seen {
            return Ok(());
        }
        // What leads to or from a page that is gone is gone with it, and so is what it serves.
        let edges: Vec<String> = graph
            .outgoing(id)
            .chain(graph.incoming(id))
            .map(|t| t.transition_id().to_string())
            .collect();
        for edge in edges {
            self.transition(&edge, false)?;
        }
        let served: Vec<Intent> = graph
            .intents()
            .filter(|i| i.target_page.as_deref() == Some(id))
            .cloned()
            .collect();
        for mut intent in served {
            if self.first_time("intent", &intent.intent_id, false)? && self.mark(&mut intent, false)
            {
                self.records.push(Record::Intent(intent));
            }
        }
        Ok(())
    }

    /// A transition seen is seen with its pages.
    fn transition(&mut self, id: &str, seen: bool) -> Result<()> {
        let graph = self.graph;
        let mut t = graph
            .transition(id)
            .map(|t| t.to_transition())
            .ok_or_else(|| unknown("transition", id, graph.app_id()))?;
        if !self.first_time("transition", id, seen)? {
            return Ok(());
        }
        if seen {
            self.page(&t.from_page, true)?;
            self.page(&t.to_page, true)?;
        }
        if self.mark(&mut t, seen) {
            self.records.push(Record::Transition(t));
        }
        Ok(())
    }
}
