//! Versions of an app on a running server and on the command line: two releases written over
//! HTTP, what changed between them over HTTP, MCP and `atlas diff`.

use serde_json::{Value, json};

use crate::common::*;

pub const APP: &str = "tracker.test";

fn ok(server: &Server, tool: &str, body: Value) -> Value {
    let (status, answer) = server.call(tool, body);
    assert_eq!(status, 200, "{tool}: {answer}");
    answer
}

fn page(server: &Server, name: &str, version: &str, texts: &[&str]) -> String {
    let widgets: Vec<Value> = texts
        .iter()
        .map(|t| json!({"id": format!("#{t}"), "text": t, "type": "a"}))
        .collect();
    let answer = ok(
        server,
        "add_page",
        json!({"app_id": APP, "page_name": name, "page_type": if name == "首页" {"home"} else {"detail"},
               "ui_hierarchy": {"widgets": widgets}, "app_version": version,
               "intents": if name == "搜索" { vec!["搜索问题"] } else { vec![] }}),
    );
    answer["page_id"].as_str().unwrap().to_string()
}

fn step(server: &Server, from: &str, text: &str, to: &str, version: &str) -> String {
    let answer = ok(
        server,
        "report_transition",
        json!({"from_page": from, "to_page": to, "success": true, "app_version": version,
               "action": {"type": "click", "widget_text": text}}),
    );
    answer["transition_id"].as_str().unwrap().to_string()
}

/// Release 2.2 of a small app, then 2.6: 帮助 removed, 搜索 moved behind a new 菜单 and
/// showing one more text, 关于 the same.
pub fn two_releases(server: &Server) {
    let home = page(server, "首页", "2.2", &["搜索", "帮助", "关于"]);
    let search = page(server, "搜索", "2.2", &["查找"]);
    let help = page(server, "帮助", "2.2", &["返回"]);
    let about = page(server, "关于", "2.2", &["Roundup"]);
    let direct = step(server, &home, "搜索", &search, "2.2");
    step(server, &home, "帮助", &help, "2.2");
    let about_link = step(server, &home, "关于", &about, "2.2");
    let menu = page(server, "菜单", "2.6", &["搜索"]);
    page(server, "首页", "2.6", &["菜单", "关于"]);
    page(server, "搜索", "2.6", &["查找", "高级"]);
    step(server, &home, "菜单", &menu, "2.6");
    step(server, &menu, "搜索", &search, "2.6");
    let recorded = ok(
        server,
        "record_app_version",
        json!({"app_id": APP, "version": "2.6", "source": "user", "seen_transitions": [about_link],
               "gone_pages": [help], "gone_transitions": [direct]}),
    );
    assert_eq!(recorded["marked_gone"], 3, "{recorded}");
}

#[test]
fn a_release_diff_over_http_mcp_and_the_command_line() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    two_releases(&server);
    let diff = ok(&server, "get_app_diff", json!({"app_id": APP}));
    assert_eq!(
        (diff["from"].as_str(), diff["to"].as_str()),
        (Some("2.2"), Some("2.6"))
    );
    assert_eq!(diff["pages"]["added"][0]["page_name"], "菜单", "{diff}");
    assert_eq!(diff["pages"]["removed"][0]["page_name"], "帮助", "{diff}");
    assert_eq!(diff["pages"]["unchanged"], 1, "{diff}");
    assert_eq!(
        diff["intents"]["path_changed"][0]["intent"], "搜索问题",
        "{diff}"
    );
    let path = ok(
        &server,
        "query_path",
        json!({"app_id": APP, "intent": "搜索问题"}),
    );
    let steps: Vec<&str> = path["path"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["widget_text"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["菜单", "搜索"], "the current version's way: {path}");
    // Bad input changes nothing and says so in the seed's error format.
    assert_error(
        &server.call(
            "get_app_diff",
            json!({"app_id": APP, "from_version": "9.9"}),
        ),
        404,
        "NOT_FOUND",
    );
    assert_error(
        &server.call(
            "record_app_version",
            json!({"app_id": APP, "version": "3.0", "gone_pages": ["nope"]}),
        ),
        404,
        "NOT_FOUND",
    );
    // MCP, stateless: the same answer.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_app_diff", "arguments": {"app_id": APP, "from_version": "2.2", "to_version": "2.6"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let (_, _, answer) = mcp_post(&server, &[("MCP-Protocol-Version", "2026-07-28")], &call);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["structuredContent"], diff);
    server.stop();

    let folder = data.path().to_str().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["diff", APP, "--data", folder])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for line in [
        "tracker.test: 2.2 -> 2.6 (versions 2.2, 2.6)",
        "pages: 1 added, 1 removed, 2 changed, 1 unchanged, 0 not checked",
        "+ 菜单",
        "- 帮助",
        "~ 搜索: texts +\"高级\"",
        "- 首页: 点击'搜索' -> 搜索",
        "~ intent \"搜索问题\" (搜索): 点击'搜索' → 搜索 => 点击'菜单' → 菜单, 点击'搜索' → 搜索",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} not in\n{text}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["diff", APP, "--data", folder, "--json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json, diff);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["diff", APP, "--data", folder, "--to", "3.0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no version \"3.0\""));
}

/// `atlas import release DIR --app APP [--update SEED] --json` on a data folder, its answer.
fn import_release(data: &std::path::Path, dir: &std::path::Path, update: Option<&str>) -> Value {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"));
    c.args(["import", "release"])
        .arg(dir)
        .args(["--app", "notes.release", "--json", "--data"])
        .arg(data);
    if let Some(seed) = update {
        c.args(["--update", seed]);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_recorded_phone_app_and_its_seeded_update_are_two_releases_of_one_app() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/data/droidtask-dev/user_tasks/notes");
    if !dir.join("states").is_dir() {
        eprintln!("no DroidTask folder: skipped");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let first = import_release(data.path(), &dir, None);
    assert_eq!(first["version"], "1.0", "{first}");
    assert!(first["previous"].is_null());
    assert_eq!(first["marked_gone"], 0);
    // The simulated phone's seeded update (`atlas device sim --update 1`), as the next release.
    let second = import_release(data.path(), &dir, Some("1"));
    assert_eq!(
        (second["version"].as_str(), second["previous"].as_str()),
        (Some("2.1"), Some("1.0")),
        "{second}"
    );
    // Screens both releases show keep their pages, nearly all; the update's removed entries
    // leave pages no way reaches any more, marked gone and still there.
    let (old, new) = (
        first["pages"].as_object().unwrap(),
        second["pages"].as_object().unwrap(),
    );
    let both: Vec<&String> = old.keys().filter(|s| new.contains_key(*s)).collect();
    let kept = both.iter().filter(|s| old[**s] == new[**s]).count();
    assert!(kept * 10 >= both.len() * 9, "{kept} of {}", both.len());
    let removed = second["diff"]["pages"]["removed"].as_array().unwrap();
    assert!(!removed.is_empty(), "{second}");
    let still: Vec<&Value> = new.values().collect();
    assert!(removed.iter().all(|p| !still.contains(&&p["page_id"])));
    // The same release again changes nothing and marks nothing gone.
    let again = import_release(data.path(), &dir, Some("1"));
    assert_eq!(again["marked_gone"], 0, "{again}");
    assert_eq!(again["pages_added"], 0, "{again}");
    // What changed, as `atlas diff` lists it; the gone pages kept in the folder.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["diff", "notes.release", "--json", "--data"])
        .arg(data.path())
        .output()
        .unwrap();
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(diff["pages"]["removed"], second["diff"]["pages"]["removed"]);
    let stats = std::process::Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["stats", "--app", "notes.release", "--data"])
        .arg(data.path())
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    let pages = stats["by_app"][0]["pages"].as_u64().unwrap() as usize;
    let distinct: std::collections::HashSet<&Value> = old.values().chain(new.values()).collect();
    assert_eq!(pages, distinct.len(), "nothing deleted: {stats}");
}
