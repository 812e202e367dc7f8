//! The execution-layer guard of seed 002: the model only proposes an action; before it runs,
//! declarative rules (YAML) may rewrite it and leave an observation for the model's next turn,
//! and after it ran, rules on its outcome update what the guard remembers.
//!
//! A rule set names the tasks it applies to (`when_task`: texts the task contains), then
//! `before` rules — checked in order, each on the action as the rules before it left it — and
//! `after` rules on the outcome. A rule's `if` holds when all its conditions do: the proposed
//! action's name, words in its text, the current app, what the guard remembers (`set`/`unset`),
//! actions that already succeeded (`done`/`not_done`), the outcome. It may `remember` values
//! (`{text}`, `{query}`, `{result}`, `{pending_question}` are filled in), `forget` them,
//! `observe`, and `do` another action, written in the grammar.
//!
//! Key design decision: **rules are data checked at load time.** Every rewrite is parsed by the
//! same grammar the model's replies are, with its placeholders filled, when the file is read; an
//! unknown action name or key is an error naming the rule. A flow like seed 002's QQ gate
//! (`rules/qq_customer_service.yaml`) is then a file a tester reads and changes, not a code path.
//!
//! What a guard remembers between steps is plain data ([`GuardMemory`]), so the server can
//! review actions for agents in any language without keeping their state: `atlas agent` runs a
//! [`Guard`] in process, and the Open-AutoGLM plugin has the server's `review_action` and
//! `record_outcome` tools run the same code, carrying the memory from one call to the next.

pub use atlas_api::agent::GuardMemory;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use atlas_action::{Action, parse_reply};
use serde::Deserialize;

/// A rule set as its file says it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSet {
    /// The rule set's name, for reports.
    pub name: String,
    /// The tasks the rules apply to: any entry whose texts the task contains (all of `all`, one
    /// of `any`). No entry: every task.
    #[serde(default)]
    when_task: Vec<TaskMatch>,
    #[serde(default)]
    before: Vec<Rule>,
    #[serde(default)]
    after: Vec<Rule>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskMatch {
    #[serde(default)]
    all: Vec<String>,
    #[serde(default)]
    any: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    name: String,
    #[serde(rename = "if", default)]
    when: Condition,
    #[serde(default)]
    remember: BTreeMap<String, String>,
    #[serde(default)]
    forget: Vec<String>,
    #[serde(default)]
    observe: Option<String>,
    /// The action to take instead, in the grammar.
    #[serde(rename = "do", default)]
    rewrite: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Condition {
    #[serde(default)]
    action: Vec<String>,
    #[serde(default)]
    set: Vec<String>,
    #[serde(default)]
    unset: Vec<String>,
    #[serde(default)]
    app: Option<String>,
    #[serde(default)]
    app_not: Option<String>,
    #[serde(default)]
    text_contains_any: Vec<String>,
    #[serde(default)]
    done: Vec<String>,
    #[serde(default)]
    not_done: Vec<String>,
    #[serde(default)]
    outcome: Option<Outcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Success,
    Failure,
}

/// A rule file's largest size, in bytes.
pub const MAX_RULE_BYTES: usize = 64 * 1024;

/// The seed's QQ customer-service gate.
pub const QQ_CUSTOMER_SERVICE: &str = include_str!("../rules/qq_customer_service.yaml");

/// Why a rule file is not a rule set. The YAML's own text is never in it: a file given as rules
/// by mistake (or by a hostile suite) is not echoed into logs and reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    /// Not YAML of a rule set: where, and what was expected there.
    #[error("rules: not a rule set{at}{expected}")]
    NotRules {
        /// ` at line L column C`, when known.
        at: String,
        /// `: expected …`, when known.
        expected: String,
    },
    /// A rule names an action the grammar does not have.
    #[error("rules: {phase} rule {rule:?}: unknown action {action:?}")]
    UnknownAction {
        /// `before` or `after`.
        phase: &'static str,
        /// The rule.
        rule: String,
        /// The action it names.
        action: String,
    },
    /// A `before` rule asks for the action's outcome.
    #[error("rules: before rule {0:?}: an outcome is known only after the action")]
    OutcomeBefore(String),
    /// A rule's rewrite is not an action.
    #[error("rules: {phase} rule {rule:?}: `do` is not an action: {why}")]
    BadRewrite {
        /// `before` or `after`.
        phase: &'static str,
        /// The rule.
        rule: String,
        /// Why.
        #[source]
        why: atlas_action::ParseError,
    },
}

impl RuleSet {
    /// Reads and checks a rule set; an error names the rule and what is wrong.
    pub fn parse(yaml: &str) -> Result<RuleSet, RuleError> {
        let set: RuleSet = serde_yaml::from_str(yaml).map_err(|e| {
            // Where, and what was expected, never the text found: a file given as rules by
            // mistake (or by a hostile suite) is not echoed into logs and reports.
            let at = e
                .location()
                .map(|l| format!(" at line {} column {}", l.line(), l.column()))
                .unwrap_or_default();
            let expected = e
                .to_string()
                .rsplit_once("expected ")
                .map(|(_, what)| {
                    format!(
                        ": expected {}",
                        what.split(" at line").next().unwrap_or(what)
                    )
                })
                .unwrap_or_default();
            RuleError::NotRules { at, expected }
        })?;
        let known: BTreeSet<&str> = atlas_action::action_names().collect();
        for (phase, rules) in [("before", &set.before), ("after", &set.after)] {
            for rule in rules {
                for name in rule
                    .when
                    .action
                    .iter()
                    .chain(&rule.when.done)
                    .chain(&rule.when.not_done)
                {
                    if !known.contains(name.as_str()) {
                        return Err(RuleError::UnknownAction {
                            phase,
                            rule: rule.name.clone(),
                            action: name.clone(),
                        });
                    }
                }
                if phase == "before" && rule.when.outcome.is_some() {
                    return Err(RuleError::OutcomeBefore(rule.name.clone()));
                }
                if let Some(template) = &rule.rewrite {
                    parse_reply(&fill(template, &|_| Some("x".into()), true)).map_err(|why| {
                        RuleError::BadRewrite {
                            phase,
                            rule: rule.name.clone(),
                            why,
                        }
                    })?;
                }
            }
        }
        Ok(set)
    }

    /// The seed's QQ customer-service gate, shipped with Atlas.
    pub fn qq_customer_service() -> RuleSet {
        RuleSet::parse(QQ_CUSTOMER_SERVICE).expect("the shipped rules read")
    }

    /// The rule sets in force beside rule files (their YAML texts): the shipped QQ gate first,
    /// then each file, as `atlas agent run` and the server's guard tools both apply them. An
    /// error names the file by its place among `files`.
    pub fn with_shipped<'a>(
        files: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<RuleSet>, (usize, RuleError)> {
        let mut sets = vec![RuleSet::qq_customer_service()];
        for (i, text) in files.into_iter().enumerate() {
            sets.push(RuleSet::parse(text).map_err(|e| (i, e))?);
        }
        Ok(sets)
    }

    fn applies_to(&self, task: &str) -> bool {
        self.when_task.is_empty()
            || self.when_task.iter().any(|m| {
                m.all.iter().all(|t| task.contains(t.as_str()))
                    && (m.any.is_empty() || m.any.iter().any(|t| task.contains(t.as_str())))
            })
    }
}

/// What the guard made of a proposed action.
#[derive(Debug, Clone, PartialEq)]
pub struct Reviewed {
    /// The action to run (the proposed one, or what a rule put in its place).
    pub action: Action,
    /// The rules that fired, in order.
    pub rules: Vec<String>,
    /// What to tell the model next turn, when a rule says.
    pub observation: Option<String>,
}

/// The guard of one task run.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Shared, so a step can read the rules while it changes what the guard remembers.
    rules: Arc<[RuleSet]>,
    memory: GuardMemory,
}

impl Guard {
    /// The rule sets that apply to `task` (decided once, as the seed does on the first step).
    pub fn new(rule_sets: Vec<RuleSet>, task: &str) -> Guard {
        Guard::resume(rule_sets, task, GuardMemory::default())
    }

    /// A guard that goes on from what an earlier one remembered of the same run.
    pub fn resume(rule_sets: Vec<RuleSet>, task: &str, memory: GuardMemory) -> Guard {
        Guard {
            rules: rule_sets
                .into_iter()
                .filter(|r| r.applies_to(task))
                .collect(),
            memory,
        }
    }

    /// What the guard remembers now, to [`resume`](Guard::resume) from.
    pub fn memory(&self) -> &GuardMemory {
        &self.memory
    }

    /// The names of the rule sets in force.
    pub fn active(&self) -> Vec<&str> {
        self.rules.iter().map(|r| r.name.as_str()).collect()
    }

    /// Before an action runs: the action to run instead (or the same), in an app known by these
    /// names (its display name and package).
    pub fn review(&mut self, proposed: Action, app: &[&str]) -> Reviewed {
        let mut reviewed = Reviewed {
            action: proposed,
            rules: Vec::new(),
            observation: None,
        };
        for rule in Arc::clone(&self.rules).iter().flat_map(|r| r.before.iter()) {
            if !self.holds(&rule.when, &reviewed.action, app, None) {
                continue;
            }
            let values = self.values(&reviewed.action, None);
            if let Some(next) = self.apply(rule, &values, &mut reviewed.observation) {
                reviewed.action = next;
            }
            reviewed.rules.push(rule.name.clone());
        }
        reviewed
    }

    /// After an action ran: remembers its outcome; an observation when a rule says.
    pub fn record(&mut self, action: &Action, success: bool, result: &str) -> Option<String> {
        if success {
            self.memory.done.insert(action.name().to_string());
        }
        let mut observation = None;
        for rule in Arc::clone(&self.rules).iter().flat_map(|r| r.after.iter()) {
            if self.holds(&rule.when, action, &[], Some(success)) {
                let values = self.values(action, Some(result));
                self.apply(rule, &values, &mut observation);
            }
        }
        observation
    }

    fn holds(&self, c: &Condition, action: &Action, app: &[&str], success: Option<bool>) -> bool {
        let text = action_text(action);
        (c.action.is_empty() || c.action.iter().any(|a| a == action.name()))
            && c.set.iter().all(|k| self.memory.values.contains_key(k))
            && c.unset.iter().all(|k| !self.memory.values.contains_key(k))
            && c.app.as_ref().is_none_or(|a| app.contains(&a.as_str()))
            && c.app_not
                .as_ref()
                .is_none_or(|a| !app.contains(&a.as_str()))
            && (c.text_contains_any.is_empty()
                || text.is_some_and(|t| c.text_contains_any.iter().any(|w| t.contains(w.as_str()))))
            && c.done.iter().all(|a| self.memory.done.contains(a))
            && c.not_done.iter().all(|a| !self.memory.done.contains(a))
            && c.outcome
                .is_none_or(|o| success == Some(o == Outcome::Success))
    }

    /// The placeholders a rule may use: the action's arguments, the result, the memory.
    fn values(&self, action: &Action, result: Option<&str>) -> BTreeMap<String, String> {
        let mut values = self.memory.values.clone();
        if let serde_json::Value::Object(args) = action.to_dict() {
            for (k, v) in args {
                if let serde_json::Value::String(s) = v {
                    values.insert(k, s);
                }
            }
        }
        if let Some(r) = result {
            values.insert("result".into(), r.to_string());
        }
        values
    }

    fn apply(
        &mut self,
        rule: &Rule,
        values: &BTreeMap<String, String>,
        observation: &mut Option<String>,
    ) -> Option<Action> {
        let lookup = |k: &str| values.get(k).cloned();
        for (key, template) in &rule.remember {
            let value = fill(template, &lookup, false);
            self.memory.values.insert(key.clone(), value);
        }
        for key in &rule.forget {
            self.memory.values.remove(key);
        }
        if let Some(text) = &rule.observe {
            *observation = Some(fill(text, &lookup, false));
        }
        let template = rule.rewrite.as_ref()?;
        // Checked at load time; a value that breaks it (it cannot: values are escaped) keeps the
        // action as it was.
        parse_reply(&fill(template, &lookup, true)).ok()
    }
}

/// The text an action carries, for `text_contains_any`.
fn action_text(action: &Action) -> Option<&str> {
    match action {
        Action::Type { text } | Action::TypeName { text } => Some(text),
        Action::GetKnowledgeData { query } => Some(query),
        Action::Finish { message } | Action::Note { message } | Action::TakeOver { message } => {
            Some(message)
        }
        _ => None,
    }
}

/// `{name}` placeholders filled; unknown ones left as written. In a grammar template, values
/// are escaped for a double-quoted string.
fn fill(template: &str, lookup: &dyn Fn(&str) -> Option<String>, quoted: bool) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if after[..close]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && close > 0 =>
            {
                let key = &after[..close];
                match lookup(key) {
                    Some(v) if quoted => {
                        out.push_str(&v.replace('\\', "\\\\").replace('"', "\\\""))
                    }
                    Some(v) => out.push_str(&v),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const QQ: &[&str] = &["QQ", "com.tencent.mobileqq"];
    const TASK: &str = "QQ 智能客服回复联系人11的问题";

    fn guard() -> Guard {
        Guard::new(vec![RuleSet::qq_customer_service()], TASK)
    }

    fn wait() -> Action {
        Action::Wait {
            duration: "1 seconds".into(),
        }
    }

    #[test]
    fn the_gate_applies_to_the_seed_s_tasks_only() {
        for task in [
            "QQ 智能客服回复",
            "打开QQ回复消息",
            "在QQ里给联系人 11 答疑",
        ] {
            assert_eq!(
                Guard::new(vec![RuleSet::qq_customer_service()], task).active(),
                ["qq-customer-service"],
                "{task}"
            );
        }
        for task in ["打开微信回复消息", "QQ 发送图片", "点外卖"] {
            assert!(
                Guard::new(vec![RuleSet::qq_customer_service()], task)
                    .active()
                    .is_empty(),
                "{task}"
            );
        }
    }

    #[test]
    fn no_finish_before_the_lookup_and_a_typed_question_becomes_the_lookup() {
        let mut g = guard();
        // Finish is blocked; the Wait it becomes is itself not allowed without a question.
        let r = g.review(
            Action::Finish {
                message: "已回复".into(),
            },
            QQ,
        );
        assert_eq!(r.action, wait());
        assert_eq!(r.rules.len(), 2, "{:?}", r.rules);
        assert!(
            r.observation
                .unwrap()
                .starts_with("Waiting for QQ AI is not allowed")
        );
        // A question typed into the chat: remembered, and looked up instead, in the same step.
        let r = g.review(
            Action::Type {
                text: "退货运费谁出？".into(),
            },
            QQ,
        );
        assert_eq!(
            r.action,
            Action::GetKnowledgeData {
                query: "退货运费谁出？".into()
            }
        );
        assert!(r.observation.unwrap().starts_with("Auto-forcing"));
        // Outside QQ the lookup becomes launching QQ.
        let r = g.review(Action::GetKnowledgeData { query: "q".into() }, &["微信"]);
        assert_eq!(r.action, Action::Launch { app: "QQ".into() });
        // A failed lookup keeps the gate closed; a successful one opens it.
        let said = g.record(
            &Action::GetKnowledgeData { query: "q".into() },
            false,
            "timeout",
        );
        assert_eq!(
            said.as_deref(),
            Some("GET_KNOWLEDGE_DATA failed. error=timeout")
        );
        // Finishing then is blocked, and the Wait it becomes retries the lookup of the question.
        assert_eq!(
            g.review(
                Action::Finish {
                    message: "x".into()
                },
                QQ
            )
            .action,
            Action::GetKnowledgeData {
                query: "退货运费谁出？".into()
            }
        );
        let said = g.record(
            &Action::GetKnowledgeData { query: "q".into() },
            true,
            "卖家承担",
        );
        assert_eq!(
            said.as_deref(),
            Some("GET_KNOWLEDGE_DATA executed successfully. result=卖家承担")
        );
        let done = Action::Finish {
            message: "已回复".into(),
        };
        assert_eq!(g.review(done.clone(), QQ).action, done);
        let typed = Action::Type {
            text: "怎么退货？".into(),
        };
        assert_eq!(g.review(typed.clone(), QQ).action, typed);
    }

    #[test]
    fn a_question_with_quotes_survives_the_rewrite_and_other_tasks_pass_untouched() {
        let mut g = guard();
        let r = g.review(
            Action::Type {
                text: "他说\"能退吗\"?".into(),
            },
            QQ,
        );
        assert_eq!(
            r.action,
            Action::GetKnowledgeData {
                query: "他说\"能退吗\"?".into()
            }
        );
        let mut other = Guard::new(vec![RuleSet::qq_customer_service()], "点外卖");
        let r = other.review(
            Action::Finish {
                message: "done".into(),
            },
            QQ,
        );
        assert_eq!(
            (r.action, r.rules.len()),
            (
                Action::Finish {
                    message: "done".into()
                },
                0
            )
        );
    }

    #[test]
    fn a_guard_resumed_from_its_memory_as_json_decides_as_the_one_that_went_on() {
        let question = Action::Type {
            text: "怎么退货？".into(),
        };
        let lookup = Action::GetKnowledgeData { query: "q".into() };
        let finish = Action::Finish {
            message: "好".into(),
        };
        let mut whole = guard();
        whole.review(question.clone(), QQ);
        whole.record(&lookup, true, "r");
        let mut parts = guard();
        parts.review(question, QQ);
        let carried = serde_json::to_string(parts.memory()).unwrap();
        let mut parts = Guard::resume(
            vec![RuleSet::qq_customer_service()],
            TASK,
            serde_json::from_str(&carried).unwrap(),
        );
        parts.record(&lookup, true, "r");
        let carried = serde_json::to_string(parts.memory()).unwrap();
        let mut parts = Guard::resume(
            vec![RuleSet::qq_customer_service()],
            TASK,
            serde_json::from_str(&carried).unwrap(),
        );
        assert_eq!(parts.memory(), whole.memory());
        assert_eq!(parts.review(finish.clone(), QQ), whole.review(finish, QQ));
        // A fresh guard still blocks the finish: the memory is what opened the gate.
        assert_ne!(
            guard()
                .review(
                    Action::Finish {
                        message: "好".into()
                    },
                    QQ
                )
                .rules,
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_bad_rule_file_is_refused_naming_the_rule() {
        let bad = "name: x\nbefore:\n  - name: fly\n    if: { action: [Fly] }\n";
        assert!(
            RuleSet::parse(bad)
                .unwrap_err()
                .to_string()
                .contains("\"fly\"")
        );
        let bad = "name: x\nbefore:\n  - name: broken\n    do: 'do(action=\"Tap\")'\n";
        assert!(
            RuleSet::parse(bad)
                .unwrap_err()
                .to_string()
                .contains("\"broken\"")
        );
        let bad = "name: x\nbefore:\n  - name: typo\n    iff: {}\n";
        assert!(RuleSet::parse(bad).is_err());
    }
}
