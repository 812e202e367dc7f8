//! The navigation scripts `atlas explore` writes, with hostile page text in every place a step
//! carries it (names, addresses, selectors, labels, typed values): each script compiles, and run
//! under a stub Playwright that records its calls, it does exactly the steps, with exactly the
//! texts, and nothing else (no text became code).

use std::path::{Path, PathBuf};
use std::process::Command;

use atlas_explore::{State, Step};
use serde_json::{Value, json};

/// Quotes of both kinds and their runs, backslashes, every line break Python or JavaScript
/// knows, NUL, format characters, braces, escapes Python would read, code, CJK and an emoji.
const FRAGMENTS: &[&str] = &[
    "'",
    "\"",
    "'''",
    "\"\"\"",
    "'''''",
    "\\",
    "\\\\",
    "\n",
    "\r",
    "\r\n",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{0}",
    "\u{7f}",
    "\u{202e}",
    "\u{feff}",
    "\t",
    "{",
    "}}",
    "%s",
    "\\N{DASH}",
    "\\x",
    "\\u12",
    "#",
    "', os.system('touch PWNED'), '",
    "\"); __import__('os').system('touch PWNED') #",
    "''' + __import__('os').system('touch PWNED') + r'''",
    "测试",
    "😀",
];

/// A stand-in for Playwright that records the calls (shared with atlas-cli's explorer tests).
const STUB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/stub");

fn python() -> Option<String> {
    let python = std::env::var("ATLAS_PLAYWRIGHT_PYTHON").unwrap_or_else(|_| "python3".into());
    let found = Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is needed to run the generated scripts"
        );
        eprintln!("skipped: no python3");
        return None;
    }
    Some(python)
}

fn step(action: &str, selector: &str, parameters: Value) -> Step {
    Step {
        action: action.into(),
        selector: selector.into(),
        parameters,
    }
}

/// The calls the script must make for these steps (goto, fill and eval_on_selector with their
/// text arguments), as the stub records them.
fn expected_calls(start: &str, steps: &[Step]) -> Vec<Value> {
    let mut calls = vec![json!(["goto", start])];
    for s in steps {
        match s.action.as_str() {
            "click" => calls.push(json!(["eval_on_selector", s.selector])),
            "type" => {
                for f in s.parameters["fields"].as_array().unwrap() {
                    calls.push(json!(["fill", f["selector"], f["value"]]));
                }
                calls.push(json!(["eval_on_selector", s.parameters["submit"]]));
            }
            "navigate" => calls.push(json!(["goto", s.parameters["url"]])),
            other => panic!("{other}"),
        }
    }
    calls
}

fn recorded_calls(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|call| match call[0].as_str() {
            Some("goto") => Some(json!(["goto", call[1]])),
            Some("eval_on_selector") => Some(json!(["eval_on_selector", call[1]])),
            Some("fill") => Some(json!(["fill", call[1], call[2]])),
            _ => None,
        })
        .collect()
}

#[test]
fn hostile_page_text_never_becomes_code_in_a_navigation_script() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let stub = Path::new(STUB);
    let work = dir.path().join("cwd");
    std::fs::create_dir_all(&work).unwrap();
    let mut scripts = 0;
    for (i, first) in FRAGMENTS.iter().enumerate() {
        // Every ordered pair of fragments, with text around them.
        let texts: Vec<String> = FRAGMENTS
            .iter()
            .map(|second| format!("a{first}b{second}c"))
            .collect();
        let mut steps: Vec<Step> = texts
            .iter()
            .map(|t| {
                step(
                    "click",
                    t,
                    json!({"label": t, "href": format!("http://x/{t}")}),
                )
            })
            .collect();
        steps.push(step(
            "type",
            &texts[0],
            json!({
                "fields": texts.iter().zip(texts.iter().rev())
                    .map(|(s, v)| json!({"selector": s, "type": "text", "name": v, "value": v}))
                    .collect::<Vec<_>>(),
                "submit": texts[1], "label": texts[2], "action": texts[3], "sign_in": false,
            }),
        ));
        steps.push(step("navigate", &texts[4], json!({"url": texts[5]})));
        let state_dir: PathBuf = dir.path().join(format!("state_{i}"));
        // The page folder the store makes, with its scripts/ beside the other seed 001 folders.
        std::fs::create_dir_all(state_dir.join("scripts")).unwrap();
        let state = State {
            page_id: format!("p{i}"),
            name: texts[6].clone(),
            dir: Some(state_dir.clone()),
            files: atlas_explore::PageFiles::new(std::sync::Arc::new(
                atlas_store::files::Folder::new(&state_dir),
            )),
            fingerprint: texts[7].clone(),
            key: String::new(),
            links: Vec::new(),
            template: String::new(),
            url: texts[8].clone(),
            depth: 1,
            path: steps.clone(),
            expanded: true,
            edges: Vec::new(),
            gone: false,
            ..Default::default()
        };
        let start = texts[9].clone();
        atlas_explore::artifacts::write_nav_script(&state, &start).unwrap();
        let written: Vec<PathBuf> = std::fs::read_dir(state_dir.join("scripts"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert_eq!(written.len(), 1);
        let script = &written[0];
        let compiled = Command::new(&python)
            .args(["-W", "error", "-m", "py_compile"])
            .arg(script)
            .output()
            .unwrap();
        assert!(
            compiled.status.success(),
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&compiled.stderr)
        );
        let log = dir.path().join(format!("calls_{i}.jsonl"));
        let ran = Command::new(&python)
            .args(["-W", "error"])
            .arg(script)
            .current_dir(&work)
            .env("PYTHONPATH", stub)
            .env("STUB_LOG", &log)
            .env_remove("ATLAS_EXPLORE_PASSWORD")
            .output()
            .unwrap();
        assert!(
            ran.status.success(),
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&ran.stderr)
        );
        assert_eq!(
            recorded_calls(&log),
            expected_calls(&start, &steps),
            "{}",
            script.display()
        );
        let ended: Value = serde_json::from_slice(&ran.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&ran.stdout)));
        assert_eq!(ended["fingerprint_expected"], state.fingerprint.as_str());
        scripts += 1;
    }
    assert_eq!(scripts, FRAGMENTS.len());
    assert!(
        std::fs::read_dir(&work).unwrap().next().is_none(),
        "a script ran code from page text"
    );
}

#[test]
fn python_literals_escape_what_could_end_or_hide_in_them() {
    use atlas_explore::artifacts::python_str;
    assert_eq!(python_str("a'b\"c\\d"), r#""a'b\"c\\d""#);
    assert_eq!(python_str("x\u{2028}y\u{202e}z"), r#""x\u2028y\u202ez""#);
    assert_eq!(python_str("测试\n😀"), "\"测试\\n\\U0001f600\"");
}
