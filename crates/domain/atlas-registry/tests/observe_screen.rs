//! `observe_screen` through the registry on a real folder store (`TestStore`): a run's screens become pages,
//! its steps transitions, a finished run is replayed from memory, and a hostile carry or action
//! gets a clear error or a harmless answer, never a panic.

use std::sync::Arc;

use atlas_registry::registry;
use atlas_service::Atlas;
use atlas_wiring::testing::TestStore;
use serde_json::{Value, json};

fn widget(id: &str, text: &str, kind: &str, bounds: &str) -> Value {
    json!({"id": id, "text": text, "type": kind, "bounds": bounds})
}

/// A list with a Settings button, and the settings screen it opens.
fn list() -> Vec<Value> {
    vec![
        widget("title", "Notes", "TextView", "[0,0][1080,200]"),
        widget("settings", "Settings", "Button", "[800,0][1080,200]"),
        widget("row", "Shopping", "TextView", "[0,300][1080,500]"),
    ]
}

fn settings() -> Vec<Value> {
    vec![
        widget("title", "Settings", "TextView", "[0,0][1080,200]"),
        widget("dark", "Dark mode", "Switch", "[0,300][1080,500]"),
    ]
}

async fn observe(atlas: &Arc<Atlas>, body: Value) -> Result<Value, atlas_model::AtlasError> {
    registry()
        .get("observe_screen")
        .expect("the tool is registered")
        .call(atlas.clone(), body)
        .await
}

fn screen(widgets: Vec<Value>, session: &str, executed: Value, carry: &Value) -> Value {
    json!({
        "app_id": "notes", "task": "open the settings", "session_id": session,
        "ui_hierarchy": {"widgets": widgets}, "screen_width": 1080, "screen_height": 2400,
        "executed": executed, "carry": carry,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_reported_and_a_finished_one_is_replayed() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let tools = registry();

    // The first screen of a new app: a page is added; nothing to report yet.
    let first = observe(&atlas, screen(list(), "s1", Value::Null, &Value::Null))
        .await
        .unwrap();
    let list_page = first["page_id"].as_str().unwrap().to_string();
    assert!(!list_page.is_empty(), "{first}");
    assert!(first.get("reported").is_none(), "{first}");
    assert_eq!(first["carry"]["replayable"], true);

    // The agent taps Settings ([800,0][1080,200] → centre 940,100 → relative 870,41).
    let tap = json!({"action": {"_metadata": "do", "action": "Tap", "element": [870, 41]}});
    let second = observe(&atlas, screen(settings(), "s1", tap, &first["carry"]))
        .await
        .unwrap();
    let settings_page = second["page_id"].as_str().unwrap().to_string();
    assert_ne!(settings_page, list_page, "{second}");
    assert_eq!(
        second["reported"],
        json!({"from_page": list_page, "to_page": settings_page, "success": true})
    );
    assert_eq!(second["carry"]["reported"], true);
    // A session nobody has ended (still going on another phone, or an agent that never says)
    // shows its way but vouches for none: the way is not replayed.
    let early = observe(&atlas, screen(list(), "s1b", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(early["basis"], "memory", "{early}");
    assert_eq!(early["trust"]["way"]["confirmed"], 0, "{early}");
    assert_eq!(early["sure"], false, "{early}");
    let finished = tools
        .get("end_session")
        .unwrap()
        .call(
            atlas.clone(),
            json!({"app_id": "notes", "session_id": "s1", "intent": "open the settings", "finished": true}),
        )
        .await
        .unwrap();
    assert_eq!(finished["updated"], true, "{finished}");

    // Another run of the same task: the graph remembers the way, resolved on this screen.
    let again = observe(&atlas, screen(list(), "s2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(again["page_id"], list_page.as_str());
    assert_eq!(again["basis"], "memory", "{again}");
    assert_eq!(
        again["action"],
        json!({"_metadata": "do", "action": "Tap", "element": [870, 41]}),
        "{again}"
    );
    // A way one finished run confirmed is replayed on the next run, under check, on the way's
    // own record: the app has none yet.
    assert_eq!(again["trust"]["kind"], "memory", "{again}");
    assert_eq!(again["trust"]["checked"], 0, "{again}");
    assert_eq!(again["trust"]["way"]["confirmed"], 1, "{again}");
    assert_eq!(again["trust"]["way"]["step"], 0, "{again}");
    assert_eq!(again["trust"]["way"]["replay"], true, "{again}");
    assert_eq!(again["sure"], true, "{again}");
    // With replay switched off, the model decides (the answer is still offered).
    let mut off = screen(list(), "s2-off", Value::Null, &Value::Null);
    off["replay"] = json!(false);
    let off = observe(&atlas, off).await.unwrap();
    assert_eq!(off["basis"], "memory", "{off}");
    assert_eq!(off["sure"], false, "{off}");
    // Taken, and the screen did not change: the step is reported failed, and the same action
    // is not offered as sure on the same screen again.
    let taken = json!({"action": again["action"], "by_graph": true});
    let stuck = observe(&atlas, screen(list(), "s2", taken, &again["carry"]))
        .await
        .unwrap();
    assert_eq!(stuck["reported"]["success"], false, "{stuck}");
    assert_eq!(stuck["action"], again["action"], "{stuck}");
    assert_eq!(stuck["confidence"], 0.0, "{stuck}");
    assert_eq!(stuck["sure"], false, "{stuck}");
    // The graph's step that changed nothing is a wrong answer on the app's record, and on the
    // way's: the check names the way and its step.
    assert_eq!(verdicts(&stuck), [("memory", false)], "{stuck}");
    assert_eq!(stuck["checked"][0]["page"], list_page.as_str(), "{stuck}");
    assert_eq!(
        stuck["checked"][0]["way"], again["trust"]["way"]["way"],
        "{stuck}"
    );
}

/// The kinds and verdicts of the checks an answer made.
fn verdicts(answer: &Value) -> Vec<(&str, bool)> {
    answer["checked"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (c["kind"].as_str().unwrap(), c["right"].as_bool().unwrap()))
        .collect()
}

async fn end(atlas: &Arc<Atlas>, session: &str, intent: &str, carry: &Value, executed: Value) {
    call(
        atlas,
        "end_session",
        json!({"app_id": "notes", "session_id": session, "intent": intent,
            "finished": true, "carry": carry, "executed": executed}),
    )
    .await
    .unwrap();
}

/// One run of the remembered task where the model is asked on the list and taps `tap` (the
/// remembered Settings, or the row), then finishes: the list's answer, and the settings' one.
async fn asked_run(atlas: &Arc<Atlas>, session: &str, tap: [u32; 2]) -> (Value, Value) {
    let first = observe(atlas, screen(list(), session, Value::Null, &Value::Null))
        .await
        .unwrap();
    let tapped = json!({"action": {"_metadata": "do", "action": "Tap", "element": tap}});
    let next = if tap == [870, 41] { settings() } else { list() };
    let second = observe(atlas, screen(next, session, tapped, &first["carry"]))
        .await
        .unwrap();
    let finish = json!({"action": {"_metadata": "finish", "message": "done"}});
    end(
        atlas,
        session,
        "open the settings",
        &second["carry"],
        finish,
    )
    .await;
    (first, second)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_way_is_replayed_once_confirmed_doubted_where_it_parted_and_kept_across_a_restart() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    // One run teaches the way (the model is asked at every step of it): the next run replays it.
    asked_run(&atlas, "teach", [870, 41]).await;
    let (first, second) = asked_run(&atlas, "run1", [870, 41]).await;
    assert_eq!(first["sure"], true, "{first}");
    assert_eq!(verdicts(&second), [("memory", true)], "{second}");
    // That the task is done there is only the teaching run's agent's claim: the model is asked
    // once more whether to finish.
    assert_eq!(second["trust"]["kind"], "finish", "{second}");
    assert_eq!(second["sure"], false, "{second}");
    let held = second["trust"]["way"]["held"].as_str().unwrap();
    assert!(held.contains("claim"), "{second}");
    // It agreed (it finished there too): its finish is taken on a screen that shows what the
    // way ended on.
    let (_, second) = asked_run(&atlas, "run2", [870, 41]).await;
    assert_eq!(second["trust"]["way"]["finish_agreed"], true, "{second}");
    assert_eq!(second["sure"], true, "{second}");

    // A run whose model taps the row instead: the way parted at its first step, and is doubted
    // there until a run passes there again.
    let (_, second) = asked_run(&atlas, "other", [500, 166]).await;
    assert_eq!(verdicts(&second), [("memory", false)], "{second}");
    let doubted = observe(&atlas, screen(list(), "look", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(doubted["sure"], false, "{doubted}");
    assert_eq!(doubted["trust"]["way"]["doubted_from"], 0, "{doubted}");
    assert_eq!(doubted["trust"]["way"]["replay"], false, "{doubted}");
    // A run that passes there lifts the doubt.
    asked_run(&atlas, "passes", [870, 41]).await;
    let lifted = observe(&atlas, screen(list(), "look2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert!(
        lifted["trust"]["way"].get("doubted_from").is_none(),
        "{lifted}"
    );
    assert_eq!(lifted["sure"], true, "{lifted}");

    // An app whose recent checks go wrong again and again trips its breaker: no replay, however
    // often the way was confirmed.
    for run in 0..10 {
        asked_run(&atlas, &format!("astray{run}"), [500, 166]).await;
        asked_run(&atlas, &format!("back{run}"), [870, 41]).await;
    }
    let tripped = observe(&atlas, screen(list(), "look3", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(tripped["trust"]["tripped"], true, "{tripped}");
    assert_eq!(tripped["sure"], false, "{tripped}");

    // The records are the sessions': a restart keeps them.
    drop(atlas);
    let atlas = store.open_atlas();
    let reopened = observe(&atlas, screen(list(), "look4", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(reopened["trust"], tripped["trust"], "{reopened}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_keeps_the_old_record_where_its_own_checks_agree() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    asked_run(&atlas, "teach", [870, 41]).await;
    for run in 0..70 {
        asked_run(&atlas, &format!("run{run}"), [870, 41]).await;
    }
    let versioned = |session: &str, version: &str| {
        let mut body = screen(list(), session, Value::Null, &Value::Null);
        body["app_version"] = json!(version);
        body
    };
    // Version 2 has no checks of its own yet: the clean record of the sessions before lends it
    // the fast path.
    let v2 = observe(&atlas, versioned("v2-a", "2.0")).await.unwrap();
    assert_eq!(v2["trust"]["checked"], 0, "{v2}");
    assert!(v2["trust"]["bound"].as_f64().unwrap() >= 0.95, "{v2}");
    assert_eq!(v2["sure"], true, "{v2}");
    // Its model disagrees (the Settings button moved away on version 2): version 2's record has
    // a wrong answer, and the old record no longer carries it.
    let tapped = json!({"action": {"_metadata": "do", "action": "Tap", "element": [500, 166]}});
    let mut next = screen(list(), "v2-a", tapped, &v2["carry"]);
    next["app_version"] = json!("2.0");
    let after = observe(&atlas, next).await.unwrap();
    assert_eq!(verdicts(&after), [("memory", false)], "{after}");
    let v2 = observe(&atlas, versioned("v2-b", "2.0")).await.unwrap();
    assert_eq!(v2["trust"]["checked"], 1, "{v2}");
    assert_eq!(v2["trust"]["wrong"], 1, "{v2}");
    assert_eq!(v2["sure"], false, "{v2}");
    // Version 1's own record is untouched.
    let v1 = observe(&atlas, screen(list(), "v1", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(v1["trust"]["wrong"], 0, "{v1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_screens_and_carries_get_errors_or_harmless_answers() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let first = observe(&atlas, screen(list(), "s", Value::Null, &Value::Null))
        .await
        .unwrap();
    // A struct's fields as an array, which serde would read and no schema allows: refused.
    for (tool, body) in [
        (
            "end_session",
            json!({"app_id": "notes", "session_id": "s", "intent": "t", "finished": false,
                "executed": [null, null]}),
        ),
        (
            "end_session",
            json!({"app_id": "notes", "session_id": "s", "intent": "t", "finished": false,
                "carry": ["p", [], null]}),
        ),
        (
            "observe_screen",
            screen(settings(), "s", Value::Null, &json!("a carry as text")),
        ),
        // A screen wider than the schema's maximum (schemathesis found it taken).
        ("observe_screen", {
            let mut wide = screen(settings(), "s", Value::Null, &Value::Null);
            wide["screen_width"] = json!(atlas_api::screen::MAX_SCREEN_SIDE + 1);
            wide
        }),
        (
            "observe_screen",
            screen(
                settings(),
                "s",
                json!([{"action": "Back"}]),
                &first["carry"],
            ),
        ),
    ] {
        let refused = registry()
            .get(tool)
            .unwrap()
            .call(atlas.clone(), body)
            .await
            .unwrap_err();
        assert_eq!(refused.code().as_str(), "INVALID_PARAMETER", "{refused}");
    }
    // A carry Atlas did not give (an object of another shape) is ignored: the screen starts
    // afresh, and nothing is reported or checked from it.
    let forged = json!({"page_id": 7, "offered": "yes", "taken": {"page_id": ""}});
    let afresh = observe(
        &atlas,
        screen(
            settings(),
            "s",
            json!({"action": {"_metadata": "do", "action": "Back"}}),
            &forged,
        ),
    )
    .await
    .unwrap();
    assert!(afresh.get("reported").is_none(), "{afresh}");
    assert!(afresh.get("checked").is_none(), "{afresh}");
    // Not an action of the grammar: a clear INVALID_PARAMETER, nothing reported.
    let nonsense = json!({"action": {"_metadata": "do", "action": "rm -rf /"}});
    let refused = observe(&atlas, screen(settings(), "s", nonsense, &first["carry"]))
        .await
        .unwrap_err();
    assert_eq!(refused.code().as_str(), "INVALID_PARAMETER", "{refused}");
    // Bounds at the ends of what an i64 holds, on the screen and in the carry: no overflow.
    let huge = vec![
        widget(
            "a",
            "Far",
            "Button",
            "[-9223372036854775808,-9223372036854775808][9223372036854775807,9223372036854775807]",
        ),
        widget(
            "b",
            "Big",
            "EditText",
            "[4611686018427387904,0][9223372036854775807,10]",
        ),
    ];
    let mut carry = first["carry"].clone();
    carry["widgets"] = json!(huge.clone());
    let tap = json!({"action": {"_metadata": "do", "action": "Tap", "element": [999, 0]}, "focus": [4294967295u64, 4294967295u64]});
    let answer = observe(&atlas, screen(huge, "s", tap, &carry))
        .await
        .unwrap();
    assert!(answer["page_id"].is_string(), "{answer}");
    // A screen of no size is refused by its schema.
    let mut flat = screen(list(), "s", Value::Null, &Value::Null);
    flat["screen_width"] = json!(0);
    let refused = observe(&atlas, flat).await.unwrap_err();
    assert_eq!(refused.code().as_str(), "INVALID_PARAMETER", "{refused}");
}

/// The display settings the Dark mode switch opens.
fn display() -> Vec<Value> {
    vec![
        widget("title", "Display", "TextView", "[0,0][1080,200]"),
        widget("theme", "Theme", "Button", "[0,300][1080,500]"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_route_is_walked_screen_by_screen_and_dropped_when_the_screen_deviates() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    // One run teaches the way: the list, Settings, then Dark mode.
    let first = observe(&atlas, screen(list(), "s1", Value::Null, &Value::Null))
        .await
        .unwrap();
    let tap =
        |x: u16, y: u16| json!({"action": {"_metadata": "do", "action": "Tap", "element": [x, y]}});
    let second = observe(
        &atlas,
        screen(settings(), "s1", tap(870, 41), &first["carry"]),
    )
    .await
    .unwrap();
    let third = observe(
        &atlas,
        screen(display(), "s1", tap(500, 166), &second["carry"]),
    )
    .await
    .unwrap();
    let display_page = third["page_id"].as_str().unwrap().to_string();

    // Another task, never done: where the graph is not sure, the map around the screen.
    let task = "switch on the dark mode";
    let ask = |widgets: Vec<Value>, session: &str, executed: Value, carry: &Value| {
        let mut body = screen(widgets, session, executed, carry);
        body["task"] = json!(task);
        body["map"] = json!(true);
        body["fast_path"] = json!(2.0);
        body
    };
    let start = observe(&atlas, ask(list(), "s2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(start["sure"], false, "{start}");
    let map = &start["map"];
    let routes = map["routes"].as_array().expect("a map");
    // The route to Settings only begins the one through Dark mode: one route.
    assert_eq!(routes.len(), 1, "{map}");
    let route = &routes[0];
    assert_eq!(route["route"], 1);
    assert_eq!(route["steps"].as_array().unwrap().len(), 2, "{route}");
    assert_eq!(route["steps"][1]["widget_text"], "Dark mode", "{route}");
    assert_eq!(route["first"], tap(870, 41)["action"], "{route}");
    let prompt = map["prompt"].as_str().unwrap();
    assert!(
        prompt.contains(task) && prompt.contains("route 1") && prompt.contains("Routes as JSON: "),
        "{prompt}"
    );

    // The planner took route 1: its first step runs, the rest is sent to be walked.
    let mut walk = ask(
        settings(),
        "s2",
        json!({"action": route["first"]}),
        &start["carry"],
    );
    walk["follow"] = json!([route["steps"][1]]);
    let walked = observe(&atlas, walk).await.unwrap();
    assert_eq!(
        (&walked["basis"], &walked["sure"]),
        (&json!("plan"), &json!(true)),
        "{walked}"
    );
    assert_eq!(walked["action"], tap(500, 166)["action"], "{walked}");
    assert!(walked.get("map").is_none(), "{walked}");
    let end = observe(
        &atlas,
        ask(
            display(),
            "s2",
            json!({"action": walked["action"]}),
            &walked["carry"],
        ),
    )
    .await
    .unwrap();
    assert_eq!(end["page_id"], display_page.as_str());
    assert_ne!(end["basis"], "plan", "the route has ended: {end}");
    assert!(end.get("deviated").is_none(), "{end}");

    // A screen that is not the page the route expects drops the rest of it.
    let mut astray = ask(
        list(),
        "s3",
        json!({"action": route["first"]}),
        &start["carry"],
    );
    astray["follow"] = json!([route["steps"][1]]);
    let dropped = observe(&atlas, astray).await.unwrap();
    assert_eq!(dropped["deviated"], true, "{dropped}");
    assert_ne!(dropped["basis"], "plan", "{dropped}");
    assert!(dropped["carry"].get("plan").is_none(), "{dropped}");
    // A route longer than a route can be is refused.
    let mut long = ask(settings(), "s4", Value::Null, &Value::Null);
    long["follow"] = json!(vec![route["steps"][1].clone(); 9]);
    let refused = observe(&atlas, long).await.unwrap_err();
    assert_eq!(refused.code().as_str(), "INVALID_PARAMETER", "{refused}");
}

atlas_wiring::on_every_store!(
    the_record_of_checks_is_kept_across_a_restart,
    a_forgotten_way_is_not_replayed_until_a_run_confirms_it_again
);

/// The record is the sessions' (their checks kept with their steps): a restart of a folder store
/// replays it from the journal, a PostgreSQL store reads it back from its rows.
async fn the_record_of_checks_is_kept_across_a_restart(store: TestStore) {
    let atlas = store.open_atlas();
    asked_run(&atlas, "teach", [870, 41]).await;
    for run in 0..3 {
        asked_run(&atlas, &format!("right{run}"), [870, 41]).await;
    }
    asked_run(&atlas, "wrong", [500, 166]).await;
    let before = observe(&atlas, screen(list(), "look", Value::Null, &Value::Null))
        .await
        .unwrap();
    // Three right memory checks, then a wrong one (the row tapped: the way parted there, and is
    // doubted from there; the tap held back where the model finished marks the way, and is no
    // check of the app's record either way).
    assert_eq!(before["trust"]["checked"], 4, "{before}");
    assert_eq!(before["trust"]["wrong"], 1, "{before}");
    assert_eq!(before["trust"]["way"]["doubted_from"], 0, "{before}");
    drop(atlas);
    let atlas = store.open_atlas();
    let after = observe(&atlas, screen(list(), "look2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(after["trust"], before["trust"], "{after}");
    // And from a checkpoint (the folder store's graph files, not its journal).
    atlas.checkpoint().unwrap();
    drop(atlas);
    let atlas = store.open_atlas();
    let folded = observe(&atlas, screen(list(), "look3", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(folded["trust"], before["trust"], "{folded}");
}

async fn call(
    atlas: &Arc<Atlas>,
    tool: &str,
    body: Value,
) -> Result<Value, atlas_model::AtlasError> {
    registry()
        .get(tool)
        .unwrap()
        .call(atlas.clone(), body)
        .await
}

/// `get_ways` lists a way with its record; `forget_way` stops its replay (durably, across a
/// restart and a checkpoint) until the next finished run goes it again.
async fn a_forgotten_way_is_not_replayed_until_a_run_confirms_it_again(store: TestStore) {
    let atlas = store.open_atlas();
    asked_run(&atlas, "teach", [870, 41]).await;
    asked_run(&atlas, "again", [870, 41]).await;
    let listed = call(&atlas, "get_ways", json!({"app_id": "notes"}))
        .await
        .unwrap();
    let ways = listed["ways"].as_array().unwrap();
    assert_eq!(ways.len(), 1, "{listed}");
    let record = &ways[0]["record"];
    assert_eq!(record["task"], "open the settings", "{listed}");
    assert_eq!(record["confirmed"], 2, "{listed}");
    assert_eq!(record["replay"], true, "{listed}");
    assert_eq!(ways[0]["steps"][0]["widget_text"], "Settings", "{listed}");
    let key = record["way"].as_str().unwrap().to_string();

    // A key the app has no way by is not found, and nothing changes.
    let unknown = call(
        &atlas,
        "forget_way",
        json!({"app_id": "notes", "way": "0123456789abcdef"}),
    )
    .await
    .unwrap_err();
    assert_eq!(unknown.code().as_str(), "NOT_FOUND", "{unknown}");
    let missing = call(&atlas, "forget_way", json!({"app_id": "nope", "way": key}))
        .await
        .unwrap_err();
    assert_eq!(missing.code().as_str(), "NOT_FOUND", "{missing}");
    let still = observe(&atlas, screen(list(), "look", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(still["basis"], "memory", "{still}");

    let forgotten = call(&atlas, "forget_way", json!({"app_id": "notes", "way": key}))
        .await
        .unwrap();
    assert_eq!(forgotten["confirmations_forgotten"], 2, "{forgotten}");
    let after = observe(&atlas, screen(list(), "look2", Value::Null, &Value::Null))
        .await
        .unwrap();
    // Forgotten: no way replayed (what the labels say is all the graph has left).
    assert_ne!(after["basis"], "memory", "{after}");
    assert!(after["trust"].get("way").is_none(), "{after}");
    let listed = call(&atlas, "get_ways", json!({"app_id": "notes"}))
        .await
        .unwrap();
    assert_eq!(listed["ways"], json!([]), "{listed}");

    // Durable: a restart, and a checkpoint, keep it forgotten.
    atlas.checkpoint().unwrap();
    drop(atlas);
    let atlas = store.open_atlas();
    let reopened = observe(&atlas, screen(list(), "look3", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_ne!(reopened["basis"], "memory", "{reopened}");

    // A run after it learns the way anew: the next run replays it.
    asked_run(&atlas, "relearn", [870, 41]).await;
    let relearned = observe(&atlas, screen(list(), "look4", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(relearned["basis"], "memory", "{relearned}");
    assert_eq!(relearned["trust"]["way"]["replay"], true, "{relearned}");
    assert_eq!(relearned["trust"]["way"]["confirmed"], 1, "{relearned}");
}

/// The settings screen with its switch in a state the dump shows.
fn switch(on: bool) -> Vec<Value> {
    let mut widgets = settings();
    widgets[1]["checked"] = json!(on);
    widgets
}

fn dark_mode(widgets: Vec<Value>, session: &str, executed: Value, carry: &Value) -> Value {
    let mut body = screen(widgets, session, executed, carry);
    body["task"] = json!("turn on dark mode");
    body
}

async fn verdict(atlas: &Arc<Atlas>, session: &str, intent: &str, passed: bool) -> Value {
    call(
        atlas,
        "report_verdict",
        json!({"app_id": "notes", "session_id": session, "intent": intent, "passed": passed,
            "reason": "the test's expectations", "judge": "a test"}),
    )
    .await
    .unwrap()
}

/// A way's step that stays on its page (a switch) passes only where the screen shows the new
/// state; one that shows nothing proves nothing, and is never taken twice on the same screen —
/// the loop that once tapped one radio button sixteen times, each "passing".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_shows_nothing_is_no_pass_and_is_not_taken_again_on_the_same_screen() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let tap_switch = json!({"action": {"_metadata": "do", "action": "Tap", "element": [500, 166]}});
    let finish = json!({"action": {"_metadata": "finish", "message": "done"}});
    // A run the model drives: the switch, then finish; a verdict passes it.
    let first = observe(
        &atlas,
        dark_mode(switch(false), "teach", Value::Null, &Value::Null),
    )
    .await
    .unwrap();
    let on = observe(
        &atlas,
        dark_mode(switch(true), "teach", tap_switch.clone(), &first["carry"]),
    )
    .await
    .unwrap();
    assert_eq!(
        on["page_id"], first["page_id"],
        "the switch stays on its page: {on}"
    );
    call(
        &atlas,
        "end_session",
        json!({"app_id": "notes", "session_id": "teach", "intent": "turn on dark mode",
            "finished": true, "carry": on["carry"], "executed": finish}),
    )
    .await
    .unwrap();
    assert_eq!(
        verdict(&atlas, "teach", "turn on dark mode", true).await["updated"],
        true
    );

    // The next run replays the tap; the app no longer shows the switch's state change.
    let start = observe(
        &atlas,
        dark_mode(switch(false), "replay", Value::Null, &Value::Null),
    )
    .await
    .unwrap();
    assert_eq!(start["sure"], true, "{start}");
    let by_graph = json!({"action": start["action"], "by_graph": true});
    let same = observe(
        &atlas,
        dark_mode(switch(false), "replay", by_graph.clone(), &start["carry"]),
    )
    .await
    .unwrap();
    // No pass, no wrong answer either (the dump may not show a choice): no check at all.
    assert!(same.get("checked").is_none(), "{same}");
    assert_eq!(same["reported"]["success"], false, "{same}");
    // The same tap on the same screen again would be a loop: the model gets the screen.
    assert_eq!(same["action"], start["action"], "{same}");
    assert_eq!(same["sure"], false, "{same}");
    let held = same["trust"]["way"]["held"].as_str().unwrap();
    assert!(held.contains("no loop"), "{same}");
    assert_eq!(same["trust"]["way"]["replay"], false, "{same}");

    // Where the screen shows the new state, the tap passed: the finish comes next, sure (a
    // verdict passed the run that ended there).
    let start = observe(
        &atlas,
        dark_mode(switch(false), "replay2", Value::Null, &Value::Null),
    )
    .await
    .unwrap();
    let by_graph = json!({"action": start["action"], "by_graph": true});
    let done = observe(
        &atlas,
        dark_mode(switch(true), "replay2", by_graph, &start["carry"]),
    )
    .await
    .unwrap();
    assert!(
        done.get("checked").is_none(),
        "the step waits for what is done next: {done}"
    );
    assert_eq!(done["carry"]["unjudged"]["right"], true, "{done}");
    assert_eq!(done["trust"]["kind"], "finish", "{done}");
    assert_eq!(done["sure"], true, "{done}");
}

/// A verdict outranks the agent's word: a run it failed confirms nothing, and the way it
/// replayed is doubted from where the run left the passing runs' steps — here, at its finish;
/// `get_ways` lists which runs were judged, and how.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_verdict_confirms_nothing_and_doubts_the_way_it_replayed() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    asked_run(&atlas, "teach", [870, 41]).await;
    let judged = verdict(&atlas, "teach", "open the settings", true).await;
    assert_eq!(judged["updated"], true, "{judged}");
    assert!(judged.get("doubted").is_none(), "{judged}");

    // The graph replays the way, its finish too (a verdict passed the run it learnt it from):
    // the agent says it finished, but the test fails.
    let first = observe(&atlas, screen(list(), "r1", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(first["sure"], true, "{first}");
    let by_graph = json!({"action": first["action"], "by_graph": true});
    let second = observe(&atlas, screen(settings(), "r1", by_graph, &first["carry"]))
        .await
        .unwrap();
    assert_eq!(second["trust"]["kind"], "finish", "{second}");
    assert_eq!(second["sure"], true, "{second}");
    let finish = json!({"action": second["action"], "by_graph": true});
    end(&atlas, "r1", "open the settings", &second["carry"], finish).await;
    let failed = verdict(&atlas, "r1", "open the settings", false).await;
    let way = first["trust"]["way"]["way"].clone();
    assert_eq!(
        failed["doubted"],
        json!([{"way": way, "step": 1}]),
        "{failed}"
    );
    // Said again, it doubts nothing more.
    let again = verdict(&atlas, "r1", "open the settings", false).await;
    assert!(again.get("doubted").is_none(), "{again}");

    // The way's first step still replays (the run went it as the passing run did); its finish
    // is held, and the failed run confirmed nothing.
    let next = observe(&atlas, screen(list(), "r2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(next["sure"], true, "{next}");
    assert_eq!(next["trust"]["way"]["confirmed"], 1, "{next}");
    assert_eq!(next["trust"]["way"]["judged"], 1, "{next}");
    let by_graph = json!({"action": next["action"], "by_graph": true});
    let at_end = observe(&atlas, screen(settings(), "r2", by_graph, &next["carry"]))
        .await
        .unwrap();
    assert_eq!(at_end["trust"]["kind"], "finish", "{at_end}");
    assert_eq!(at_end["trust"]["way"]["doubted_from"], 1, "{at_end}");
    assert_eq!(at_end["sure"], false, "{at_end}");

    let listed = call(&atlas, "get_ways", json!({"app_id": "notes"}))
        .await
        .unwrap();
    let runs: Vec<(&str, &str)> = listed["ways"][0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs, [("teach", "passed"), ("r1", "failed")], "{listed}");
    assert_eq!(
        listed["ways"][0]["runs"][0]["verdict"]["judge"], "a test",
        "{listed}"
    );

    // A session with no steps is not found among the remembered ones: nothing is written. An
    // unknown app is not found; a verdict without its outcome is refused.
    let none = verdict(&atlas, "never-ran", "open the settings", false).await;
    assert_eq!(none["updated"], false, "{none}");
    let unknown = call(
        &atlas,
        "report_verdict",
        json!({"app_id": "nope", "session_id": "r1", "intent": "x", "passed": true}),
    )
    .await
    .unwrap_err();
    assert_eq!(unknown.code().as_str(), "NOT_FOUND", "{unknown}");
    let bare = call(
        &atlas,
        "report_verdict",
        json!({"app_id": "notes", "session_id": "r1", "intent": "open the settings"}),
    )
    .await
    .unwrap_err();
    assert_eq!(bare.code().as_str(), "INVALID_PARAMETER", "{bare}");
}

/// An update puts a dialog after a way's first step: that step parted, and is doubted — but a
/// run that dismisses the dialog and comes back onto the way takes the way's next step on the
/// fast path. The parting shows where the app changed, not what the way does after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parting_doubts_its_own_step_and_a_run_back_on_the_way_goes_on_along_it() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let with_about = || {
        let mut widgets = settings();
        widgets.push(widget("about", "About", "Button", "[0,600][1080,800]"));
        widgets
    };
    let about = || {
        vec![
            widget("title", "About", "TextView", "[0,0][1080,200]"),
            widget("version", "Version 2", "TextView", "[0,300][1080,500]"),
        ]
    };
    let whats_new = || {
        vec![
            widget("title", "What's new", "TextView", "[0,800][1080,1000]"),
            widget("ok", "OK", "Button", "[0,1200][1080,1400]"),
        ]
    };
    let body = |widgets: Vec<Value>, session: &str, executed: Value, carry: &Value| {
        let mut body = screen(widgets, session, executed, carry);
        body["task"] = json!("open about");
        body
    };
    let tap =
        |x: u32, y: u32| json!({"action": {"_metadata": "do", "action": "Tap", "element": [x, y]}});
    let (settings_tap, about_tap, ok_tap) = (tap(870, 41), tap(500, 291), tap(500, 541));

    // The model's run teaches the way (Settings, About, finish); a verdict passes it.
    let teach = vec![
        (list(), Value::Null),
        (with_about(), settings_tap),
        (about(), about_tap),
    ];
    judged_run(&atlas, "open about", teach).await;

    // After an update the first step opens a dialog: the step parted. The model dismisses the
    // dialog, the run is back on the way, and the way's next step is replayed.
    let start = observe(&atlas, body(list(), "updated", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(start["sure"], true, "{start}");
    let by_graph = json!({"action": start["action"], "by_graph": true});
    let dialog = observe(
        &atlas,
        body(whats_new(), "updated", by_graph, &start["carry"]),
    )
    .await
    .unwrap();
    let back_on = observe(
        &atlas,
        body(with_about(), "updated", ok_tap, &dialog["carry"]),
    )
    .await
    .unwrap();
    assert_eq!(back_on["trust"]["way"]["step"], 1, "{back_on}");
    assert_eq!(back_on["trust"]["way"]["doubted_from"], 0, "{back_on}");
    assert_eq!(back_on["sure"], true, "{back_on}");
    assert_eq!(back_on["action"]["element"], json!([500, 291]), "{back_on}");

    // The step that parted is held, until a run passes there again.
    let listed = call(
        &atlas,
        "get_ways",
        json!({"app_id": "notes", "intent": "open about"}),
    )
    .await
    .unwrap();
    let taught = listed["ways"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["record"]["confirmed"] == 1)
        .expect("the taught way is listed");
    assert_eq!(taught["record"]["doubted_from"], 0, "{listed}");
    assert_eq!(taught["record"]["replay"], false, "{listed}");
    let held = taught["record"]["held"].as_str().unwrap();
    assert!(held.contains("doubted"), "{listed}");
}

/// A remembered way's step that chooses a radio button is not taken where the screen shows that
/// button chosen already: the tap would change nothing (a run that came back onto the way after
/// choosing it itself), and it is no check of the way either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_the_screen_shows_made_is_not_made_again() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let sort = |by_date: bool| {
        let mut name = widget("name", "Name", "RadioButton", "[0,300][1080,500]");
        let mut date = widget("date", "Date", "RadioButton", "[0,500][1080,700]");
        name["checked"] = json!(!by_date);
        date["checked"] = json!(by_date);
        vec![
            widget("title", "Sort by", "TextView", "[0,0][1080,200]"),
            name,
            date,
        ]
    };
    let body = |widgets: Vec<Value>, session: &str, executed: Value, carry: &Value| {
        let mut body = screen(widgets, session, executed, carry);
        body["task"] = json!("sort by date");
        body
    };
    let tap_date = json!({"action": {"_metadata": "do", "action": "Tap", "element": [500, 250]}});
    let teach = vec![(sort(false), Value::Null), (sort(true), tap_date)];
    judged_run(&atlas, "sort by date", teach).await;

    let unchosen = observe(&atlas, body(sort(false), "r1", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(unchosen["sure"], true, "{unchosen}");
    assert_eq!(
        unchosen["action"]["element"],
        json!([500, 250]),
        "{unchosen}"
    );

    let made = observe(&atlas, body(sort(true), "r2", Value::Null, &Value::Null))
        .await
        .unwrap();
    assert_eq!(made["trust"]["way"]["step"], 0, "{made}");
    assert_eq!(made["sure"], false, "{made}");
    assert!(made.get("action").is_none_or(Value::is_null), "{made}");
    assert!(made["carry"].get("offered").is_none(), "{made}");
    let held = made["trust"]["way"]["held"].as_str().unwrap();
    assert!(held.contains("done already"), "{made}");
}

/// A switch the way turned off is not tapped where the screen shows it off already: the same tap
/// would turn it on again. The state a run found a widget in is remembered with its step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_the_screen_shows_as_the_way_left_it_is_not_tapped_again() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let settings = |on: bool| {
        let mut switch = widget(
            "close_app",
            "Close this app at launch",
            "Switch",
            "[0,300][1080,500]",
        );
        switch["checked"] = json!(on);
        vec![
            widget("title", "Settings", "TextView", "[0,0][1080,200]"),
            switch,
        ]
    };
    let task = "disable closing this app at launch";
    let body = |widgets: Vec<Value>, session: &str| {
        let mut body = screen(widgets, session, Value::Null, &Value::Null);
        body["task"] = json!(task);
        body
    };
    let tap = json!({"action": {"_metadata": "do", "action": "Tap", "element": [500, 166]}});
    judged_run(
        &atlas,
        task,
        vec![(settings(true), Value::Null), (settings(false), tap)],
    )
    .await;

    let on = observe(&atlas, body(settings(true), "r1")).await.unwrap();
    assert_eq!(on["sure"], true, "{on}");
    assert_eq!(on["action"]["element"], json!([500, 166]), "{on}");

    let off = observe(&atlas, body(settings(false), "r2")).await.unwrap();
    assert_eq!(off["trust"]["way"]["step"], 0, "{off}");
    assert_eq!(off["sure"], false, "{off}");
    assert!(off.get("action").is_none_or(Value::is_null), "{off}");
    let held = off["trust"]["way"]["held"].as_str().unwrap();
    assert!(held.contains("done already"), "{off}");
}

/// A run of `task` the model drives through `screens` (each with what was done on the screen
/// before it), finished, and passed by a verdict.
async fn judged_run(atlas: &Arc<Atlas>, task: &str, screens: Vec<(Vec<Value>, Value)>) {
    let mut carry = Value::Null;
    for (widgets, executed) in screens {
        let mut body = screen(widgets, "teach", executed, &carry);
        body["task"] = json!(task);
        carry = observe(atlas, body).await.unwrap()["carry"].clone();
    }
    let finish = json!({"action": {"_metadata": "finish", "message": "done"}});
    end(atlas, "teach", task, &carry, finish).await;
    verdict(atlas, "teach", task, true).await;
}
