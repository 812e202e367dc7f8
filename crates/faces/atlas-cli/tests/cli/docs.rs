//! The README and `docs/` held to the binary: every `atlas` command and option they show is one
//! the binary takes, every route `docs/http-api.md` lists is served and every route served is
//! listed there, every request the pages send to the server goes to a route it serves, and every
//! link between the pages leads to a page and a heading that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The README and every page of `docs/`, by their paths from the repository's root.
fn pages() -> BTreeMap<String, String> {
    let root = repository();
    let mut pages = BTreeMap::new();
    pages.insert(
        "README.md".to_string(),
        std::fs::read_to_string(root.join("README.md")).unwrap(),
    );
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            pages.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    assert!(pages.len() > 10, "the README and the docs pages");
    pages
}

/// The text of `page` in code: each fenced block's lines (continuations joined) and each
/// inline code span.
fn code_of(page: &str) -> Vec<String> {
    let mut code = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            pending.push_str(line.trim_end_matches('\\'));
            if !line.ends_with('\\') {
                code.push(std::mem::take(&mut pending));
            }
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find('`') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('`') else { break };
            code.push(after[..end].to_string());
            rest = &after[end + 1..];
        }
    }
    code
}

/// The `atlas` command lines in a piece of code: after `atlas ` or `cargo run --release -- `,
/// up to a shell operator or a comment (a table's escaped bar, `\|`, is an alternative within
/// a command, not a pipe).
fn atlas_commands(code: &str) -> Vec<Vec<String>> {
    let code = match code.find(" # ") {
        Some(comment) => &code[..comment],
        None => code,
    };
    let mut commands = Vec::new();
    for part in code.split(['&', ';', '>', '<']) {
        for segment in part.split(" | ") {
            let segment = segment.trim();
            let rest = segment
                .strip_prefix("atlas ")
                .or_else(|| segment.strip_prefix("cargo run --release -- "));
            if let Some(rest) = rest {
                commands.push(rest.split_whitespace().map(str::to_string).collect());
            }
        }
    }
    commands
}

/// What `atlas PATH --help` says: its subcommands and the options it names.
#[derive(Default)]
struct Help {
    subcommands: BTreeSet<String>,
    options: BTreeSet<String>,
}

fn help(path: &[String], cache: &mut BTreeMap<Vec<String>, Help>) -> bool {
    if cache.contains_key(path) {
        return true;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(path)
        .arg("--help")
        .output()
        .unwrap();
    if !out.status.success() {
        return false;
    }
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut help = Help::default();
    let mut in_commands = false;
    for line in text.lines() {
        if line.starts_with("Commands:") {
            in_commands = true;
            continue;
        }
        if in_commands {
            match line.split_whitespace().next() {
                Some(name) if line.starts_with("  ") && name != "help" => {
                    help.subcommands.insert(name.to_string());
                }
                _ if line.trim().is_empty() => in_commands = false,
                _ => {}
            }
        }
    }
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if word.starts_with("--") && word.len() > 2 {
            help.options.insert(word.to_string());
        }
    }
    cache.insert(path.to_vec(), help);
    true
}

/// Every command (as its subcommand path) the binary has.
fn command_tree(cache: &mut BTreeMap<Vec<String>, Help>) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    let mut queue = vec![Vec::<String>::new()];
    while let Some(path) = queue.pop() {
        assert!(help(&path, cache), "atlas {} --help", path.join(" "));
        let subcommands = cache[&path].subcommands.clone();
        if subcommands.is_empty() {
            all.push(path);
        } else {
            for sub in subcommands {
                let mut next = path.clone();
                next.push(sub);
                queue.push(next);
            }
        }
    }
    all
}

#[test]
fn every_command_and_option_the_docs_show_is_the_binarys_and_every_command_is_documented() {
    let mut cache = BTreeMap::new();
    let tree = command_tree(&mut cache);
    let mut problems = Vec::new();
    let mut shown = 0;
    let mut documented = BTreeSet::new();
    for (page, text) in pages() {
        for code in code_of(&text) {
            for words in atlas_commands(&code) {
                // The subcommand path: words while the command so far has subcommands (an
                // option ends it: `atlas --help`).
                let mut path = Vec::new();
                let mut known = true;
                for word in &words {
                    let subcommands = &cache[&path].subcommands;
                    if subcommands.is_empty() || word.starts_with('-') {
                        break;
                    }
                    if !subcommands.contains(word) {
                        problems.push(format!(
                            "{page}: `atlas {}`: no command {word:?}",
                            words.join(" ")
                        ));
                        known = false;
                        break;
                    }
                    path.push(word.clone());
                    help(&path, &mut cache);
                }
                if !known {
                    continue;
                }
                shown += 1;
                documented.insert(path.clone());
                let options = &cache[&path].options;
                for word in &words {
                    let Some(start) = word.find("--") else {
                        continue;
                    };
                    let option: String = word[start..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                        .collect();
                    if option.len() > 2 && !options.contains(&option) {
                        problems.push(format!(
                            "{page}: `atlas {}` takes no {option}",
                            path.join(" ")
                        ));
                    }
                }
            }
        }
    }
    assert!(shown > 100, "the docs show commands: {shown}");
    for path in &tree {
        if !documented.contains(path) {
            problems.push(format!("`atlas {}` is in no page", path.join(" ")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A route as a method and its path with every parameter written `{}`.
fn route(method: &str, path: &str) -> (String, String) {
    let path = path.split(['?', '[']).next().unwrap_or_default();
    let segments: Vec<&str> = path
        .split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect();
    (method.to_uppercase(), segments.join("/"))
}

/// The routes a table's first cells list: each `METHOD /path` in code.
fn listed_routes(text: &str) -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split(" | ").next().unwrap_or_default();
        for code in code_of(cell) {
            if let Some((method, path)) = code.split_once(' ')
                && ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method)
                && path.starts_with('/')
            {
                routes.insert(route(method, path));
            }
        }
    }
    routes
}

#[test]
fn the_routes_the_docs_list_are_the_routes_the_server_serves() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &["--demo"]);
    let (status, _, body) = server.get_bytes("/openapi.json");
    assert_eq!(status, 200);
    let document: Value = serde_json::from_slice(&body).unwrap();
    let mut served = BTreeSet::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            served.insert(route(method, path));
        }
    }
    // The pages, and what they load from the server.
    let mut assets = BTreeSet::new();
    for page in ["/", "/chat", "/runs"] {
        let (status, content_type, body) = server.get_bytes(page);
        assert_eq!(status, 200, "{page}");
        assert!(
            content_type.starts_with("text/html"),
            "{page}: {content_type}"
        );
        served.insert(route("GET", page));
        let html = String::from_utf8(body).unwrap();
        for attribute in ["src=\"", "href=\""] {
            for piece in html.split(attribute).skip(1) {
                let target = piece.split('"').next().unwrap_or_default();
                if target.starts_with('/') && target.contains('.') {
                    assets.insert(target.to_string());
                }
            }
        }
    }
    assert!(
        assets.len() >= 5,
        "the pages load their scripts and styles: {assets:?}"
    );
    let pages = pages();
    let reference = &pages["docs/http-api.md"];
    let listed = listed_routes(reference);
    let mut problems = Vec::new();
    for r in &listed {
        if !served.contains(r) {
            problems.push(format!(
                "docs/http-api.md lists {} {}, which is not served",
                r.0, r.1
            ));
        }
    }
    for r in &served {
        if !listed.contains(r) {
            problems.push(format!(
                "{} {} is served but not in docs/http-api.md",
                r.0, r.1
            ));
        }
    }
    // Each asset answers, and the reference names it or its folder.
    for asset in &assets {
        let (status, _, _) = server.get_bytes(asset);
        assert_eq!(status, 200, "{asset}");
        let folder = &asset[..asset.rfind('/').unwrap() + 1];
        if !reference.contains(asset.as_str()) && !reference.contains(&format!("`{folder}…`")) {
            problems.push(format!(
                "{asset} is served but docs/http-api.md names neither it nor {folder}…"
            ));
        }
    }
    // The requests the pages show, written against the demo server, go to served routes.
    let mut requests = 0;
    for (page, text) in &pages {
        for code in code_of(text) {
            for (at, _) in code
                .match_indices("localhost:7700/")
                .chain(code.match_indices("127.0.0.1:7700/"))
            {
                let url = &code[at..];
                let path = &url[url.find('/').unwrap()..];
                let path: String = path
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | ')' | '`'))
                    .collect();
                let path = route("GET", &path).1;
                requests += 1;
                let exists = served
                    .iter()
                    .any(|(_, template)| same_route(template, &path));
                if !exists {
                    problems.push(format!("{page}: a request to {path}, which is not served"));
                }
            }
        }
    }
    assert!(requests >= 5, "the pages show requests: {requests}");
    server.stop();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether a path written in the docs (placeholders in capitals, `ID`, `KEY`) is the route
/// `template` (parameters `{}`).
fn same_route(template: &str, path: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(t, p)| {
            t == p
                || *t == "{}"
                    && (p.chars().all(|c| c.is_ascii_uppercase() || c == '_') || p.len() > 12)
        })
}

/// GitHub's anchor for a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_link_between_the_pages_leads_to_a_page_and_a_heading() {
    let pages = pages();
    let root = repository();
    let mut problems = Vec::new();
    let mut links = 0;
    for (page, text) in &pages {
        let folder = Path::new(page).parent().unwrap();
        for piece in text.split("](").skip(1) {
            let target = piece.split(')').next().unwrap_or_default();
            if target.starts_with("http") {
                continue;
            }
            links += 1;
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                folder.join(file).to_string_lossy().to_string()
            };
            let Ok(linked) = std::fs::read_to_string(root.join(&file))
                .or_else(|_| std::fs::metadata(root.join(&file)).map(|_| String::new()))
            else {
                problems.push(format!("{page}: a link to {target}: no such file"));
                continue;
            };
            if !fragment.is_empty() {
                let found = linked
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .any(|l| anchor(l.trim_start_matches('#')) == fragment);
                if !found {
                    problems.push(format!("{page}: a link to {target}: no such heading"));
                }
            }
        }
    }
    assert!(links > 20, "the pages link to each other: {links}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
