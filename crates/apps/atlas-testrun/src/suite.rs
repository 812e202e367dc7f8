//! A suite file: `{name, app, tests: [{name, task, app?, start?, expect: {page|text|finish},
//! max_steps?, tags?, rules?, knowledge?}]}` in YAML (or JSON, which YAML reads too).
//!
//! Everything a test names is checked when the suite is read — the app, the rule files (read
//! and parsed), unique names, a bounded step count — so a typo stops the run before any phone
//! moves, with the test and the field in the message.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use atlas_guard::RuleSet;
use serde::{Deserialize, Serialize};

/// The most steps a test may ask for.
pub const MAX_STEPS: usize = 500;

/// What is wrong with a suite.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The file cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a suite.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        message: String,
    },
}

/// A suite as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: String,
    #[serde(default)]
    app: Option<String>,
    tests: Vec<TestFile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    name: String,
    task: String,
    #[serde(default)]
    app: Option<String>,
    #[serde(default)]
    start: Option<String>,
    #[serde(default)]
    expect: Option<Expect>,
    #[serde(default)]
    max_steps: Option<usize>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    rules: Option<PathBuf>,
    #[serde(default)]
    knowledge: Option<String>,
}

/// What a test expects of the run's end. Every part given must hold, and the model must have
/// finished; without `expect`, the finish alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The final screen is this page (or one of these): its id or name in the graph, or, on a
    /// simulated phone, the recorded screen's `state_str`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<OneOrMany>,
    /// The final screen shows this text (in a widget's text, its description included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `true`: the model finishes (the default); a string: its finish message contains it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<Finish>,
}

/// One name or a list of names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Any of these.
    Many(Vec<String>),
}

impl OneOrMany {
    /// The names.
    pub fn names(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(list) => list.iter().map(String::as_str).collect(),
        }
    }
}

/// The finish a test expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Finish {
    /// `true`: a finish; `false`: none is required (a test of where the run ends).
    Yes(bool),
    /// A finish whose message contains this.
    Saying(String),
}

/// A test, ready to run.
#[derive(Debug, Clone)]
pub struct Test {
    /// Unique in its suite.
    pub name: String,
    /// The task, in the person's words.
    pub task: String,
    /// The app: a name the app catalog knows, a package, or a simulated phone's recording.
    pub app: String,
    /// Where the test starts: a simulated phone's recorded screen, an adb activity
    /// (`PKG/ACTIVITY`), a HarmonyOS ability (`BUNDLE/ABILITY`); the app's start otherwise.
    pub start: Option<String>,
    /// What the end must be.
    pub expect: Expect,
    /// Steps at most (the run's `--max-steps` when the test does not say).
    pub max_steps: Option<usize>,
    /// Labels to select and group tests by.
    pub tags: Vec<String>,
    /// The test's own guard rules, beside the run's.
    pub rules: Vec<RuleSet>,
    /// The knowledge base (its dataset id) GET_KNOWLEDGE_DATA asks.
    pub knowledge: Option<String>,
}

/// A suite, read and checked.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Its name (the JUnit test suite's).
    pub name: String,
    /// Its tests, in the file's order.
    pub tests: Vec<Test>,
}

impl Suite {
    /// Reads and checks the suite at `path`; rule files are found beside it.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Suite::parse(&text, base).map_err(|message| SuiteError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Reads a suite's text; relative rule paths are under `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Suite, String> {
        let file: SuiteFile = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        if file.tests.is_empty() {
            return Err("the suite has no tests".into());
        }
        let mut names = HashSet::new();
        let mut tests = Vec::new();
        for (i, t) in file.tests.into_iter().enumerate() {
            let at = format!("test {} ({:?})", i + 1, t.name);
            if t.name.trim().is_empty() {
                return Err(format!("test {}: an empty name", i + 1));
            }
            if !names.insert(t.name.clone()) {
                return Err(format!("{at}: the name is used twice"));
            }
            if t.task.trim().is_empty() {
                return Err(format!("{at}: an empty task"));
            }
            let app = t
                .app
                .or_else(|| file.app.clone())
                .filter(|a| !a.trim().is_empty())
                .ok_or_else(|| format!("{at}: no app (give the suite's app or the test's)"))?;
            if let Some(n) = t.max_steps
                && !(1..=MAX_STEPS).contains(&n)
            {
                return Err(format!("{at}: max_steps {n} is not within 1..={MAX_STEPS}"));
            }
            let rules = match &t.rules {
                None => Vec::new(),
                Some(p) => vec![
                    atlas_guard::read_rule_file(&base.join(p)).map_err(|e| format!("{at}: {e}"))?,
                ],
            };
            tests.push(Test {
                name: t.name,
                task: t.task,
                app,
                start: t.start.filter(|s| !s.trim().is_empty()),
                expect: t.expect.unwrap_or_default(),
                max_steps: t.max_steps,
                tags: t.tags,
                rules,
                knowledge: t.knowledge.filter(|k| !k.trim().is_empty()),
            });
        }
        Ok(Suite {
            name: file.name,
            tests,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_reads_with_its_defaults_and_names_what_is_wrong() {
        let suite = Suite::parse(
            "name: notes\napp: notes\ntests:\n  - name: a\n    task: 新建笔记\n    expect: {page: [p1, p2], finish: 保存}\n  - name: b\n    task: open\n    app: clock\n    max_steps: 4\n    tags: [smoke]\n",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(suite.tests[0].app, "notes");
        assert_eq!(
            suite.tests[0].expect.page.as_ref().unwrap().names(),
            ["p1", "p2"]
        );
        assert_eq!(
            suite.tests[0].expect.finish,
            Some(Finish::Saying("保存".into()))
        );
        assert_eq!(suite.tests[1].app, "clock");
        assert_eq!(suite.tests[1].expect, Expect::default());
        for (text, said) in [
            ("name: s\ntests: []\n", "no tests"),
            ("name: s\ntests:\n  - {name: a, task: t}\n", "no app"),
            (
                "name: s\napp: x\ntests:\n  - {name: a, task: t}\n  - {name: a, task: u}\n",
                "twice",
            ),
            (
                "name: s\napp: x\ntests:\n  - {name: a, task: t, max_steps: 0}\n",
                "max_steps",
            ),
            (
                "name: s\napp: x\ntests:\n  - {name: a, task: t, expect: {screen: x}}\n",
                "unknown field",
            ),
            (
                "name: s\napp: x\ntests:\n  - {name: a, task: t, rules: nowhere.yaml}\n",
                "nowhere.yaml",
            ),
        ] {
            let error = Suite::parse(text, Path::new("/nonexistent")).unwrap_err();
            assert!(error.contains(said), "{text}: {error}");
        }
    }
}
