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

/// The largest suite file read.
pub const MAX_SUITE_BYTES: u64 = 1 << 20;
/// The most a suite may hold once its YAML aliases are expanded, in bytes of text: a suite of a
/// megabyte whose anchored text is aliased ten thousand times would otherwise take gigabytes.
pub const MAX_SUITE_EXPANDED: usize = 16 << 20;
/// The most tests a suite may have.
pub const MAX_TESTS: usize = 5_000;

/// Refuses `text` when, aliases expanded, it holds more than [`MAX_SUITE_EXPANDED`] bytes of
/// text or more than that many values: walked once without keeping anything (strings are
/// borrowed from the parser, not copied), so the refusal costs no more than the file.
fn check_expanded_size(text: &str) -> Result<(), serde_yaml::Error> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use std::cell::Cell;

    struct Measure<'a>(&'a Cell<usize>);
    impl Measure<'_> {
        fn add<E: serde::de::Error>(&self, n: usize) -> Result<(), E> {
            let total = self.0.get() + n;
            self.0.set(total);
            if total > MAX_SUITE_EXPANDED {
                return Err(E::custom(format!(
                    "the suite holds over {MAX_SUITE_EXPANDED} bytes once its aliases are expanded"
                )));
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Measure<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Measure<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any YAML value")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
            self.add(v.len() + 1)
        }
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
            self.add(1)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
            self.add(1)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
            self.add(1)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
            self.add(1)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
            self.add(1)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
            self.add(1)
        }
        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Measure(self.0))?.is_some() {
                self.add(1)?;
            }
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while map.next_key_seed(Measure(self.0))?.is_some() {
                map.next_value_seed(Measure(self.0))?;
                self.add(1)?;
            }
            Ok(())
        }
    }
    let total = Cell::new(0);
    Measure(&total).deserialize(serde_yaml::Deserializer::from_str(text))
}

/// A rule file that cannot be had; it names the path and never the file's content.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// It cannot be read.
    #[error("rules {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// There is no such file.
    #[error("rules {}: no such file", path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// It is not text.
    #[error("rules {}: not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// It is not a rule set.
    #[error("{}: {source}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        #[source]
        source: Box<atlas_guard::RuleError>,
    },
}

/// What is wrong with a suite's text.
#[derive(Debug, thiserror::Error)]
pub enum SuiteProblem {
    /// It is not YAML of a suite.
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
    /// It breaks a rule of suites (a test without a task, a name used twice, …).
    #[error("{0}")]
    Invalid(String),
    /// A test's rule file cannot be had.
    #[error("{test}: {source}")]
    Rules {
        /// The test, as `test N ("name")`.
        test: String,
        /// Why.
        #[source]
        source: RulesError,
    },
}

/// Reads the rule file at `path`: a regular file of at most [`atlas_guard::MAX_RULE_BYTES`],
/// else an error that names the path and never its content.
pub fn read_rules(path: &Path) -> Result<RuleSet, RulesError> {
    let path_buf = || path.to_path_buf();
    let bytes = atlas_store::files::read_named(path, atlas_guard::MAX_RULE_BYTES as u64)
        .map_err(|source| RulesError::Read {
            path: path_buf(),
            source,
        })?
        .ok_or_else(|| RulesError::Missing { path: path_buf() })?;
    let text = String::from_utf8(bytes).map_err(|_| RulesError::NotText { path: path_buf() })?;
    RuleSet::parse(&text).map_err(|source| RulesError::Invalid {
        path: path_buf(),
        source: Box::new(source),
    })
}

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
    /// The file is not text.
    #[error("{}: not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a suite.
    #[error("{}: {problem}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        #[source]
        problem: Box<SuiteProblem>,
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
        let invalid = |problem: SuiteProblem| SuiteError::Invalid {
            path: path.to_path_buf(),
            problem: Box::new(problem),
        };
        let bytes = atlas_store::files::read_named(path, MAX_SUITE_BYTES)
            .and_then(|bytes| bytes.ok_or_else(|| std::io::ErrorKind::NotFound.into()))
            .map_err(|source| SuiteError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        let text = String::from_utf8(bytes).map_err(|_| SuiteError::NotText {
            path: path.to_path_buf(),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Suite::parse(&text, base).map_err(invalid)
    }

    /// Reads a suite's text; relative rule paths are under `base`.
    pub fn parse(text: &str, base: &Path) -> Result<Suite, SuiteProblem> {
        check_expanded_size(text)?;
        let file: SuiteFile = serde_yaml::from_str(text)?;
        let invalid = |message: String| Err(SuiteProblem::Invalid(message));
        if file.tests.is_empty() {
            return invalid("the suite has no tests".into());
        }
        if file.tests.len() > MAX_TESTS {
            return invalid(format!("a suite has at most {MAX_TESTS} tests"));
        }
        let mut names = HashSet::new();
        let mut tests = Vec::new();
        for (i, t) in file.tests.into_iter().enumerate() {
            let at = format!("test {} ({:?})", i + 1, t.name);
            if t.name.trim().is_empty() {
                return invalid(format!("test {}: an empty name", i + 1));
            }
            if !names.insert(t.name.clone()) {
                return invalid(format!("{at}: the name is used twice"));
            }
            if t.task.trim().is_empty() {
                return invalid(format!("{at}: an empty task"));
            }
            if t.task.len() > atlas_model::MAX_TEXT_LEN {
                return invalid(format!(
                    "{at}: a task of {} bytes (at most {})",
                    t.task.len(),
                    atlas_model::MAX_TEXT_LEN
                ));
            }
            let app = t
                .app
                .or_else(|| file.app.clone())
                .filter(|a| !a.trim().is_empty())
                .ok_or_else(|| {
                    SuiteProblem::Invalid(format!(
                        "{at}: no app (give the suite's app or the test's)"
                    ))
                })?;
            if let Some(n) = t.max_steps
                && !(1..=MAX_STEPS).contains(&n)
            {
                return invalid(format!("{at}: max_steps {n} is not within 1..={MAX_STEPS}"));
            }
            let rules = match &t.rules {
                None => Vec::new(),
                Some(p) => {
                    vec![
                        read_rules(&base.join(p)).map_err(|source| SuiteProblem::Rules {
                            test: at.clone(),
                            source,
                        })?,
                    ]
                }
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
        // A megabyte of text aliased ten thousand times: refused before it is expanded.
        let big = "x".repeat(1 << 20);
        let bomb = format!(
            "name: s\napp: x\nbig: &big {big}\ntests:\n{}",
            "  - {name: a, task: *big}\n".repeat(10_000)
        );
        let started = std::time::Instant::now();
        let error = Suite::parse(&bomb, Path::new(".")).unwrap_err().to_string();
        assert!(error.contains("aliases"), "{error}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        for (text, said) in [
            ("name: s\ntests: []\n", "no tests"),
            (
                &format!(
                    "name: s\napp: x\ntests:\n  - {{name: a, task: {}}}\n",
                    "长".repeat(2000)
                ),
                "a task of",
            ),
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
            let error = Suite::parse(text, Path::new("/nonexistent"))
                .unwrap_err()
                .to_string();
            assert!(error.contains(said), "{text}: {error}");
        }
    }
}
