//! The action's dict form (`{"_metadata": "do", "action": "Tap", "element": [500, 300]}`), as
//! serde types: what crosses every interface that carries an action, with the JSON Schema that
//! says exactly which dicts are actions.
//!
//! Key design decision: **the wire form is a pair of tagged enums mirrored from [`Action`]**,
//! not `Action` itself: `_metadata` tells a `do` from a `finish`, and `do`'s `action` names the
//! action as models write it (`Long Press`, `Type_Name`). `Action` stays the flat enum the
//! agent's code matches on, and the conversion between the two is total both ways.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Action, Relative};

/// The dict form: a `do(...)` or a `finish(...)`.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "_metadata")]
enum Dict {
    /// `do(action=…, …)`.
    #[serde(rename = "do")]
    Do(Do),
    /// `finish(message=…)`: the task is done.
    #[serde(rename = "finish")]
    Finish {
        /// What the model says of it.
        #[serde(default)]
        message: String,
    },
}

/// `do`'s actions, by the name models write.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action")]
enum Do {
    /// Start an app.
    Launch {
        /// Its package, or a name the app catalog knows.
        app: String,
    },
    /// A tap; `message` marks a sensitive one that wants confirmation.
    Tap {
        /// Where, in 0..999 of the screen.
        element: Point,
        /// Why a person should confirm it, when they should.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Text into the focused field.
    Type {
        /// The text.
        text: String,
    },
    /// A person's name into the focused field.
    #[serde(rename = "Type_Name")]
    TypeName {
        /// The name.
        text: String,
    },
    /// A swipe from one point to another.
    Swipe {
        /// Where it starts, in 0..999.
        start: Point,
        /// Where it ends, in 0..999.
        end: Point,
    },
    /// A long press.
    #[serde(rename = "Long Press")]
    LongPress {
        /// Where, in 0..999.
        element: Point,
    },
    /// A double tap.
    #[serde(rename = "Double Tap")]
    DoubleTap {
        /// Where, in 0..999.
        element: Point,
    },
    /// The Back key.
    Back,
    /// The Home key.
    Home,
    /// A wait.
    Wait {
        /// As the model wrote it (`"2 seconds"`).
        #[serde(default = "one_second")]
        duration: String,
    },
    /// A person takes the phone and hands it back.
    #[serde(rename = "Take_over")]
    TakeOver {
        /// What the person is asked to do.
        #[serde(default)]
        message: String,
    },
    /// The model asks the person to choose.
    Interact,
    /// The model records what it saw.
    Note {
        /// The note.
        #[serde(default)]
        message: String,
    },
    /// A summary or a comment of what was noted.
    #[serde(rename = "Call_API")]
    CallApi {
        /// What to do.
        instruction: String,
    },
    /// Seed 002's knowledge lookup.
    #[serde(rename = "GET_KNOWLEDGE_DATA")]
    GetKnowledgeData {
        /// The question.
        query: String,
    },
}

fn one_second() -> String {
    "1 seconds".into()
}

/// A point in 0..999 on each axis. Models and clients send fractions too (`[500.4, 299.6]`);
/// they are rounded, as the grammar's reader rounds them.
#[derive(Clone, Copy)]
struct Point(Relative);

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Point, D::Error> {
        let [x, y] = <[f64; 2]>::deserialize(deserializer)?;
        let inside = |v: f64| (0.0..=999.0).contains(&v);
        if !(inside(x) && inside(y)) {
            return Err(serde::de::Error::custom(format!(
                "[{x}, {y}] is outside the 0..999 coordinates"
            )));
        }
        Ok(Point([x.round() as u16, y.round() as u16]))
    }
}

impl JsonSchema for Point {
    fn schema_name() -> Cow<'static, str> {
        "Point".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "[x, y] in thousandths of the screen's width and height (0..999)",
            "type": "array",
            "items": {"type": "number", "minimum": 0, "maximum": 999},
            "minItems": 2,
            "maxItems": 2
        })
    }
}

impl From<&Action> for Dict {
    fn from(action: &Action) -> Dict {
        let p = Point;
        Dict::Do(match action.clone() {
            Action::Finish { message } => return Dict::Finish { message },
            Action::Launch { app } => Do::Launch { app },
            Action::Tap { element, message } => Do::Tap {
                element: p(element),
                message,
            },
            Action::Type { text } => Do::Type { text },
            Action::TypeName { text } => Do::TypeName { text },
            Action::Swipe { start, end } => Do::Swipe {
                start: p(start),
                end: p(end),
            },
            Action::LongPress { element } => Do::LongPress {
                element: p(element),
            },
            Action::DoubleTap { element } => Do::DoubleTap {
                element: p(element),
            },
            Action::Back => Do::Back,
            Action::Home => Do::Home,
            Action::Wait { duration } => Do::Wait { duration },
            Action::TakeOver { message } => Do::TakeOver { message },
            Action::Interact => Do::Interact,
            Action::Note { message } => Do::Note { message },
            Action::CallApi { instruction } => Do::CallApi { instruction },
            Action::GetKnowledgeData { query } => Do::GetKnowledgeData { query },
        })
    }
}

impl From<Dict> for Action {
    fn from(dict: Dict) -> Action {
        let action = match dict {
            Dict::Finish { message } => return Action::Finish { message },
            Dict::Do(action) => action,
        };
        match action {
            Do::Launch { app } => Action::Launch { app },
            Do::Tap { element, message } => Action::Tap {
                element: element.0,
                message,
            },
            Do::Type { text } => Action::Type { text },
            Do::TypeName { text } => Action::TypeName { text },
            Do::Swipe { start, end } => Action::Swipe {
                start: start.0,
                end: end.0,
            },
            Do::LongPress { element } => Action::LongPress { element: element.0 },
            Do::DoubleTap { element } => Action::DoubleTap { element: element.0 },
            Do::Back => Action::Back,
            Do::Home => Action::Home,
            Do::Wait { duration } => Action::Wait { duration },
            Do::TakeOver { message } => Action::TakeOver { message },
            Do::Interact => Action::Interact,
            Do::Note { message } => Action::Note { message },
            Do::CallApi { instruction } => Action::CallApi { instruction },
            Do::GetKnowledgeData { query } => Action::GetKnowledgeData { query },
        }
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Dict::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Action, D::Error> {
        Dict::deserialize(deserializer).map(Action::from)
    }
}

impl JsonSchema for Action {
    fn schema_name() -> Cow<'static, str> {
        "Action".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = Dict::json_schema(generator);
        schema.insert(
            "description".into(),
            "An action of the agents' grammar in its dict form, as parse_agent_reply gives it: \
             {\"_metadata\": \"do\", \"action\": \"Tap\", \"element\": [500, 300]} or \
             {\"_metadata\": \"finish\", \"message\": \"…\"}"
                .into(),
        );
        schema
    }
}
