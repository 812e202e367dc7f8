//! The action grammar phone-agent models answer in (Open-AutoGLM's, with seed 002's
//! `GET_KNOWLEDGE_DATA`): `do(action="Tap", element=[500,300])`, `finish(message="…")`, read out
//! of whatever the model wrapped around them.
//!
//! Models do not answer cleanly. They think aloud before the action, wrap it in `<answer>` or
//! not, write two actions, quote with `'`, `"` or `“”`, escape quotes, and stop before the closing
//! parenthesis. [`parse_reply`] takes the first *well-formed* action — a known action with the
//! arguments it needs, coordinates inside 0..999 — looking first inside `<answer>`, then outside
//! `<think>`, then anywhere. When none is, the error says why, so the agent can tell the model
//! and ask again instead of ending the task.
//!
//! Key design decision: **the grammar is data, not a Python evaluator.** Arguments are literals
//! (strings, numbers, lists, `True`/`False`/`None`) read by a small scanner ([`call`]) that can
//! neither run code nor panic, whatever the model sends; the scanner is fuzzed (`tests/fuzz.rs`)
//! and its corpus of real-world messes kept (`corpus/`).

pub mod call;
mod dict;

use call::{Call, Value, calls};
use serde_json::Value as Json;

/// A point in the model's relative coordinates: 0..999 on each axis, the fraction of the screen
/// in thousandths.
pub type Relative = [u16; 2];

/// One action of the grammar.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `Launch`: start an app.
    Launch {
        /// Its package, or a name the app catalog knows.
        app: String,
    },
    /// `Tap`; `message` marks a sensitive tap (a payment, a deletion) that wants confirmation.
    Tap {
        /// Where, in 0..999 of the screen.
        element: Relative,
        /// Why a person should confirm it, when they should.
        message: Option<String>,
    },
    /// `Type`: text into the focused field.
    Type {
        /// The text.
        text: String,
    },
    /// `Type_Name`: typing a person's name (the grammar keeps it apart from other text).
    TypeName {
        /// The name.
        text: String,
    },
    /// `Swipe` from one point to another.
    Swipe {
        /// Where it starts, in 0..999.
        start: Relative,
        /// Where it ends, in 0..999.
        end: Relative,
    },
    /// `Long Press`.
    LongPress {
        /// Where, in 0..999.
        element: Relative,
    },
    /// `Double Tap`.
    DoubleTap {
        /// Where, in 0..999.
        element: Relative,
    },
    /// `Back`: the Back key.
    Back,
    /// `Home`: the Home key.
    Home,
    /// `Wait`.
    Wait {
        /// As the model wrote it (`"2 seconds"`).
        duration: String,
    },
    /// `Take_over`: a person takes the phone (a sign-in, a captcha) and hands it back.
    TakeOver {
        /// What the person is asked to do.
        message: String,
    },
    /// `Interact`: the model asks the person to choose.
    Interact,
    /// `Note`: the model records what it saw.
    Note {
        /// The note.
        message: String,
    },
    /// `Call_API`: the model asks for a summary or a comment of what it noted.
    CallApi {
        /// What to do.
        instruction: String,
    },
    /// `GET_KNOWLEDGE_DATA` (seed 002): look up a knowledge base and type its answer.
    GetKnowledgeData {
        /// The question.
        query: String,
    },
    /// `finish`: the task is done.
    Finish {
        /// What the model says of it.
        message: String,
    },
}

/// No well-formed action in a reply, and why (what the model is told).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParseError {
    /// The reply calls neither `do` nor `finish`.
    #[error("no action: the reply has no do(...) or finish(...)")]
    NoAction,
    /// It calls one, but no call is well formed; the first call's fault.
    #[error("no well-formed action: {0}")]
    Malformed(#[from] CallError),
}

/// What is wrong with one `do(...)` or `finish(...)`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The call cannot be read (its brackets, quotes or arguments).
    #[error(transparent)]
    Unreadable(#[from] call::ReadError),
    /// An argument the action needs is not there.
    #[error("`{0}` is missing")]
    Missing(String),
    /// An argument that must be a text is not.
    #[error("`{0}` must be a string")]
    NotText(String),
    /// A point that is not a list.
    #[error("`{0}` must be [x, y]")]
    NotPoint(String),
    /// A point that is not two numbers.
    #[error("`{0}` must be two numbers [x, y]")]
    NotTwoNumbers(String),
    /// A point off the 0..999 screen.
    #[error("`{name}` {at:?} is outside the 0..999 coordinates")]
    OffScreen {
        /// The argument.
        name: String,
        /// Where it points.
        at: [f64; 2],
    },
    /// An action the grammar does not have.
    #[error("unknown action {0:?}")]
    UnknownAction(String),
}

/// The action names of the grammar as written, by their normalised form.
const NAMES: &[(&str, &str)] = &[
    ("launch", "Launch"),
    ("tap", "Tap"),
    ("type", "Type"),
    ("typename", "Type_Name"),
    ("swipe", "Swipe"),
    ("longpress", "Long Press"),
    ("doubletap", "Double Tap"),
    ("back", "Back"),
    ("home", "Home"),
    ("wait", "Wait"),
    ("takeover", "Take_over"),
    ("interact", "Interact"),
    ("note", "Note"),
    ("callapi", "Call_API"),
    ("getknowledgedata", "GET_KNOWLEDGE_DATA"),
];

/// The action names of the grammar as models write them (`Tap`, `Long Press`, …), and `finish`.
pub fn action_names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().map(|(_, name)| *name).chain(["finish"])
}

/// The first well-formed action in a model's reply.
pub fn parse_reply(reply: &str) -> Result<Action, ParseError> {
    let mut first_error: Option<CallError> = None;
    for region in regions(reply) {
        for call in calls(&region, &["do", "finish"]) {
            match call.map_err(CallError::from).and_then(|c| action(&c)) {
                Ok(action) => return Ok(action),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    Err(match first_error {
        Some(e) => ParseError::Malformed(e),
        None => ParseError::NoAction,
    })
}

/// Where to look, in order: inside `<answer>` (to its end tag or the reply's end), the reply
/// without its `<think>` parts, the whole reply. An action the model only thought about is a
/// last resort.
fn regions(reply: &str) -> Vec<String> {
    let mut regions = Vec::new();
    if let Some(at) = reply.find("<answer>") {
        let inside = &reply[at + "<answer>".len()..];
        let end = inside.find("</answer>").unwrap_or(inside.len());
        regions.push(inside[..end].to_string());
    }
    let mut outside = String::new();
    let mut rest = reply;
    while let Some(at) = rest.find("<think>") {
        outside.push_str(&rest[..at]);
        rest = match rest[at..].find("</think>") {
            Some(end) => &rest[at + end + "</think>".len()..],
            None => "",
        };
    }
    outside.push_str(rest);
    if outside != reply {
        regions.push(outside);
    }
    regions.push(reply.to_string());
    regions
}

fn action(call: &Call) -> Result<Action, CallError> {
    let arg = |name: &str| {
        call.arguments
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    };
    let text = |name: &str| -> Result<String, CallError> {
        match arg(name) {
            Some(Value::Str(s)) => Ok(s.clone()),
            Some(Value::Num(n)) => Ok(n.to_string()),
            Some(_) => Err(CallError::NotText(name.into())),
            None => Err(CallError::Missing(name.into())),
        }
    };
    let optional = |name: &str| arg(name).is_some().then(|| text(name)).transpose();
    let point = |name: &str| -> Result<Relative, CallError> {
        let Some(value) = arg(name) else {
            return Err(CallError::Missing(name.into()));
        };
        let Value::List(items) = value else {
            return Err(CallError::NotPoint(name.into()));
        };
        let numbers: Vec<f64> = items
            .iter()
            .filter_map(|v| {
                if let Value::Num(n) = v {
                    Some(*n)
                } else {
                    None
                }
            })
            .collect();
        match numbers[..] {
            [x, y]
                if items.len() == 2 && (0.0..=999.0).contains(&x) && (0.0..=999.0).contains(&y) =>
            {
                Ok([x.round() as u16, y.round() as u16])
            }
            [x, y] if items.len() == 2 => Err(CallError::OffScreen {
                name: name.into(),
                at: [x, y],
            }),
            _ => Err(CallError::NotTwoNumbers(name.into())),
        }
    };
    if call.name == "finish" {
        return Ok(Action::Finish {
            message: optional("message")?.unwrap_or_default(),
        });
    }
    let written = text("action")?;
    let key: String = written
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let Some((key, _)) = NAMES.iter().find(|(k, _)| *k == key) else {
        return Err(CallError::UnknownAction(written));
    };
    Ok(match *key {
        "launch" => Action::Launch { app: text("app")? },
        "tap" => Action::Tap {
            element: point("element")?,
            message: optional("message")?,
        },
        "type" => Action::Type {
            text: text("text")?,
        },
        "typename" => Action::TypeName {
            text: text("text")?,
        },
        "swipe" => Action::Swipe {
            start: point("start")?,
            end: point("end")?,
        },
        "longpress" => Action::LongPress {
            element: point("element")?,
        },
        "doubletap" => Action::DoubleTap {
            element: point("element")?,
        },
        "back" => Action::Back,
        "home" => Action::Home,
        "wait" => Action::Wait {
            duration: optional("duration")?.unwrap_or_else(|| "1 seconds".into()),
        },
        "takeover" => Action::TakeOver {
            message: optional("message")?.unwrap_or_default(),
        },
        "interact" => Action::Interact,
        "note" => Action::Note {
            message: optional("message")?.unwrap_or_default(),
        },
        "callapi" => Action::CallApi {
            instruction: text("instruction")?,
        },
        _ => Action::GetKnowledgeData {
            query: text("query")?,
        },
    })
}

impl Action {
    /// The grammar's name of the action (`Tap`, `Long Press`, `finish`).
    pub fn name(&self) -> &'static str {
        let key = match self {
            Action::Launch { .. } => "launch",
            Action::Tap { .. } => "tap",
            Action::Type { .. } => "type",
            Action::TypeName { .. } => "typename",
            Action::Swipe { .. } => "swipe",
            Action::LongPress { .. } => "longpress",
            Action::DoubleTap { .. } => "doubletap",
            Action::Back => "back",
            Action::Home => "home",
            Action::Wait { .. } => "wait",
            Action::TakeOver { .. } => "takeover",
            Action::Interact => "interact",
            Action::Note { .. } => "note",
            Action::CallApi { .. } => "callapi",
            Action::GetKnowledgeData { .. } => "getknowledgedata",
            Action::Finish { .. } => return "finish",
        };
        NAMES
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, n)| *n)
            .expect("every action is named")
    }

    /// Seconds a `Wait` asks for: the first number of its duration (1 when it has none).
    pub fn wait_seconds(&self) -> Option<f64> {
        let Action::Wait { duration } = self else {
            return None;
        };
        let number: String = duration
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        Some(number.parse().unwrap_or(1.0))
    }

    /// The seed's dict form: `{"_metadata": "do", "action": "Tap", "element": [500, 300]}`,
    /// `{"_metadata": "finish", "message": "…"}` (what `serde` writes of an action).
    pub fn to_dict(&self) -> Json {
        serde_json::to_value(self).expect("an action is always JSON")
    }

    /// The action of the seed's dict form (what [`Action::to_dict`] gives back), when it is one.
    pub fn from_dict(dict: &Json) -> Option<Action> {
        <Action as serde::Deserialize>::deserialize(dict).ok()
    }

    /// The action written in the grammar, as a model would (what [`parse_reply`] reads back).
    pub fn to_grammar(&self) -> String {
        let quote = |s: &str| {
            format!(
                "\"{}\"",
                s.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
            )
        };
        let point = |p: &Relative| format!("[{},{}]", p[0], p[1]);
        if let Action::Finish { message } = self {
            return format!("finish(message={})", quote(message));
        }
        let mut args = vec![format!("action={}", quote(self.name()))];
        match self {
            Action::Launch { app } => args.push(format!("app={}", quote(app))),
            Action::Tap { element, message } => {
                args.push(format!("element={}", point(element)));
                if let Some(m) = message {
                    args.push(format!("message={}", quote(m)));
                }
            }
            Action::Type { text } | Action::TypeName { text } => {
                args.push(format!("text={}", quote(text)))
            }
            Action::Swipe { start, end } => {
                args.push(format!("start={}", point(start)));
                args.push(format!("end={}", point(end)));
            }
            Action::LongPress { element } | Action::DoubleTap { element } => {
                args.push(format!("element={}", point(element)))
            }
            Action::Wait { duration } => args.push(format!("duration={}", quote(duration))),
            Action::TakeOver { message } | Action::Note { message } => {
                args.push(format!("message={}", quote(message)))
            }
            Action::CallApi { instruction } => {
                args.push(format!("instruction={}", quote(instruction)))
            }
            Action::GetKnowledgeData { query } => args.push(format!("query={}", quote(query))),
            Action::Back | Action::Home | Action::Interact | Action::Finish { .. } => {}
        }
        format!("do({})", args.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn open_autoglm_s_failures_are_read_right() {
        // Its parser typed `你好")</answe` for this (a slice of the reply).
        assert_eq!(
            parse_reply(r#"<answer>do(action="Type", text="你好")</answer>"#).unwrap(),
            Action::Type {
                text: "你好".into()
            }
        );
        // Two actions: the first is taken.
        assert_eq!(
            parse_reply(r#"do(action="Back") do(action="Home")"#).unwrap(),
            Action::Back
        );
        // An unclosed parenthesis at the end.
        assert_eq!(
            parse_reply(r#"<answer>do(action="Tap", element=[500, 300]"#).unwrap(),
            Action::Tap {
                element: [500, 300],
                message: None
            }
        );
        // GET_KNOWLEDGE_DATA is an action, and nothing parseable is an error, not a finish.
        assert_eq!(
            parse_reply(r#"do(action="GET_KNOWLEDGE_DATA", query="退货运费谁出")"#).unwrap(),
            Action::GetKnowledgeData {
                query: "退货运费谁出".into()
            }
        );
        assert!(parse_reply("我觉得应该点击搜索框。").is_err());
    }

    #[test]
    fn the_answer_is_preferred_to_thoughts_and_bad_calls_are_skipped() {
        let reply = r#"<think>也许 do(action="Back") 更好，但不是</think><answer>do(action="Home")</answer>"#;
        assert_eq!(parse_reply(reply).unwrap(), Action::Home);
        let reply = r#"do(action="Fly") then do(action="Tap", element=[1200, 5]) so do(action="Long Press", element=[10, 20])"#;
        assert_eq!(
            parse_reply(reply).unwrap(),
            Action::LongPress { element: [10, 20] }
        );
        let error = parse_reply(r#"do(action="Tap", element=[1200, 5])"#).unwrap_err();
        assert!(error.to_string().contains("0..999"), "{error}");
    }

    #[test]
    fn the_dict_form_and_the_grammar_round_trip() {
        let tap = Action::Tap {
            element: [500, 300],
            message: Some("确认支付".into()),
        };
        assert_eq!(
            tap.to_dict(),
            json!({"_metadata": "do", "action": "Tap", "element": [500, 300], "message": "确认支付"})
        );
        assert_eq!(
            Action::Finish {
                message: "完成".into()
            }
            .to_dict(),
            json!({"_metadata": "finish", "message": "完成"})
        );
        for action in [
            tap.clone(),
            Action::Swipe {
                start: [1, 2],
                end: [998, 999],
            },
            Action::Type {
                text: "a \"quoted\" \\ line\n二".into(),
            },
            Action::Wait {
                duration: "2 seconds".into(),
            },
            Action::Finish {
                message: String::new(),
            },
        ] {
            assert_eq!(parse_reply(&action.to_grammar()).unwrap(), action);
            assert_eq!(Action::from_dict(&action.to_dict()), Some(action.clone()));
        }
        assert_eq!(
            parse_reply(r#"do(action="Wait", duration="2.5 seconds")"#)
                .unwrap()
                .wait_seconds(),
            Some(2.5)
        );
    }

    #[test]
    fn only_actions_are_read_from_the_dict_form_and_its_schema_says_which() {
        let read = |dict: Json| Action::from_dict(&dict);
        assert_eq!(
            read(json!({"_metadata": "do", "action": "Long Press", "element": [10.4, 998.6]})),
            Some(Action::LongPress { element: [10, 999] })
        );
        assert_eq!(
            read(json!({"_metadata": "do", "action": "Wait"})),
            Some(Action::Wait {
                duration: "1 seconds".into()
            })
        );
        for not_one in [
            json!(null),
            json!({"_metadata": "do", "action": "Fly"}),
            json!({"_metadata": "do", "action": "Tap", "element": [1200, 5]}),
            json!({"_metadata": "do", "action": "Tap"}),
            json!({"_metadata": "maybe"}),
        ] {
            assert_eq!(read(not_one.clone()), None, "{not_one}");
        }
        let schema = serde_json::to_value(schemars::schema_for!(Action)).unwrap();
        let text = schema.to_string();
        for name in action_names().filter(|n| *n != "finish") {
            assert!(
                text.contains(&format!("\"{name}\"")),
                "{name} missing: {text}"
            );
        }
        assert!(schema["oneOf"].is_array(), "{schema}");
    }
}
