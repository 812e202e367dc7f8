//! `atlas explore` on the bundled demo site in Debian's headless Chromium: the states and
//! transitions found, identity under a ticking clock and time-stamped links, the
//! network filter and the write policy, a SIGKILL in the middle and the resumption, the folder's integrity, the graph served
//! over the explored site, and a generated navigation script replayed by Playwright.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{
    DiesWithTest, Served, chromium, free_port, fsck, installed_at, report_of, required,
    until_answers,
};

pub(crate) struct KillOnDrop(pub(crate) Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // The child leads its own process group: its browser goes with it.
        if let Ok(group) = i32::try_from(self.0.id())
            && group > 1
        {
            // SAFETY: kill(2) with a negative pid signals that process group and nothing else.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub(crate) fn atlas() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_atlas"));
    c.process_group(0);
    c
}

fn get(url: &str) -> Value {
    let mut resp = ureq::get(url).call().unwrap();
    serde_json::from_reader(resp.body_mut().as_reader()).unwrap()
}

pub(crate) fn demo_site() -> (KillOnDrop, String) {
    let addr = format!("127.0.0.1:{}", free_port());
    let child = atlas()
        .args(["demo-site", "--addr", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .dies_with_test()
        .spawn()
        .unwrap();
    let base = format!("http://{addr}");
    until_answers(
        &format!("{base}/stats"),
        "the demo site",
        Duration::from_secs(30),
    );
    (KillOnDrop(child), base)
}

pub(crate) fn states(app_dir: &Path) -> Vec<Value> {
    let saved: Value = serde_json::from_slice(
        &std::fs::read(app_dir.join(".atlas/explore.json")).unwrap_or_default(),
    )
    .unwrap_or(Value::Null);
    saved["states"].as_array().cloned().unwrap_or_default()
}

/// `atlas explore BASE/ --data DATA --chromium CHROMIUM`, to which a test adds its options.
pub(crate) fn explore_command(base: &str, data: &Path, chromium: &Path) -> Command {
    let mut c = atlas();
    c.args(["explore", &format!("{base}/"), "--data"])
        .arg(data)
        .arg("--chromium")
        .arg(chromium);
    c
}

/// No file under `data` holds `secret`.
fn assert_kept_nowhere(data: &Path, secret: &str) {
    let grep = Command::new("grep")
        .args(["-rl", secret])
        .arg(data)
        .output()
        .unwrap();
    assert!(
        grep.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&grep.stdout)
    );
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|e| e.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn the_demo_site_is_explored_safely_and_a_killed_exploration_resumes_without_duplicates() {
    let Some(chromium) = chromium() else { return };
    let (_site, base) = demo_site();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = base.rsplit(':').next().unwrap().to_string();
    let app = format!("127.0.0.1:{port}");
    let app_dir = data.join("apps").join(format!("127_0_0_1_{port}"));
    let explore = |extra: &[&str]| {
        let mut c = atlas();
        c.args(["explore", &format!("{base}/"), "--data"])
            .arg(&data)
            .arg("--chromium")
            .arg(&chromium)
            .args(["--max-seconds", "400", "--credentials", "ann:pw-Zq81x"])
            .args(extra);
        c
    };

    // Bad input is refused before anything is written.
    for bad in [
        vec!["ftp://x/"],
        vec![base.as_str(), "--tabs", "0"],
        vec![base.as_str(), "--credentials", "nopassword"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .arg("explore")
            .args(&bad)
            .arg("--data")
            .arg(&data)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error"),
            "{bad:?}"
        );
        assert!(!data.exists(), "{bad:?} made the data folder");
    }

    // Killed with SIGKILL (the browser with it) once a few states are written.
    let mut first = KillOnDrop(
        explore(&[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .dies_with_test()
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(240);
    while states(&app_dir).len() < 5 {
        assert!(Instant::now() < deadline, "no states written");
        assert!(
            first.0.try_wait().unwrap().is_none(),
            "the exploration ended early"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(first);
    let (clean, said) = fsck(&data);
    assert!(clean, "fsck after SIGKILL: {said}");
    let before: Vec<String> = states(&app_dir)
        .iter()
        .map(|s| s["fingerprint"].as_str().unwrap().to_string())
        .collect();

    // The same command again finishes the exploration.
    let report_path = dir.path().join("report.json");
    let report = report_of(
        &mut explore(&["--json", report_path.to_str().unwrap()]),
        &report_path,
    );
    assert_eq!(report["stopped_by"], "nothing left to explore", "{report}");
    // The release the site's footer names is the app's version.
    assert_eq!(report["version"], "1.2.0", "{report}");
    let found = states(&app_dir);
    let mut prints: Vec<&str> = found
        .iter()
        .map(|s| s["fingerprint"].as_str().unwrap())
        .collect();
    assert!(
        before.iter().all(|f| prints.contains(&f.as_str())),
        "states of the first run kept"
    );
    prints.sort();
    let all = prints.len();
    prints.dedup();
    assert_eq!(prints.len(), all, "a state written twice");
    let paths: Vec<String> = found
        .iter()
        .map(|s| {
            let url = s["url"].as_str().unwrap();
            url.split(&port)
                .nth(1)
                .unwrap()
                .split('?')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    let count = |p: &str| paths.iter().filter(|x| *x == p).count();
    // The header's menu, on every page, is opened once for the site: the home page with it
    // open is a state, and no other page has that twin.
    let menu_open: Vec<&str> = found
        .iter()
        .filter(|s| {
            let dom: Value = serde_json::from_slice(
                &std::fs::read(PathBuf::from(s["dir"].as_str().unwrap()).join("dom.json")).unwrap(),
            )
            .unwrap();
            dom["selected"]
                .as_array()
                .unwrap()
                .iter()
                .any(|x| x == "#menu")
        })
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert_eq!(menu_open.len(), 1, "{menu_open:?}");
    assert_eq!(count("/"), 2, "{paths:?}");
    for expected in [
        "/products",
        "/products/1",
        "/about",
        "/login",
        "/dashboard",
        "/account",
        "/guestbook",
        "/news",
        "/private",
        "/docs",
    ] {
        assert_eq!(count(expected), 1, "{expected}: {paths:?}");
    }
    // The clock ticks every second and the news link carries the time: one state each. The
    // single-page app's three tabs are three states at one address.
    assert_eq!(count("/clock"), 1, "{paths:?}");
    // Items of a list are one page, its kind, with examples: the three products one state
    // (the other two its examples), the twenty manual pages one state and five examples
    // (`--max-similar`), each named in the state's folder.
    let kind = |prefix: &str| -> Vec<&Value> {
        found
            .iter()
            .filter(|s| s["url"].as_str().unwrap().contains(prefix))
            .collect()
    };
    let examples = |state: &Value| -> Vec<String> {
        state["examples"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                e["url"]
                    .as_str()
                    .unwrap()
                    .split(&port)
                    .nth(1)
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let products = kind("/products/");
    assert_eq!(products.len(), 1, "{paths:?}");
    assert_eq!(products[0]["route"], format!("{base}/products/{{id}}"));
    let mut shown = examples(products[0]);
    shown.sort();
    assert_eq!(shown, ["/products/2", "/products/3"], "{:?}", products[0]);
    let docs = kind("/docs/");
    assert_eq!(docs.len(), 1, "{paths:?}");
    assert_eq!(examples(docs[0]).len(), 5, "{:?}", docs[0]);
    let named: Value = serde_json::from_slice(
        &std::fs::read(PathBuf::from(docs[0]["dir"].as_str().unwrap()).join("examples.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(named, docs[0]["examples"]);
    // Every state is a kind of its own: no two of one route and structure.
    let mut kinds: Vec<(&str, &str)> = found
        .iter()
        .map(|s| {
            (
                s["route"].as_str().unwrap(),
                s["template"].as_str().unwrap(),
            )
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(kinds.len(), found.len(), "{paths:?}");
    // The run counted its page loads, and every one of the pages it found was a load.
    assert!(
        report["loads"].as_u64().unwrap() >= report["new_states"].as_u64().unwrap(),
        "{report}"
    );
    // The search form, and its results (`?q=测试`).
    assert_eq!(count("/search"), 2, "{paths:?}");
    // The search was typed in Chinese, through the browser's text input.
    assert!(
        found.iter().any(|s| s["url"]
            .as_str()
            .unwrap()
            .ends_with("/search?q=%E6%B5%8B%E8%AF%95")),
        "{paths:?}"
    );
    assert_eq!(count("/app"), 3, "{paths:?}");
    // Nothing destructive was done: no deletion, no sign-out, no guestbook entry.
    let stats = get(&format!("{base}/stats"));
    assert_eq!(
        (&stats["deleted"], &stats["logouts"], &stats["entries"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{stats}"
    );
    assert!(
        stats["logins"].as_u64().unwrap() >= 1,
        "the login form was not tried: {stats}"
    );
    // The staff area is behind HTTP authentication, answered with the credentials.
    let private = found
        .iter()
        .find(|s| s["url"].as_str().unwrap().ends_with("/private"))
        .unwrap();
    assert_eq!(private["name"], "Staff area", "{private}");
    assert!(
        report["destructive_recorded"].as_u64().unwrap() >= 3,
        "{report}"
    );

    // Every task is whole and in one place: none left under way.
    let mut destructive_left = 0;
    for state in &found {
        let dir = PathBuf::from(state["dir"].as_str().unwrap());
        assert!(
            files_in(&dir.join("processing")).is_empty(),
            "{}",
            dir.display()
        );
        for file in files_in(&dir.join("todos")) {
            let task: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
            assert_eq!(
                task["is_destructive"], true,
                "a safe task left undone: {task}"
            );
            destructive_left += 1;
        }
        assert!(dir.join("screenshot.png").is_file());
        assert!(dir.join("dom.json").is_file());
        assert!(dir.join("reports/test_report.md").is_file());
        assert_eq!(files_in(&dir.join("scripts")).len(), 1);
        let meta: Value =
            serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
        assert_eq!(meta["dom_fingerprint"], state["fingerprint"], "{meta}");
        assert_eq!(meta["screenshot"], "screenshot.png");
    }
    assert!(destructive_left >= 3);
    let png =
        std::fs::read(PathBuf::from(found[0]["dir"].as_str().unwrap()).join("screenshot.png"))
            .unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let (clean, said) = fsck(&data);
    assert!(clean, "fsck after the run: {said}");
    let index: Value =
        serde_json::from_slice(&std::fs::read(app_dir.join("index.json")).unwrap()).unwrap();
    assert_eq!(index["statistics"]["total_nodes"], found.len());

    // The explored site is a graph like any app's: a path to the account page, by its title.
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["path", "--data"])
        .arg(&data)
        .args(["--app", &app, "--intent", "Account"])
        .output()
        .unwrap();
    let path: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        path["success"],
        true,
        "{path} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        path["path"]["steps"]
            .as_array()
            .is_some_and(|p| p.len() >= 2),
        "{path}"
    );
    // An intent that names one item of a kind ("doc 12") is led to that item: by the link that
    // names it where the way has one, else by the kind's address filled with the value.
    let path_to = |intent: &str, from: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_atlas"));
        command
            .args(["path", "--data"])
            .arg(&data)
            .args(["--app", &app, "--intent", intent]);
        if let Some(from) = from {
            command.args(["--from", from]);
        }
        let out = command.output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null)
    };
    let doc = found
        .iter()
        .find(|s| s["url"].as_str().unwrap().contains("/docs/"))
        .expect("a doc page");
    let path = path_to("打开 doc 12", None);
    let steps = path["path"]["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = steps.last().cloned().unwrap_or(Value::Null);
    assert_eq!(last["widget_text"], "Doc 12", "{path}");
    assert_eq!(last["expected_page"], doc["page_id"], "{path}");
    let path = path_to("doc 17", doc["page_id"].as_str());
    let steps = path["path"]["steps"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(steps.len(), 1, "{path}");
    assert_eq!(steps[0]["action_type"], "navigate", "{path}");
    let address = format!("{base}/docs/17");
    assert_eq!(steps[0]["url"], address.as_str(), "{path}");
    let page = ureq::get(&address)
        .call()
        .unwrap()
        .body_mut()
        .read_to_string();
    assert!(page.unwrap().contains("<h1>Doc 17</h1>"));
    // The password typed into the login form is kept nowhere in the folder.
    assert_kept_nowhere(&data, "pw-Zq81x");

    // The account page's script replays the way there (sign-in included) in Playwright.
    let account = found
        .iter()
        .find(|s| s["url"].as_str().unwrap().ends_with("/account"))
        .unwrap();
    let Some(ended) = replay_nav_script(account, &chromium, "pw-Zq81x") else {
        return;
    };
    assert_eq!(ended["url"], account["url"], "{ended}");
    assert_eq!(ended["title"], "Account", "{ended}");
}

/// A state's navigation script (`scripts/nav_<state>.py`) run by Playwright for Python, as a
/// person runs it: the page it ended on (`url`, `title`); none when Playwright is not here (see
/// [`required`]).
pub(crate) fn replay_nav_script(state: &Value, chromium: &Path, password: &str) -> Option<Value> {
    let scripts = files_in(&PathBuf::from(state["dir"].as_str().unwrap()).join("scripts"));
    let python = std::env::var("ATLAS_PLAYWRIGHT_PYTHON").unwrap_or_else(|_| "python3".into());
    if !required(
        Command::new(&python).args(["-c", "import playwright"]),
        &format!("playwright (for {python})"),
    ) {
        return None;
    }
    let out = Command::new(&python)
        .arg(&scripts[0])
        .env("ATLAS_CHROMIUM", chromium)
        .env("ATLAS_EXPLORE_PASSWORD", password)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        scripts[0].display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The wiki's stored revisions: any page created, edited or deleted changes this list.
fn wiki_data(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join("wiki/data")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.display().to_string(), entry.metadata().unwrap().len()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_real_wiki_open_to_anonymous_editing_is_explored_without_changing_it() {
    let Some(chromium) = chromium() else { return };
    let Some(moin) = installed_at("ATLAS_MOIN", "MoinMoin's moin command") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wiki = dir.path().join("wiki");
    let made = Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../scripts/moin-wiki.sh"
    ))
    .arg(&moin)
    .arg(&wiki)
    .status()
    .unwrap();
    assert!(made.success());
    let before = wiki_data(&wiki);
    assert!(before.len() > 20, "the wiki has its help pages");
    let port = free_port();
    let _server = KillOnDrop({
        let mut c = Command::new(&moin);
        c.process_group(0);
        c.args(["run", "--port", &port.to_string()])
            .current_dir(&wiki)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .dies_with_test()
            .spawn()
            .unwrap()
    });
    let base = format!("http://127.0.0.1:{port}");
    until_answers(&format!("{base}/Home"), "the wiki", Duration::from_secs(60));
    let data = dir.path().join("data");
    let report_path = dir.path().join("report.json");
    let report = report_of(
        explore_command(&base, &data, &chromium)
            .args([
                "--max-states",
                "25",
                "--max-seconds",
                "300",
                "--tabs",
                "2",
                "--json",
            ])
            .arg(&report_path),
        &report_path,
    );
    assert_eq!(report["states"], 25, "{report}");
    // Edit, rename, delete and save forms were there, recorded and not sent: not one revision of
    // the wiki was created, changed or removed.
    assert!(
        report["destructive_recorded"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert_eq!(wiki_data(&wiki), before, "the wiki changed");
    // Pages the wiki draws differently on each visit (a trail of visited pages, the login box)
    // are one state each: no two states are near-duplicates.
    let app_dir = files_in(&data.join("apps"))
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap();
    let found = states(&app_dir);
    let mut keys: Vec<&str> = found.iter().map(|s| s["key"].as_str().unwrap()).collect();
    keys.sort();
    let all = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), all, "near-duplicate states");
    let (clean, said) = fsck(&data);
    assert!(clean, "{said}");
}

/// Every task file of a state's folder in one place (`todos`, `completed`).
pub(crate) fn tasks_in(state: &Value, place: &str) -> Vec<Value> {
    files_in(&PathBuf::from(state["dir"].as_str().unwrap()).join(place))
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}

#[test]
fn a_hostile_site_on_two_origins_gets_no_secret_no_write_and_no_code_and_ends_no_run() {
    let Some(chromium) = chromium() else { return };
    let site = crate::hostile_site::serve();
    let (base, other) = (site.base.clone(), site.other.clone());
    until_answers(
        &format!("{base}/stats"),
        "the hostile site",
        Duration::from_secs(30),
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let report_path = dir.path().join("report.json");
    let password = crate::hostile_site::PASSWORD;
    let out = explore_command(&base, &data, &chromium)
        .args(["--max-seconds", "400", "--embedder", "hash", "--json"])
        .arg(&report_path)
        .arg("--credentials")
        .arg(format!("{}:{password}", crate::hostile_site::USER))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    // No page ended the run: not the odd DOM, not the image that never loads.
    assert!(out.status.success(), "{said}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report_path).unwrap()).unwrap();
    assert_eq!(report["stopped_by"], "nothing left to explore", "{report}");

    // Both origins' counts: no credentials, no password and no write reached anyone; the
    // sign-in and the staff area of the start origin did work.
    let stats = get(&format!("{other}/stats"));
    for zero in [
        "writes",
        "destructive_gets",
        "other_authorization",
        "other_secrets",
        "websockets",
    ] {
        assert_eq!(stats[zero], 0, "{zero}: {stats}");
    }
    assert!(stats["logins"].as_u64().unwrap() >= 1, "{stats}");
    assert!(stats["private_pages"].as_u64().unwrap() >= 1, "{stats}");

    let app_dir = files_in(&data.join("apps"))
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap();
    let found = states(&app_dir);
    let at = |path: &str| -> Vec<&Value> {
        found
            .iter()
            .filter(|s| {
                let url = s["url"].as_str().unwrap();
                url.strip_prefix(&base)
                    .is_some_and(|p| p.split('?').next() == Some(path))
            })
            .collect()
    };
    // The odd page was read (fields named action/method/id, SVG links, 10,000 links, 5 MB of
    // text, lone surrogates, replaced built-ins); so were the slow page and both SVG links'
    // targets. A panel swapped on one address is a state of its own; "My orders" is explored.
    for path in [
        "/odd",
        "/odd-results",
        "/slow",
        "/orders",
        "/orders/9",
        "/account",
        "/private",
    ] {
        assert_eq!(at(path).len(), 1, "{path}: {found:#?}");
    }
    assert_eq!(at("/panel").len(), 2, "{found:#?}");
    // The editor that asks before it is left was left: its form's answer was reached.
    assert_eq!(at("/notes/saved").len(), 1, "{found:#?}");
    // The quotes are items of one kind: one state, the other quote its example.
    let (q0, q1) = (at("/quotes/0"), at("/quotes/1"));
    let quotes: Vec<&&Value> = q0.iter().chain(&q1).collect();
    assert_eq!(quotes.len(), 1, "{found:#?}");
    assert_eq!(
        quotes[0]["examples"].as_array().map(Vec::len),
        Some(1),
        "{quotes:#?}"
    );
    // The odd page's form led to a page with nothing new to follow: filled once more with
    // other values, said in its reason, and its results are one state with an example.
    let results = at("/odd-results");
    assert_eq!(
        results[0]["examples"].as_array().map(Vec::len),
        Some(1),
        "{results:#?}"
    );
    let odd = tasks_in(at("/odd")[0], "completed");
    assert!(
        odd.iter().any(|t| t["reason"]
            .as_str()
            .unwrap()
            .contains("again with other values")),
        "{odd:#?}"
    );
    assert!(
        odd.iter()
            .any(|t| t["status"] == "completed" && t["selector"].as_str().unwrap().contains("svg")),
        "an SVG link was followed: {odd:#?}"
    );

    // The buttons whose scripts wrote were refused by the network filter and recorded as destructive
    // candidates, with what they tried to send; the GET links that destroy were not followed.
    let tools = tasks_in(at("/danger")[0], "todos");
    for sent in [
        "DELETE http://",
        "POST http://127.0.0.1",
        "/api/notes",
        "/api/track",
    ] {
        assert!(
            tools.iter().any(|t| t["is_destructive"] == true
                && t["reason"].as_str().unwrap().contains(sent)
                && t["reason"].as_str().unwrap().contains("refused")),
            "{sent}: {tools:#?}"
        );
    }
    assert!(
        tools
            .iter()
            .filter(|t| t["is_destructive"] == true && t["action"] == "click")
            .count()
            >= 8 + 3,
        "{tools:#?}"
    );
    // A page that sends a beacon as it loads does not make the link to it destructive.
    assert_eq!(at("/tracked").len(), 1, "{found:#?}");
    for state in &found {
        for task in tasks_in(state, "todos") {
            assert!(
                !task["reason"].as_str().unwrap().contains("/api/analytics"),
                "{task}"
            );
        }
    }
    let order = tasks_in(at("/orders/9")[0], "todos");
    assert!(
        order
            .iter()
            .any(|t| t["is_destructive"] == true && t["parameters"]["label"] == "Cancel order"),
        "{order:#?}"
    );

    // The password is kept nowhere in the folder.
    assert_kept_nowhere(&data, password);

    // Every navigation script compiles and, run under a stand-in Playwright, runs no page text:
    // the link texts written to break out of the script among them.
    let python = std::env::var("ATLAS_PLAYWRIGHT_PYTHON").unwrap_or_else(|_| "python3".into());
    let stub = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../apps/atlas-explore/tests/stub"
    );
    let work = dir.path().join("cwd");
    std::fs::create_dir_all(&work).unwrap();
    for state in &found {
        let dir = PathBuf::from(state["dir"].as_str().unwrap());
        for script in files_in(&dir.join("scripts")) {
            let log = work.join("calls.jsonl");
            let ran = Command::new(&python)
                .args(["-W", "error"])
                .arg(&script)
                .current_dir(&work)
                .env("PYTHONPATH", stub)
                .env("STUB_LOG", &log)
                .output()
                .unwrap();
            assert!(
                ran.status.success(),
                "{}: {}",
                script.display(),
                String::from_utf8_lossy(&ran.stderr)
            );
            std::fs::remove_file(&log).unwrap();
        }
    }
    assert!(
        files_in(&work).is_empty(),
        "a script ran code from page text: {:?}",
        files_in(&work)
    );
    let (clean, said) = fsck(&data);
    assert!(clean, "{said}");

    // --allow-destructive lifts the network filter and the words (into another folder: the writes now
    // reach the site), never where the credentials go.
    let open_data = dir.path().join("allowed");
    let out = explore_command(&base, &open_data, &chromium)
        .args([
            "--max-seconds",
            "400",
            "--embedder",
            "hash",
            "--allow-destructive",
        ])
        .arg("--credentials")
        .arg(format!("{}:{password}", crate::hostile_site::USER))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = get(&format!("{other}/stats"));
    assert!(stats["writes"].as_u64().unwrap() >= 3, "{stats}");
    assert!(stats["destructive_gets"].as_u64().unwrap() >= 8, "{stats}");
    assert!(stats["websockets"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["other_authorization"], 0, "{stats}");
    assert_eq!(stats["other_secrets"], 0, "{stats}");
}

/// Page loads are a budget of their own; `atlas crawl`, the baseline the explorer is measured
/// against, loads pages breadth-first by GET alone and writes nothing but its report.
#[test]
fn page_loads_are_a_budget_and_the_baseline_crawl_only_reads() {
    let Some(chromium) = chromium() else { return };
    let (_site, base) = demo_site();
    let dir = tempfile::tempdir().unwrap();
    let report_path = dir.path().join("explore.json");
    let report = report_of(
        explore_command(&base, &dir.path().join("data"), &chromium)
            .args(["--max-loads", "12", "--embedder", "hash", "--json"])
            .arg(&report_path),
        &report_path,
    );
    assert_eq!(report["stopped_by"], "max-loads 12", "{report}");
    let loads = report["loads"].as_u64().unwrap();
    // The task under way when the budget is spent finishes: a load or two past it.
    assert!((12..=15).contains(&loads), "{report}");
    assert!(report["states"].as_u64().unwrap() >= 2, "{report}");

    let crawled_path = dir.path().join("crawl.json");
    let out = atlas()
        .args([
            "crawl",
            &format!("{base}/"),
            "--max-loads",
            "20",
            "--chromium",
        ])
        .arg(&chromium)
        .arg("--json")
        .arg(&crawled_path)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crawled: Value = serde_json::from_slice(&std::fs::read(&crawled_path).unwrap()).unwrap();
    let pages = crawled["pages"].as_array().unwrap();
    assert!(pages.len() >= 10, "{crawled}");
    assert!(crawled["loads"].as_u64().unwrap() <= 21, "{crawled}");
    let urls: Vec<&str> = pages.iter().map(|p| p["url"].as_str().unwrap()).collect();
    assert!(urls.iter().all(|u| u.starts_with(&base)), "{urls:?}");
    // Breadth-first: the start page first, then the pages it links to.
    assert_eq!(urls[0], format!("{base}/"));
    assert!(
        urls[1..6].iter().any(|u| u.ends_with("/products")),
        "{urls:?}"
    );
    let stats = get(&format!("{base}/stats"));
    assert_eq!(
        (&stats["deleted"], &stats["logouts"], &stats["entries"]),
        (&Value::from(0), &Value::from(0), &Value::from(0)),
        "{stats}"
    );
    // Nothing written but its report (and the exploration's folder beside it).
    let mut made: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    made.sort();
    assert_eq!(made, ["crawl.json", "data", "explore.json"]);
}

/// `--store postgres://`: the pages and transitions go to the database through the graph's
/// tools, the pages' own files (screenshot, DOM, tasks, scripts, reports) to its files table and
/// nothing to the data folder; a second run resumes from the database without a duplicate, and
/// a server on the database serves a page's screenshot.
#[test]
fn the_demo_site_explored_into_postgresql_keeps_every_file_of_its_pages_in_the_database() {
    let Some(chromium) = chromium() else { return };
    let _server = crate::common::sharing_the_test_server();
    let Some(atlas_wiring::testing::TestStore::Postgres(url)) =
        atlas_wiring::testing::TestStore::postgres()
    else {
        return;
    };
    let (_site, base) = demo_site();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let port = base.rsplit(':').next().unwrap().to_string();
    let app = format!("127.0.0.1:{port}");
    let run = |max_states: &str, name: &str| -> Value {
        let report = dir.path().join(name);
        let mut explore = atlas();
        explore
            .args(["explore", &format!("{base}/"), "--store", &url, "--data"])
            .arg(&data)
            .arg("--chromium")
            .arg(&chromium)
            .args(["--max-seconds", "300", "--max-states", max_states, "--json"])
            .arg(&report);
        report_of(&mut explore, &report)
    };
    let first = run("3", "first.json");
    assert_eq!(first["states"], 3, "{first}");
    assert_eq!(first["new_states"], 3, "{first}");
    assert!(first["transitions"].as_u64().unwrap() >= 2, "{first}");
    assert!(
        !data.join("apps").exists(),
        "the pages' files went to the data folder, not the database"
    );
    let second = run("6", "second.json");
    assert_eq!(second["states"], 6, "{second}");
    assert_eq!(
        second["new_states"], 3,
        "the first run's states were found again: {second}"
    );

    let served = dir.path().join("served");
    let server = crate::common::Server::start(&served, &["--store", &url]);
    let (status, graph) = server.call("get_app_graph", serde_json::json!({"app_id": app}));
    assert_eq!(status, 200, "{graph}");
    assert_eq!(graph["total_pages"], 6, "no page twice: {graph}");
    let home = graph["home_page"].as_str().unwrap().to_string();
    let (status, page) = server.call(
        "get_page_details",
        serde_json::json!({"app_id": app, "page_id": home}),
    );
    assert_eq!(status, 200, "{page}");
    assert!(page["folder"].is_null(), "{page}");
    let shot = page["screenshot"]
        .as_str()
        .expect("a screenshot from the database");
    let (status, kind, png) = server.get_bytes(shot);
    assert_eq!((status, kind.as_str()), (200, "image/png"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{} bytes", png.len());
    server.stop();
}
