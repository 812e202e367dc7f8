//! What a state's folder holds for people: a script that navigates to it (Playwright for Python,
//! pointed at the system's Chromium), test ideas drawn from what the page actually has (seed 001
//! §3.4), and reports.

use std::fmt::Write as _;

use serde_json::json;

use crate::ExploreError;
use crate::state::{ExploreReport, State};
use crate::tasks::{self, Place};
use atlas_browser::snapshot::{Field, Snapshot};

/// The file of a state's folder that names its examples ([`crate::state::State::examples`]).
pub const EXAMPLES: &str = "examples.json";

/// A state's file, whole or absent (cheap to write again, so not waited on to be durable).
fn write(state: &State, name: &str, bytes: &[u8]) -> Result<(), ExploreError> {
    state.files.get()?.write_soon(name, bytes)?;
    Ok(())
}

/// `text` as a Python string literal: double-quoted, with every backslash, quote, control,
/// line or paragraph separator, format character and non-ASCII symbol escaped, so no text can
/// end the literal or hide in it; ASCII and non-ASCII letters and digits (Chinese included)
/// stay readable.
pub fn python_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if !c.is_ascii() && c.is_alphanumeric() => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// A JSON value as a Python literal (dict, list, str through [`python_str`], int, float, True,
/// False, None).
pub fn python_literal(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_str(s),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", python_str(k), python_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `scripts/nav_<name>.py` (seed 001 §4.3): from the start address, the steps that led here.
///
/// Page text (names, labels, selectors, addresses) reaches the script only as literals that
/// [`python_literal`] writes: never inside a docstring, a comment or a raw string, where a
/// quote or a backslash could end it.
pub fn write_nav_script(state: &State, start: &str) -> Result<(), ExploreError> {
    let slug: String = atlas_model::sanitize_node_id(&state.name)
        .to_lowercase()
        .chars()
        .take(40)
        .collect();
    let mut steps = String::from("[\n");
    for step in &state.path {
        let value = serde_json::to_value(step).map_err(std::io::Error::other)?;
        let _ = writeln!(steps, "    {},", python_literal(&value));
    }
    steps.push(']');
    let script = format!(
        r#"#!/usr/bin/env python3
"""Navigate from the root state to the state NAME at URL, by the steps that led there.

Written by `atlas explore`. A password is typed from ATLAS_EXPLORE_PASSWORD. Needs Playwright for Python (pip install playwright) and a Chromium
(ATLAS_CHROMIUM, default /usr/bin/chromium; no browser download). Prints the page it ends on
as JSON: {{"url", "title", "fingerprint_expected"}}.
"""
import json
import os

from playwright.sync_api import sync_playwright

NAME = {name}
URL = {url}
START = {start}
EXPECTED = {fingerprint}
PASSWORD = {password}
STEPS = {steps}


def act(page, step):
    action, selector, parameters = step["action"], step["selector"], step.get("parameters") or {{}}
    if action == "click":
        page.eval_on_selector(selector, "el => {{ el.removeAttribute('target'); el.click(); }}")
    elif action == "type":
        for field in parameters.get("fields", []):
            if field["type"] in ("checkbox", "radio"):
                page.check(field["selector"])
            elif field["type"].startswith("select"):
                page.eval_on_selector(field["selector"], "el => {{ const o = [...el.options].find(o => o.value) || el.options[0]; if (o) el.value = o.value; }}")
            elif field.get("secret"):
                page.fill(field["selector"], os.environ.get("ATLAS_EXPLORE_PASSWORD", PASSWORD))
            else:
                page.fill(field["selector"], field["value"])
        if parameters.get("submit"):
            page.eval_on_selector(parameters["submit"], "el => el.click()")
        else:
            page.eval_on_selector(selector, "f => f.requestSubmit()")
    elif action == "scroll":
        page.evaluate("window.scrollBy(0, window.innerHeight)")
    elif action == "navigate":
        page.goto(parameters.get("url", selector))
    page.wait_for_timeout(300)
    page.wait_for_load_state("load")


def main():
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("ATLAS_CHROMIUM", "/usr/bin/chromium"),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        page = browser.new_page(viewport={{"width": 1280, "height": 800}})
        page.on("dialog", lambda dialog: dialog.dismiss())
        page.goto(START)
        page.wait_for_load_state("load")
        for step in STEPS:
            act(page, step)
        print(json.dumps({{"url": page.url, "title": page.title(), "fingerprint_expected": EXPECTED}}, ensure_ascii=False))
        browser.close()


if __name__ == "__main__":
    main()
"#,
        name = python_str(&state.name),
        url = python_str(&state.url),
        start = python_str(start),
        fingerprint = python_str(&state.fingerprint),
        password = python_str(atlas_browser::test_values::TEST_PASSWORD),
    );
    write(state, &format!("scripts/nav_{slug}.py"), script.as_bytes())
}

/// A test idea (seed 001 §3.4) before it is numbered and dated.
struct Idea {
    name: String,
    description: String,
    kind: &'static str,
    target: String,
    /// (input, expected) pairs.
    cases: Vec<(String, String)>,
    priority: u8,
}

/// `test_ideas/idea_NNN.json`: boundary and injection ideas for the fields the page has,
/// permission ideas for pages behind a sign-in, performance ideas for heavy pages, accessibility
/// ideas for what lacks a text alternative or a label.
pub fn write_test_ideas(state: &State, snap: &Snapshot) -> Result<(), ExploreError> {
    let now = atlas_model::now_rfc3339();
    let mut ideas: Vec<Idea> = snap
        .forms
        .iter()
        .flat_map(|form| &form.fields)
        .flat_map(field_ideas)
        .collect();
    ideas.extend(page_ideas(state, snap));
    for (k, idea) in ideas.into_iter().enumerate() {
        let value = json!({
            "id": format!("idea_{:03}", k + 1),
            "name": idea.name,
            "description": idea.description,
            "type": idea.kind,
            "target_selector": idea.target,
            "test_cases": idea.cases.into_iter().map(|(i, e)| json!({"input": i, "expected": e})).collect::<Vec<_>>(),
            "priority": idea.priority,
            "created_at": now,
        });
        let bytes = serde_json::to_vec_pretty(&value).map_err(std::io::Error::other)?;
        write(state, &format!("test_ideas/idea_{:03}.json", k + 1), &bytes)?;
    }
    Ok(())
}

/// A field's boundary idea (when it has limits) and injection idea (when it takes free text).
fn field_ideas(field: &Field) -> Vec<Idea> {
    let label = if field.label.is_empty() {
        &field.name
    } else {
        &field.label
    };
    let mut ideas = Vec::new();
    let cases = boundary_cases(field);
    if !cases.is_empty() {
        ideas.push(Idea {
            name: format!("Boundaries of \"{label}\""),
            description: format!(
                "Values at and past the limits of the {} field \"{label}\"",
                field.kind
            ),
            kind: "boundary",
            target: field.selector.clone(),
            cases,
            priority: 7,
        });
    }
    if matches!(
        field.kind.as_str(),
        "text" | "search" | "textarea" | "email" | "url"
    ) {
        ideas.push(Idea {
            name: format!("Injection into \"{label}\""),
            description: format!(
                "Markup, SQL and path text typed into \"{label}\" must be shown as text and never run"
            ),
            kind: "injection",
            target: field.selector.clone(),
            cases: vec![
                (
                    "<script>alert(1)</script>".into(),
                    "shown as text, no dialog".into(),
                ),
                (
                    "' OR '1'='1".into(),
                    "treated as text; no other user's data".into(),
                ),
                ("../../etc/passwd".into(), "treated as text".into()),
                (
                    "测试".repeat(500),
                    "accepted or refused cleanly, the page intact".into(),
                ),
            ],
            priority: 8,
        });
    }
    ideas
}

/// Values at and past a field's limits: required, length, range, and its type's malformed value.
fn boundary_cases(field: &Field) -> Vec<(String, String)> {
    let mut cases = Vec::new();
    if field.required {
        cases.push((String::new(), "refused: the field is required".to_string()));
    }
    if let Some(max) = field.maxlength {
        cases.push((
            "x".repeat(max as usize),
            "accepted: exactly the maximum length".into(),
        ));
        cases.push((
            "x".repeat(max as usize + 1),
            format!("refused or cut to {max} characters"),
        ));
    }
    if let Some(min) = field.min.as_deref().filter(|m| !m.is_empty()) {
        cases.push((
            format!("below {min}"),
            format!("refused: under the minimum {min}"),
        ));
    }
    if let Some(max) = field.max.as_deref().filter(|m| !m.is_empty()) {
        cases.push((
            format!("above {max}"),
            format!("refused: over the maximum {max}"),
        ));
    }
    match field.kind.as_str() {
        "email" => cases.push((
            "not-an-email".into(),
            "refused: not an e-mail address".into(),
        )),
        "number" => cases.push(("abc".into(), "refused: not a number".into())),
        "date" => cases.push(("2026-02-30".into(), "refused: no such date".into())),
        _ => {}
    }
    cases
}

/// The page's own ideas: access without signing in, weight, and what a screen reader misses.
fn page_ideas(state: &State, snap: &Snapshot) -> Vec<Idea> {
    let mut ideas = Vec::new();
    let behind_login = state.path.iter().any(|s| {
        s.parameters["fields"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x["type"] == "password"))
    });
    let sensitive = [
        "admin",
        "account",
        "settings",
        "dashboard",
        "profile",
        "manage",
    ]
    .iter()
    .any(|w| state.url.to_lowercase().contains(w));
    if behind_login || sensitive {
        ideas.push(Idea {
            name: format!("Access to \"{}\" without signing in", state.name),
            description: format!("Open {} in a fresh session", state.url),
            kind: "permission",
            target: "html".into(),
            cases: vec![(
                state.url.clone(),
                "redirected to sign in, or refused".into(),
            )],
            priority: 9,
        });
    }
    if snap.element_count > 1500 || snap.scroll_height > snap.viewport_height.saturating_mul(5) {
        ideas.push(Idea {
            name: format!("Weight of \"{}\"", state.name),
            description: format!(
                "{} elements, {} px tall: time to first paint and to interactive",
                snap.element_count, snap.scroll_height
            ),
            kind: "performance",
            target: "html".into(),
            cases: vec![(
                state.url.clone(),
                "interactive within 2 s on a mid-range laptop".into(),
            )],
            priority: 5,
        });
    }
    for selector in &snap.images_without_alt {
        ideas.push(Idea {
            name: "Image without a text alternative".into(),
            description: "A screen reader cannot tell what it shows".into(),
            kind: "accessibility",
            target: selector.clone(),
            cases: vec![(
                "read with a screen reader".into(),
                "an alt text is read".into(),
            )],
            priority: 4,
        });
    }
    for selector in &snap.unlabelled_fields {
        ideas.push(Idea {
            name: "Field without a label".into(),
            description: "A screen reader cannot tell what to type".into(),
            kind: "accessibility",
            target: selector.clone(),
            cases: vec![("focus the field".into(), "its purpose is announced".into())],
            priority: 4,
        });
    }
    ideas
}

/// `reports/test_report.md` for each state and `reports/site_report.md` in the root state's.
pub fn write_reports(states: &[State], report: &ExploreReport) -> Result<(), ExploreError> {
    let mut site = String::new();
    let _ = writeln!(site, "# Exploration of {}\n", report.app_id);
    let _ = writeln!(site, "{}\n", report.summary().replace('\n', "\n\n"));
    let _ = writeln!(
        site,
        "| state | depth | address | done | pending | destructive, not done |\n|---|---:|---|---:|---:|---:|"
    );
    for state in states {
        let done = tasks::read(state.files.get()?, Place::Completed)?;
        let pending = tasks::read(state.files.get()?, Place::Todos)?;
        let destructive: Vec<_> = pending.iter().filter(|t| t.is_destructive).collect();
        let _ = writeln!(
            site,
            "| {} | {} | {} | {} | {} | {} |",
            state.name,
            state.depth,
            state.url,
            done.len(),
            pending.len(),
            destructive.len()
        );
        let mut text = String::new();
        let _ = writeln!(
            text,
            "# {}\n\n- address: {}\n- fingerprint: {}\n- depth: {}\n",
            state.name, state.url, state.fingerprint, state.depth
        );
        let _ = writeln!(text, "## The way here\n");
        if state.path.is_empty() {
            let _ = writeln!(text, "The start address.");
        }
        for (k, step) in state.path.iter().enumerate() {
            let label = step.parameters["label"].as_str().unwrap_or_default();
            let _ = writeln!(
                text,
                "{}. {} `{}` {}",
                k + 1,
                step.action,
                step.selector,
                label
            );
        }
        let _ = writeln!(text, "\n## Actions tried\n");
        for t in &done {
            let _ = writeln!(
                text,
                "- {} `{}` ({}): {}",
                t.action,
                t.selector,
                t.reason,
                t.outcome.as_deref().unwrap_or(&t.status)
            );
        }
        let _ = writeln!(text, "\n## Actions not yet tried\n");
        for t in &pending {
            let _ = writeln!(
                text,
                "- {} `{}` ({}){}",
                t.action,
                t.selector,
                t.reason,
                if t.is_destructive {
                    " — destructive: recorded, not executed"
                } else {
                    ""
                }
            );
        }
        write(state, "reports/test_report.md", text.as_bytes())?;
    }
    if let Some(root) = states.first() {
        write(root, "reports/site_report.md", site.as_bytes())?;
    }
    Ok(())
}
