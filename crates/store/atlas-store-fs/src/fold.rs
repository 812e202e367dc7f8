//! Checkpoint folding: one app's in-memory state written out as its project-memory folder.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use atlas_model::{Page, Transition, sanitize_node_id};
use atlas_store::{AppData, StoreError};

use crate::files::{
    self, Config, FORMAT_VERSION, GRAPH_PART_BUDGET, Index, IndexNode, IndexStatistics,
    MAX_JSON_BYTES, Meta,
};
use crate::layout::{append_log, atomic_write};

/// The standard sub-folders of a node (seed 001 §2.2).
pub(crate) const NODE_SUBDIRS: &[&str] = &[
    "links",
    "scripts",
    "todos",
    "processing",
    "completed",
    "test_ideas",
    "reports",
];

/// What earlier checkpoints wrote, so unchanged files are left alone.
#[derive(Debug, Default)]
pub(crate) struct FoldCache {
    made_dirs: HashSet<PathBuf>,
    meta_hash: HashMap<PathBuf, u64>,
    /// Links made, as `{page folder}/{transition id}`.
    links: HashSet<String>,
}

impl FoldCache {
    pub(crate) fn clear(&mut self) {
        *self = FoldCache::default();
    }
}

/// A page's folder name: `{ordinal:02}_{name}` (seed 001 §4.1).
pub(crate) fn node_dir_name(page: &Page) -> String {
    format!("{:02}_{}", page.ordinal, sanitize_node_id(&page.page_name))
}

/// A transition's link name: `action_{what}_{id prefix}` (seed 001 §5.1); the id prefix keeps two
/// actions with the same label apart.
pub(crate) fn link_name(t: &Transition) -> String {
    let what = if t.action.widget_text.is_empty() {
        &t.action.widget_id
    } else {
        &t.action.widget_text
    };
    let label = if what.is_empty() {
        t.action.action_type.clone()
    } else {
        format!("{}_{}", t.action.action_type, what)
    };
    let mut name = sanitize_node_id(&label);
    while name.len() > 60 {
        name.pop();
    }
    format!(
        "action_{name}_{}",
        &t.transition_id[..6.min(t.transition_id.len())]
    )
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Each page's depth from the root and the (parent, label) it was first reached by.
pub(crate) type Tree = HashMap<String, (u32, Option<(String, String)>)>;

/// Breadth-first depth, parent and source action of each page from the app's root page.
pub(crate) fn bfs(data: &AppData, root: &str) -> Tree {
    let mut out = HashMap::new();
    let mut adjacency: HashMap<&str, Vec<&Transition>> = HashMap::new();
    for t in &data.transitions {
        adjacency.entry(t.from_page.as_str()).or_default().push(t);
    }
    if !data.pages.iter().any(|p| p.page_id == root) {
        return out;
    }
    out.insert(root.to_string(), (0, None));
    let mut queue = VecDeque::from([root.to_string()]);
    while let Some(page) = queue.pop_front() {
        let depth = out[&page].0;
        for t in adjacency.get(page.as_str()).into_iter().flatten() {
            if !out.contains_key(&t.to_page) {
                out.insert(
                    t.to_page.clone(),
                    (depth + 1, Some((t.from_page.clone(), t.action.label()))),
                );
                queue.push_back(t.to_page.clone());
            }
        }
    }
    out
}

pub(crate) fn root_page(data: &AppData) -> Option<&Page> {
    data.app
        .home_page
        .as_deref()
        .and_then(|h| data.pages.iter().find(|p| p.page_id == h))
        .or_else(|| data.pages.iter().min_by_key(|p| p.ordinal))
}

pub(crate) fn page_url(page: &Page) -> String {
    if page.url.is_empty() {
        format!("app://{}/{}", page.app_id, page.page_id)
    } else {
        page.url.clone()
    }
}

pub use atlas_store::SCREENSHOT;

/// `has_screenshot`: the page's folder holds [`SCREENSHOT`].
pub(crate) fn build_meta(page: &Page, tree: &Tree, has_screenshot: bool) -> Meta {
    let (depth, parent) = match tree.get(&page.page_id) {
        Some((d, p)) => (Some(*d), p.clone()),
        None => (None, None),
    };
    Meta {
        id: page.page_id.clone(),
        url: page_url(page),
        // What the page showed last, where a version told it; else its name.
        title: page
            .faces
            .last()
            .map(|f| f.title.clone())
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| page.page_name.clone()),
        summary: page.description.clone(),
        dom_fingerprint: if !page.fingerprint.is_empty() {
            page.fingerprint.clone()
        } else if page.widgets.is_empty() {
            String::new()
        } else {
            atlas_model::ui_fingerprint(&page.widgets)
        },
        screenshot: if has_screenshot {
            SCREENSHOT.to_string()
        } else {
            String::new()
        },
        parent_id: parent.as_ref().map(|(p, _)| p.clone()),
        source_action: parent.map(|(_, a)| a),
        depth,
        created_at: page.created_at.clone(),
        visited_count: page.visited_count,
        tags: std::iter::once(page.page_type.as_str())
            .chain(page.gone_in.is_some().then_some("gone"))
            .map(str::to_string)
            .collect(),
        page: page.clone(),
    }
}

pub(crate) fn build_index(dir: &str, data: &AppData, tree: &Tree, created_at: String) -> Index {
    let nodes: BTreeMap<String, IndexNode> = data
        .pages
        .iter()
        .map(|p| {
            let node = IndexNode {
                path: format!("{dir}/{}", node_dir_name(p)),
                url: page_url(p),
                summary: if p.description.is_empty() {
                    p.page_name.clone()
                } else {
                    p.description.clone()
                },
                created_at: p.created_at.clone(),
                seen_in: p.seen_in.clone(),
                gone_in: p.gone_in.clone(),
            };
            (p.page_id.clone(), node)
        })
        .collect();
    Index {
        version: FORMAT_VERSION.into(),
        created_at,
        updated_at: atlas_model::now_rfc3339(),
        root_node: root_page(data)
            .map(|p| p.page_id.clone())
            .unwrap_or_default(),
        nodes,
        statistics: IndexStatistics {
            total_nodes: data.pages.len() as u64,
            total_edges: data.transitions.len() as u64,
            max_depth: tree.values().map(|(d, _)| *d as u64).max().unwrap_or(0),
        },
        app_versions: data.app.versions.clone(),
    }
}

/// Writes `bytes` unless the file already holds them.
fn write_if_changed(path: &Path, bytes: &[u8], cache: &mut FoldCache) -> Result<bool, StoreError> {
    let h = hash_bytes(bytes);
    if cache.meta_hash.get(path) == Some(&h) {
        return Ok(false);
    }
    if !cache.meta_hash.contains_key(path) && fs::read(path).is_ok_and(|old| old == bytes) {
        cache.meta_hash.insert(path.to_path_buf(), h);
        return Ok(false);
    }
    atomic_write(path, bytes, false)?;
    cache.meta_hash.insert(path.to_path_buf(), h);
    Ok(true)
}

/// Whether `path` is a symbolic link (not followed).
pub(crate) fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

pub(crate) fn ensure_node_dirs(node: &Path) -> Result<(), StoreError> {
    if let Some(parent) = node.parent() {
        atlas_store::files::refuse_links(parent, &node.join("links"))?;
    }
    for sub in NODE_SUBDIRS {
        fs::create_dir_all(node.join(sub)).map_err(|e| {
            StoreError::caused(format!("cannot create {}", node.join(sub).display()), e)
        })?;
    }
    Ok(())
}

/// Creates the link `from/links/name -> ../../to` or, where symlinks fail, records it in
/// `from/_links.json` (seed 001 §5.3).
pub(crate) fn ensure_link(from: &Path, name: &str, to_dir: &str) -> Result<(), StoreError> {
    let link = from.join("links").join(name);
    let target = PathBuf::from("..").join("..").join(to_dir);
    match fs::symlink_metadata(&link) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        Err(_) => {}
    }
    #[cfg(unix)]
    let made = std::os::unix::fs::symlink(&target, &link);
    #[cfg(not(unix))]
    let made: std::io::Result<()> = Err(std::io::Error::other("no symlinks"));
    if made.is_ok() {
        return Ok(());
    }
    let fallback = from.join("_links.json");
    let mut links: BTreeMap<String, String> = fs::read(&fallback)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    links.insert(name.to_string(), format!("../{to_dir}"));
    atomic_write(
        &fallback,
        &serde_json::to_vec_pretty(&links).expect("json"),
        false,
    )
}

/// One graph file as it is written: [`crate::files::GraphFile`]'s fields, in its order, borrowing the app's
/// lists instead of copying them.
#[derive(serde::Serialize)]
struct GraphFileOut<'a> {
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    app: Option<&'a atlas_model::App>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    parts: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    journal_folded_before: Option<u64>,
    pages: &'a [Page],
    intents: &'a [atlas_model::Intent],
    transitions: &'a [Transition],
    traces: &'a [atlas_model::Trace],
}

/// How many bytes `item` takes in a graph file as [`graph_files`] writes it: pretty-printed two
/// levels deep (the file's object, then one of its lists), so each of its lines but the first is
/// indented by four more spaces, after a line break and four spaces of its own and before a comma.
fn written_size<T: serde::Serialize>(item: &T) -> Result<usize, StoreError> {
    let pretty = serde_json::to_vec_pretty(item).map_err(|e| StoreError::caused("", e))?;
    let lines = pretty.iter().filter(|b| **b == b'\n').count();
    Ok(pretty.len() + 4 * lines + 6)
}

/// What a graph file takes before its lists' items: its fields, the app's record in the head,
/// the names of the parts and the lists' brackets, with room to spare.
const FILE_OVERHEAD: usize = 64 * 1024;

/// Starts a new file wherever the next of `items` (the graph's `list`-th list) would take the
/// one being filled (`used` bytes so far, as written) past the part budget; each file starts at
/// a position (list, index) in the graph's lists taken one after another. An item over the
/// budget on its own gets a file of its own; one over the folder's limit is refused here (the
/// service refuses such entities when they are written, so only a folder edited by hand has one).
fn place<T: serde::Serialize>(
    items: &[T],
    list: usize,
    used: &mut usize,
    starts: &mut Vec<(usize, usize)>,
) -> Result<(), StoreError> {
    for (i, item) in items.iter().enumerate() {
        let size = written_size(item)?;
        if size + FILE_OVERHEAD > MAX_JSON_BYTES {
            return Err(StoreError::TooLarge {
                what: format!("one entity of the graph ({})", LISTS[list]),
                size,
                limit: MAX_JSON_BYTES - FILE_OVERHEAD,
            });
        }
        if *used + size > GRAPH_PART_BUDGET && *used > FILE_OVERHEAD {
            starts.push((list, i));
            *used = FILE_OVERHEAD;
        }
        *used += size;
    }
    Ok(())
}

/// The graph file's lists, in the order [`graph_files`] places them.
const LISTS: [&str; 4] = ["pages", "intents", "transitions", "traces"];

/// Splits the graph into files under the part budget: the head (`graph.json`, with the app and
/// `cut`, the journal segment the files cover up to) and as many generation-named parts as
/// needed.
fn graph_files(
    data: &AppData,
    generation: &str,
    cut: u64,
) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let mut starts = vec![(0, 0)];
    let mut used = FILE_OVERHEAD;
    place(&data.pages, 0, &mut used, &mut starts)?;
    place(&data.intents, 1, &mut used, &mut starts)?;
    place(&data.transitions, 2, &mut used, &mut starts)?;
    place(&data.traces, 3, &mut used, &mut starts)?;
    let lens = [
        data.pages.len(),
        data.intents.len(),
        data.transitions.len(),
        data.traces.len(),
    ];
    // Where the position `at` falls within list `list`: past its end, at an index, or before it.
    let offset = |at: (usize, usize), list: usize| match list.cmp(&at.0) {
        std::cmp::Ordering::Less => lens[list],
        std::cmp::Ordering::Equal => at.1,
        std::cmp::Ordering::Greater => 0,
    };
    let names: Vec<String> = (1..starts.len())
        .map(|k| format!("graph.{generation}.{k:03}.json"))
        .collect();
    let mut out = Vec::new();
    for (k, start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or((lens.len(), 0));
        let range = |list: usize| offset(*start, list)..offset(end, list);
        let file = GraphFileOut {
            version: FORMAT_VERSION,
            app: (k == 0).then_some(&data.app),
            parts: if k == 0 { &names } else { &[] },
            journal_folded_before: (k == 0).then_some(cut),
            pages: &data.pages[range(0)],
            intents: &data.intents[range(1)],
            transitions: &data.transitions[range(2)],
            traces: &data.traces[range(3)],
        };
        let name = match k {
            0 => "graph.json".to_string(),
            _ => names[k - 1].clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| StoreError::caused("", e))?;
        out.push((name, bytes));
    }
    Ok(out)
}

/// Folds one app, as it stood when the journal was cut at segment `cut`, into its folder. Order
/// matters for crash safety: node folders and links first, then graph parts, then `graph.json`
/// (which the loader trusts, and which records `cut`), then the index.
pub(crate) fn fold_app(
    app_root: &Path,
    dir: &str,
    data: &AppData,
    cut: u64,
    cache: &mut FoldCache,
) -> Result<(), StoreError> {
    let meta_dir = app_root.join(".atlas");
    atlas_store::files::refuse_links(app_root, &meta_dir.join("logs"))?;
    fs::create_dir_all(meta_dir.join("logs"))?;
    let config_path = app_root.join("config.json");
    let config = match files::read_config(app_root) {
        Ok(c) => c,
        Err(_) => {
            let c = Config {
                app_id: data.app.app_id.clone(),
                version: FORMAT_VERSION.into(),
                created_at: data.app.created_at.clone(),
            };
            atomic_write(
                &config_path,
                &serde_json::to_vec_pretty(&c).expect("json"),
                true,
            )?;
            c
        }
    };
    let root = root_page(data)
        .map(|p| p.page_id.clone())
        .unwrap_or_default();
    let tree = bfs(data, &root);
    let dirs: HashMap<&str, String> = data
        .pages
        .iter()
        .map(|p| (p.page_id.as_str(), node_dir_name(p)))
        .collect();
    let (mut metas_written, mut links_made) = (0usize, 0usize);
    // A page folder that is a link (to anywhere) is not written through: `fsck` reports it and
    // `--repair` makes it a folder again; the graph files keep the page meanwhile.
    let linked: HashSet<&str> = dirs
        .values()
        .filter(|dir| is_link(&app_root.join(dir)))
        .map(String::as_str)
        .collect();
    for dir in &linked {
        append_log(
            &meta_dir.join("logs").join("operations.log"),
            &format!(
                "checkpoint: {dir} is a symbolic link, not a folder: not written (run atlas fsck --repair)"
            ),
        );
    }
    for page in &data.pages {
        if linked.contains(dirs[page.page_id.as_str()].as_str()) {
            continue;
        }
        let node = app_root.join(&dirs[page.page_id.as_str()]);
        if !cache.made_dirs.contains(&node) {
            ensure_node_dirs(&node)?;
            cache.made_dirs.insert(node.clone());
        }
        let meta = build_meta(page, &tree, node.join(SCREENSHOT).is_file());
        files::validate_meta(&meta).map_err(|m| StoreError::Corrupt {
            path: node.display().to_string(),
            message: m.to_string(),
        })?;
        let bytes = serde_json::to_vec_pretty(&meta).expect("json");
        if write_if_changed(&node.join("meta.json"), &bytes, cache)? {
            metas_written += 1;
        }
    }
    for t in &data.transitions {
        let (Some(from), Some(to)) = (dirs.get(t.from_page.as_str()), dirs.get(t.to_page.as_str()))
        else {
            continue;
        };
        // Known by its page's folder and its id (which fix its link's name), so a checkpoint
        // builds no path and no name for the links it made before.
        let known = format!("{from}/{}", t.transition_id);
        if cache.links.contains(&known) || linked.contains(from.as_str()) {
            continue;
        }
        ensure_link(&app_root.join(from), &link_name(t), to)?;
        cache.links.insert(known);
        links_made += 1;
    }
    let generation = format!(
        "{}",
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
    );
    let graph = graph_files(data, &generation, cut)?;
    // The image copies the graph files about to be replaced: it goes first (see `image.rs`).
    crate::image::forget(app_root)?;
    for (name, bytes) in graph.iter().skip(1) {
        atomic_write(&meta_dir.join(name), bytes, true)?;
    }
    atomic_write(&meta_dir.join("graph.json"), &graph[0].1, true)?;
    let keep: HashSet<&str> = graph.iter().map(|(n, _)| n.as_str()).collect();
    for entry in fs::read_dir(&meta_dir)? {
        let name = entry?.file_name().to_string_lossy().to_string();
        if name.starts_with("graph.") && name.ends_with(".json") && !keep.contains(name.as_str()) {
            let _ = fs::remove_file(meta_dir.join(&name));
        }
    }
    let index = build_index(dir, data, &tree, config.created_at.clone());
    atomic_write(
        &app_root.join("index.json"),
        &serde_json::to_vec_pretty(&index).expect("json"),
        true,
    )?;
    let stats = statistics(data, &index);
    atomic_write(
        &meta_dir.join("statistics.json"),
        &serde_json::to_vec_pretty(&stats).expect("json"),
        false,
    )?;
    append_log(
        &meta_dir.join("logs").join("operations.log"),
        &format!(
            "checkpoint: meta.json written={metas_written} links created={links_made} graph files={} pages={} transitions={}",
            graph.len(),
            data.pages.len(),
            data.transitions.len()
        ),
    );
    Ok(())
}

fn statistics(data: &AppData, index: &Index) -> serde_json::Value {
    let reports: u64 = data
        .transitions
        .iter()
        .map(|t| t.success_count + t.fail_count)
        .sum();
    let successes: u64 = data.transitions.iter().map(|t| t.success_count).sum();
    serde_json::json!({
        "app_id": data.app.app_id,
        "updated_at": index.updated_at,
        "pages": data.pages.len(),
        "transitions": data.transitions.len(),
        "intents": data.intents.len(),
        "traces": data.traces.len(),
        "reports": reports,
        "success_rate": if reports == 0 { serde_json::Value::Null } else { (successes as f64 / reports as f64).into() },
        "max_depth": index.statistics.max_depth,
    })
}
