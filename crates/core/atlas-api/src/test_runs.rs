//! Test runs as a live board (`report_test_run`, `get_test_runs`): what a runner reports as its
//! tests go, and what the board answers of the latest runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest screenshot taken, as base64 text (a runner sends shrunk ones).
pub const MAX_SCREENSHOT: usize = 512 * 1024;
/// Tests (and phones) a run may have.
pub const MAX_TESTS: usize = 5_000;
/// The longest text field (a message, an action, a test's or a phone's name), in characters.
pub const MAX_TEXT: usize = 4_000;
/// The longest run id, in characters.
pub const MAX_RUN_ID: usize = 200;
/// A PNG in base64, as the server reads it (padded, no line breaks): the PNG signature
/// (`\x89PNG\r\n\x1a\n`, whose base64 begins `iVBORw0KGg`), then whole groups of four, the last
/// padded with `=` and no stray bits in its last symbol.
pub const PNG_BASE64: &str = "^iVBORw0KGg(?:o=|[o-r][A-Za-z0-9+/](?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?)$";

/// What happened in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestRunEvent {
    /// A run began: `suite`, `tests`, `devices`.
    RunStarted,
    /// `test` began on `device`.
    TestStarted,
    /// A `step` of `test` on `device` began (its screenshot) or was done (its action).
    Step,
    /// `test` ended on `device` with `result`.
    TestEnded,
    /// The run is over.
    RunEnded,
}

/// One step of a test.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TestStep {
    /// From 1.
    pub step: usize,
    /// model, graph, plan or guard (empty while the step is under way).
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub chosen_by: String,
    /// What ran, in the seed's dict form.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub action: String,
    /// The page the graph took the screen for.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub page: Option<String>,
    /// The screen as the step began: a PNG, base64.
    #[serde(default)]
    #[schemars(extend("pattern" = PNG_BASE64, "maxLength" = MAX_SCREENSHOT))]
    pub screenshot: Option<String>,
}

/// How a test ended.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TestOutcome {
    /// passed, failed, error, or lost (with its phone: it runs again elsewhere).
    #[schemars(extend("enum" = ["passed", "failed", "error", "lost"]))]
    pub status: String,
    /// Why, or the model's last words.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub message: String,
    /// Steps taken.
    #[serde(default)]
    pub steps: usize,
    /// Calls to the model.
    #[serde(default)]
    pub model_calls: usize,
    /// Steps the graph took without the model: model calls saved.
    #[serde(default)]
    pub graph_steps: usize,
    /// The test's time.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub seconds: f64,
    /// Each step, without screenshots (the `step` events brought them).
    #[serde(default)]
    pub trail: Vec<TestStep>,
}

/// `report_test_run`'s input. Which fields an event needs depends on its kind, and the schema
/// says so (a `oneOf` by `event`): a test's events name its phone and its test, a step its
/// step, test_ended its result. Checked when read beyond the schema: each names a phone
/// and a test of the run the runner started (404 when not).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = fields_by_event)]
pub struct ReportTestRunRequest {
    /// The run (the runner's id for it).
    #[schemars(length(min = 1, max = MAX_RUN_ID))]
    pub run_id: String,
    /// What happened.
    pub event: TestRunEvent,
    /// run_started: the suite's name.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub suite: Option<String>,
    /// run_started: the tests, in the suite's order.
    #[serde(default)]
    #[schemars(length(max = MAX_TESTS), inner(length(max = MAX_TEXT)))]
    pub tests: Vec<String>,
    /// run_started: the phones.
    #[serde(default)]
    #[schemars(length(max = MAX_TESTS), inner(length(max = MAX_TEXT)))]
    pub devices: Vec<String>,
    /// The phone the event is on.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub device: Option<String>,
    /// The test the event is of.
    #[serde(default)]
    #[schemars(length(max = MAX_TEXT))]
    pub test: Option<String>,
    /// step: the step.
    #[serde(default)]
    pub step: Option<TestStep>,
    /// test_ended: the result.
    #[serde(default)]
    pub result: Option<TestOutcome>,
}

/// The fields each kind of event needs besides `run_id` and `event`, as the server checks them.
pub const FIELDS_BY_EVENT: &[(&str, &[&str])] = &[
    ("run_started", &[]),
    ("test_started", &["device", "test"]),
    ("step", &["device", "test", "step"]),
    ("test_ended", &["device", "test", "result"]),
    ("run_ended", &[]),
];

/// `report_test_run`'s schema, its events typed by kind: one `oneOf` branch an event, naming it
/// (`const`) and requiring its fields, not null ([`FIELDS_BY_EVENT`]).
pub fn fields_by_event(schema: &mut schemars::Schema) {
    let branches: Vec<serde_json::Value> = FIELDS_BY_EVENT
        .iter()
        .map(|(event, fields)| {
            let mut properties = serde_json::json!({ "event": { "const": event } });
            for field in *fields {
                properties[*field] = serde_json::json!({ "not": { "type": "null" } });
            }
            let mut required = vec!["run_id", "event"];
            required.extend(fields.iter());
            serde_json::json!({ "properties": properties, "required": required })
        })
        .collect();
    schema.insert("oneOf".into(), serde_json::Value::Array(branches));
}

/// `report_test_run`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportTestRunResponse {
    /// The run's tests still to end.
    pub remaining: usize,
}

/// `get_test_runs`'s input.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestRunsRequest {
    /// One run (all, newest first, without steps, when absent).
    #[serde(default)]
    pub run_id: Option<String>,
    /// With `run_id`: this test's steps, screenshots included.
    #[serde(default)]
    pub test: Option<String>,
    /// With `test`: the first step answered (0 for the first), [`MAX_STEPS_ANSWERED`] at a
    /// time.
    #[serde(default)]
    pub steps_from: usize,
}

/// What a phone is doing.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DeviceNow {
    /// The phone.
    pub device: String,
    /// Its test, while one runs.
    pub test: Option<String>,
    /// The step under way.
    pub step: Option<usize>,
}

/// A test of a run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestView {
    /// Its name.
    pub name: String,
    /// pending, running, passed, failed, error (lost runs are counted in `lost`).
    pub status: String,
    /// The phone it ran (or runs) on.
    pub device: Option<String>,
    /// Its result, once ended.
    pub result: Option<TestOutcome>,
    /// Runs lost with their phones.
    pub lost: usize,
    /// Its steps, when asked for (`test`; empty otherwise), from `steps_from` on, at most
    /// [`MAX_STEPS_ANSWERED`].
    pub steps: Vec<TestStep>,
    /// How many steps it has (when its steps are asked for).
    #[serde(default)]
    pub steps_total: usize,
}

/// A run's counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    /// Tests.
    pub tests: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Ended in an error.
    pub errors: usize,
    /// Running now.
    pub running: usize,
    /// Calls to the model so far.
    pub model_calls: usize,
    /// Steps the graph took without the model so far: the calls it saved.
    pub graph_steps: usize,
}

/// A run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestRunView {
    /// Its id.
    pub run_id: String,
    /// The suite.
    pub suite: String,
    /// When it began (RFC 3339).
    pub started_at: String,
    /// When it ended.
    pub ended_at: Option<String>,
    /// Its counts.
    pub summary: RunSummary,
    /// Each phone, what it does now.
    pub devices: Vec<DeviceNow>,
    /// Each test (with one run asked for; empty otherwise).
    pub tests: Vec<TestView>,
}

/// `get_test_runs`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestRunsResponse {
    /// Newest first.
    pub runs: Vec<TestRunView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of event has one branch, named as the wire names it, and a branch's fields are
    /// fields of the request.
    #[test]
    fn the_schema_types_each_kind_of_event_once() {
        let schema = crate::schema::schema_of::<ReportTestRunRequest>();
        let branches = schema["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), FIELDS_BY_EVENT.len());
        for (branch, (event, fields)) in branches.iter().zip(FIELDS_BY_EVENT) {
            let kind: TestRunEvent = serde_json::from_value(serde_json::json!(event)).unwrap();
            assert_eq!(serde_json::to_value(kind).unwrap(), *event);
            assert_eq!(branch["properties"]["event"]["const"], *event);
            for field in *fields {
                assert!(schema["properties"][field].is_object(), "{field}");
                assert_eq!(branch["properties"][field]["not"]["type"], "null");
            }
        }
        let named: std::collections::HashSet<&str> =
            FIELDS_BY_EVENT.iter().map(|(e, _)| *e).collect();
        assert_eq!(named.len(), FIELDS_BY_EVENT.len());
        assert_eq!(schema["properties"]["run_id"]["maxLength"], MAX_RUN_ID);
        assert_eq!(schema["additionalProperties"], false);
    }
}
