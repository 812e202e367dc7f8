//! The integrity check of seed 001 §10.2, with repair from `graph.json`, the source of truth.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

use atlas_store::{AppData, CheckReport};

use crate::files::{self, Index, Meta};
use crate::fold::{
    bfs, build_index, build_meta, ensure_link, ensure_node_dirs, link_name, node_dir_name,
    root_page,
};
use crate::layout::{Layout, atomic_write};

pub(crate) fn check_root(layout: &Layout, repair: bool) -> CheckReport {
    let mut report = CheckReport::default();
    let manifest = layout.root().join("atlas.json");
    if fs::read(&manifest)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_none()
    {
        report
            .problems
            .push(format!("{} is missing or unreadable", manifest.display()));
    }
    remove_temporaries(layout.root(), repair, &mut report);
    report
}

pub(crate) fn remove_temporaries(dir: &Path, repair: bool, report: &mut CheckReport) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let path = entry.path();
            if repair && fs::remove_file(&path).is_ok() {
                report.repaired.push(format!(
                    "removed leftover temporary file {}",
                    path.display()
                ));
            } else {
                report
                    .problems
                    .push(format!("leftover temporary file {}", path.display()));
            }
        }
    }
}

/// Resolves `target` relative to `base` without touching the filesystem, refusing to climb
/// above `root`.
fn resolve_inside(root: &Path, base: &Path, target: &Path) -> Option<PathBuf> {
    if target.is_absolute() {
        return None;
    }
    let mut out = base.to_path_buf();
    for part in target.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() || !out.starts_with(root) {
                    return None;
                }
            }
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    out.starts_with(root).then_some(out)
}

/// One app's folder under check: where it is, what its graph says, and whether to repair.
struct AppCheck<'a> {
    app_root: &'a Path,
    dir: &'a str,
    repair: bool,
    data: AppData,
    tree: crate::fold::Tree,
}

/// Records a problem, or what repairing it did.
fn problem(report: &mut CheckReport, fixed: Option<String>, text: String) {
    match fixed {
        Some(what) => report.repaired.push(format!("{text}: {what}")),
        None => report.problems.push(text),
    }
}

pub(crate) fn check_app(app_root: &Path, dir: &str, repair: bool, report: &mut CheckReport) {
    let data = match files::read_graph(app_root) {
        Ok((d, _)) => d,
        Err(e) => {
            report
                .problems
                .push(format!("{dir}: cannot read graph: {e}"));
            return;
        }
    };
    report.apps += 1;
    report.pages += data.pages.len();
    report.transitions += data.transitions.len();
    remove_temporaries(app_root, repair, report);
    remove_temporaries(&app_root.join(".atlas"), repair, report);

    let root = root_page(&data)
        .map(|p| p.page_id.clone())
        .unwrap_or_default();
    let tree = bfs(&data, &root);
    let app = AppCheck {
        app_root,
        dir,
        repair,
        data,
        tree,
    };
    app.check_index(report);
    app.check_directories(report);
    app.check_nodes(report);
    let present = app.check_links(report);
    app.check_transition_links(&present, report);
}

impl AppCheck<'_> {
    /// index.json agrees with the graph and the directories.
    fn check_index(&self, report: &mut CheckReport) {
        let (app_root, dir, repair, data, tree) =
            (self.app_root, self.dir, self.repair, &self.data, &self.tree);
        let index_path = app_root.join("index.json");
        let index: Option<Index> = fs::read(&index_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let expected_nodes: BTreeMap<String, String> = data
            .pages
            .iter()
            .map(|p| (p.page_id.clone(), format!("{dir}/{}", node_dir_name(p))))
            .collect();
        let index_ok = index.as_ref().is_some_and(|i| {
            i.nodes.len() == expected_nodes.len()
                && i.nodes
                    .iter()
                    .all(|(id, n)| expected_nodes.get(id) == Some(&n.path))
                && i.statistics.total_edges == data.transitions.len() as u64
        });
        if !index_ok {
            let created = index
                .map(|i| i.created_at)
                .unwrap_or_else(|| data.app.created_at.clone());
            let fixed = repair
                .then(|| build_index(dir, data, tree, created))
                .and_then(|i| {
                    atomic_write(&index_path, &serde_json::to_vec_pretty(&i).ok()?, true).ok()
                })
                .map(|()| "rewrote index.json".to_string());
            problem(
                report,
                fixed,
                format!("{dir}: index.json does not match graph.json"),
            );
        }
    }

    /// Every directory is a node of the graph.
    fn check_directories(&self, report: &mut CheckReport) {
        let (app_root, repair) = (self.app_root, self.repair);
        let dir = self.dir;
        let node_dirs: HashSet<String> = self.data.pages.iter().map(node_dir_name).collect();
        if let Ok(entries) = fs::read_dir(app_root) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().to_string();
                if name.starts_with('.') || !entry.path().is_dir() || node_dirs.contains(&name) {
                    continue;
                }
                let fixed = repair
                    .then(|| {
                        let orphans = app_root.join(".atlas").join("orphans");
                        fs::create_dir_all(&orphans).ok()?;
                        fs::rename(entry.path(), orphans.join(&name)).ok()
                    })
                    .flatten()
                    .map(|()| "moved to .atlas/orphans".to_string());
                problem(
                    report,
                    fixed,
                    format!("{dir}/{name}: directory is not a node of the graph"),
                );
            }
        }
    }

    /// Every node has a valid meta.json naming it, and valid task and idea files.
    fn check_nodes(&self, report: &mut CheckReport) {
        let (app_root, dir, repair, data, tree) =
            (self.app_root, self.dir, self.repair, &self.data, &self.tree);
        for page in &data.pages {
            let node = app_root.join(node_dir_name(page));
            if crate::fold::is_link(&node) {
                // Not read or written through: the link itself goes, the page's folder returns.
                let fixed = repair
                    .then(|| {
                        fs::remove_file(&node).ok()?;
                        ensure_node_dirs(&node).ok()?;
                        let meta = build_meta(page, tree, false);
                        let bytes = serde_json::to_vec_pretty(&meta).ok()?;
                        atomic_write(&node.join("meta.json"), &bytes, false).ok()
                    })
                    .flatten()
                    .map(|()| "replaced the link by the page's own folder".to_string());
                problem(
                    report,
                    fixed,
                    format!(
                        "{dir}/{}: a symbolic link, not the page's folder (Atlas reads and writes \
                         only inside its data folder)",
                        node_dir_name(page)
                    ),
                );
                continue;
            }
            let meta_path = node.join("meta.json");
            let meta: Result<Meta, Box<dyn std::error::Error>> = fs::read(&meta_path)
                .map_err(Into::into)
                .and_then(|b| serde_json::from_slice(&b).map_err(Into::into))
                .and_then(|m: Meta| files::validate_meta(&m).map(|()| m).map_err(Into::into));
            let bad = match &meta {
                Ok(m) if m.id == page.page_id => None,
                Ok(m) => Some(format!(
                    "meta.json names {} instead of {}",
                    m.id, page.page_id
                )),
                Err(e) => Some(format!("meta.json missing or invalid ({e})")),
            };
            if let Some(why) = bad {
                let fixed = repair
                    .then(|| {
                        ensure_node_dirs(&node).ok()?;
                        let bytes = serde_json::to_vec_pretty(&build_meta(
                            page,
                            tree,
                            node.join(crate::fold::SCREENSHOT).is_file(),
                        ))
                        .ok()?;
                        atomic_write(&meta_path, &bytes, false).ok()
                    })
                    .flatten()
                    .map(|()| "rewrote meta.json".to_string());
                problem(
                    report,
                    fixed,
                    format!("{dir}/{}: {why}", node_dir_name(page)),
                );
            }
            check_node_files(&node, &format!("{dir}/{}", node_dir_name(page)), report);
        }
    }

    /// Every link resolves inside the app to a node; answers the links found, by node and name.
    fn check_links(&self, report: &mut CheckReport) -> HashSet<(String, String)> {
        let (app_root, dir, repair, data) = (self.app_root, self.dir, self.repair, &self.data);
        let mut present: HashSet<(String, String)> = HashSet::new();
        for page in &data.pages {
            let node_name = node_dir_name(page);
            let node = app_root.join(&node_name);
            if crate::fold::is_link(&node) {
                continue; // told by check_nodes
            }
            let links_dir = node.join("links");
            if let Ok(entries) = fs::read_dir(&links_dir) {
                for entry in entries.flatten() {
                    let name = entry.file_name().to_string_lossy().to_string();
                    let target = fs::read_link(entry.path()).ok();
                    let ok = target
                        .as_deref()
                        .and_then(|t| resolve_inside(app_root, &links_dir, t))
                        .is_some_and(|p| p.join("meta.json").is_file());
                    if ok {
                        present.insert((node_name.clone(), name));
                    } else {
                        let fixed = (repair && fs::remove_file(entry.path()).is_ok())
                            .then(|| "removed".to_string());
                        problem(
                            report,
                            fixed,
                            format!(
                                "{dir}/{node_name}/links/{name}: link does not resolve to a node inside the folder"
                            ),
                        );
                    }
                }
            }
            let fallback = node.join("_links.json");
            if let Ok(bytes) = fs::read(&fallback) {
                match serde_json::from_slice::<BTreeMap<String, String>>(&bytes) {
                    Ok(links) => {
                        for (name, target) in links {
                            let ok = resolve_inside(app_root, &node, Path::new(&target))
                                .is_some_and(|p| p.join("meta.json").is_file());
                            if ok {
                                present.insert((node_name.clone(), name));
                            } else {
                                report.problems.push(format!("{dir}/{node_name}/_links.json: {name} -> {target} does not resolve inside the folder"));
                            }
                        }
                    }
                    Err(e) => report
                        .problems
                        .push(format!("{dir}/{node_name}/_links.json: unreadable ({e})")),
                }
            }
        }
        present
    }

    /// Every transition has its link.
    fn check_transition_links(
        &self,
        present: &HashSet<(String, String)>,
        report: &mut CheckReport,
    ) {
        let (app_root, dir, repair, data) = (self.app_root, self.dir, self.repair, &self.data);
        let page_dirs: HashMap<&str, String> = data
            .pages
            .iter()
            .map(|p| (p.page_id.as_str(), node_dir_name(p)))
            .collect();
        for t in &data.transitions {
            let (Some(from), Some(to)) = (
                page_dirs.get(t.from_page.as_str()),
                page_dirs.get(t.to_page.as_str()),
            ) else {
                report.problems.push(format!(
                    "{dir}: transition {} joins unknown pages",
                    t.transition_id
                ));
                continue;
            };
            let name = link_name(t);
            if !present.contains(&(from.clone(), name.clone())) {
                let fixed = repair
                    .then(|| ensure_link(&app_root.join(from), &name, to).ok())
                    .flatten()
                    .map(|()| "created".to_string());
                problem(
                    report,
                    fixed,
                    format!(
                        "{dir}/{from}/links/{name}: link of transition {} is missing",
                        t.transition_id
                    ),
                );
            }
        }
    }
}

/// Task and test-idea files follow their schemas (§3.3, §3.4).
fn check_node_files(node: &Path, label: &str, report: &mut CheckReport) {
    for (sub, validate) in [
        (
            "todos",
            files::validate_task as fn(&serde_json::Value) -> Result<(), files::SchemaViolation>,
        ),
        ("processing", files::validate_task),
        ("completed", files::validate_task),
        ("test_ideas", files::validate_test_idea),
    ] {
        let Ok(entries) = fs::read_dir(node.join(sub)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.ends_with(".json") {
                continue;
            }
            let verdict: Result<(), Box<dyn std::error::Error>> = fs::read(entry.path())
                .map_err(Into::into)
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(Into::into))
                .and_then(|v| validate(&v).map_err(Into::into));
            if let Err(e) = verdict {
                report.problems.push(format!("{label}/{sub}/{name}: {e}"));
            }
        }
    }
}
