//! The service over a real store: each test runs on a folder in a temporary directory and on a
//! fresh PostgreSQL database (see `atlas_wiring::testing`).

use std::sync::Arc;

use atlas_registry::*;
use atlas_service::*;
use atlas_store_fs::FsStore;
use atlas_text::HashEmbedder;
use atlas_wiring::testing::TestStore;
use atlas_wiring::testing::open_atlas_at as open;

atlas_wiring::on_every_store!(
    demo_answers_the_seed_intents_and_survives_restart,
    a_demo_left_incomplete_is_completed_and_what_agents_taught_is_kept,
    a_remembered_task_is_replayed_with_new_values_and_session_progress,
    only_finished_sessions_are_replayed_and_their_failed_steps_are_not,
    an_unknown_task_is_grounded_in_labels_or_left_unsure,
    device_dumps_are_read_into_widgets_and_match_their_page,
    a_screen_in_another_rendering_is_matched_by_what_it_shows,
    a_choice_in_a_dialog_is_committed_and_digit_groups_are_not_goals,
    values_go_into_the_fields_the_instruction_and_the_last_step_name,
    an_item_a_web_page_names_is_reached_by_its_link_or_its_kinds_address
);

/// A start an older Atlas stopped half-way left 11 of the demo's pages and a few transitions,
/// one of them since reported on by agents: the next `--demo` start writes what is missing in one
/// append and keeps what is there.
async fn a_demo_left_incomplete_is_completed_and_what_agents_taught_is_kept(store: TestStore) {
    let built = demo_app().await.unwrap();
    let atlas = store.open_atlas();
    let mut partial = built.clone();
    partial.pages.truncate(11);
    let kept: std::collections::HashSet<String> =
        partial.pages.iter().map(|p| p.page_id.clone()).collect();
    partial
        .transitions
        .retain(|t| kept.contains(&t.from_page) && kept.contains(&t.to_page));
    partial.intents.clear();
    assert!(!partial.transitions.is_empty());
    partial.transitions[0].success_count = 999;
    let reported = partial.transitions[0].transition_id.clone();
    atlas.import_app(partial.clone()).await.unwrap();
    let asked = |atlas: &Atlas| {
        atlas
            .query_path(QueryPathRequest {
                app_id: DEMO_APP_ID.into(),
                intent: "点外卖".into(),
                current_page: None,
                max_steps: None,
                include_history: None,
            })
            .unwrap()
    };

    let missing = atlas.missing(&built);
    assert_eq!(missing.pages, (built.pages.len() - 11, built.pages.len()));
    assert_eq!(
        missing.transitions.0,
        built.transitions.len() - partial.transitions.len()
    );
    assert_eq!(
        demo_graph(&atlas).await.unwrap(),
        DemoInstall::Completed(missing)
    );
    let whole = atlas.export_app(DEMO_APP_ID).unwrap();
    assert_eq!(
        (whole.pages.len(), whole.transitions.len()),
        (built.pages.len(), built.transitions.len())
    );
    assert!(whole.intents.len() >= built.intents.len());
    let agents = whole
        .transitions
        .iter()
        .find(|t| t.transition_id == reported)
        .unwrap();
    assert_eq!(agents.success_count, 999, "what agents taught is kept");
    assert!(asked(&atlas).success);
    assert_eq!(demo_graph(&atlas).await.unwrap(), DemoInstall::Present);
    assert!(atlas.missing(&built).is_none());

    // Durable: the next start finds it whole.
    drop(atlas);
    let atlas = store.open_atlas();
    assert!(atlas.missing(&built).is_none());
    assert!(asked(&atlas).success);
}

async fn demo_answers_the_seed_intents_and_survives_restart(store: TestStore) {
    let atlas = store.open_atlas();
    assert_eq!(
        demo_graph(&atlas).await.unwrap(),
        atlas_service::DemoInstall::Installed
    );
    let stats = atlas.get_graph_stats(GraphStatsRequest::default()).unwrap();
    assert!(
        stats.pages >= 30 && stats.transitions >= 80 && stats.intents >= 20,
        "{stats:?}"
    );

    let home = atlas
        .match_current_page(MatchPageRequest {
            app_id: DEMO_APP_ID.into(),
            ui_hierarchy: None,
            page_title: Some("首页".into()),
            page_screenshot: None,
        })
        .await
        .unwrap();
    assert!(home.matched);
    let home_id = home.page.unwrap().page_id;

    let r = atlas
        .query_path(QueryPathRequest {
            app_id: DEMO_APP_ID.into(),
            intent: "点外卖".into(),
            current_page: Some(home_id.clone()),
            max_steps: None,
            include_history: None,
        })
        .unwrap();
    assert!(r.success, "{r:?}");
    assert_eq!(r.target_page.as_ref().unwrap().page_name, "外卖首页");
    assert_eq!(r.path.as_ref().unwrap().steps[0].widget_text, "外卖");

    let r = atlas
        .query_path(QueryPathRequest {
            app_id: DEMO_APP_ID.into(),
            intent: "查找附近餐厅".into(),
            current_page: None,
            max_steps: None,
            include_history: None,
        })
        .unwrap();
    assert!(r.success);
    assert_eq!(r.target_page.as_ref().unwrap().page_name, "附近餐厅");
    // The direct 附近 button fails more often than the route through 外卖: both are offered.
    assert!(!r.alternatives.is_empty(), "{r:?}");

    let miss = atlas
        .query_path(QueryPathRequest {
            app_id: DEMO_APP_ID.into(),
            intent: "量子纠缠实验".into(),
            current_page: None,
            max_steps: None,
            include_history: None,
        })
        .unwrap();
    assert!(!miss.success);
    assert_eq!(miss.message, "未找到匹配的意图");

    let next = atlas
        .get_next_action(NextActionRequest {
            app_version: None,
            current_page: home_id.clone(),
            intent: "申请退款".into(),
            app_id: None,
            session_id: None,
            explain: false,
        })
        .unwrap();
    assert!(!next.is_complete);
    assert!(next.action.is_some());

    // A report, then a restart: the statistics persist.
    let target = r.path.unwrap().steps[0].clone();
    let rep = atlas
        .report_transition(ReportTransitionRequest {
            from_page: home_id.clone(),
            action: ReportedAction {
                action_type: target.action_type.clone(),
                widget: None,
                widget_text: Some(target.widget_text.clone()),
                widget_xpath: None,
                input_text: None,
                checked: None,
            },
            to_page: target.expected_page.clone(),
            success: false,
            latency_ms: Some(900),
            reason: Some("按钮未响应".into()),
            app_id: Some(DEMO_APP_ID.into()),
            intent: Some("查找附近餐厅".into()),
            session_id: Some("s1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(rep.updated);
    let fails = rep.stats.fail_count;
    drop(atlas);
    let atlas = store.open_atlas();
    let actions = atlas
        .get_available_actions(AvailableActionsRequest { page_id: home_id })
        .unwrap();
    let edge = actions
        .actions
        .iter()
        .find(|a| a.widget_text == target.widget_text)
        .unwrap();
    assert!(edge.success_rate < 1.0);
    let stats = atlas
        .get_graph_stats(GraphStatsRequest {
            app_id: Some(DEMO_APP_ID.into()),
        })
        .unwrap();
    assert_eq!(stats.by_app[0].traces, 1);
    assert!(fails >= 1);
    atlas.checkpoint().unwrap();
    drop(atlas);
    let report = store.open().check(false).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert!(report.pages >= 30 && report.transitions >= 80, "{report:?}");
}

/// A model server that takes its time: the hash embedder behind a delay, flagged remote.
struct SlowRemoteEmbedder {
    inner: HashEmbedder,
    delay: std::time::Duration,
    slow: std::sync::atomic::AtomicBool,
}

impl atlas_text::Embedder for SlowRemoteEmbedder {
    fn name(&self) -> String {
        "slow-remote".into()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, atlas_text::EmbedError> {
        if self.slow.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(self.delay);
        }
        self.inner.embed(texts)
    }
    fn match_threshold(&self) -> f32 {
        self.inner.match_threshold()
    }
    fn is_remote(&self) -> bool {
        true
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_remote_embedder_does_not_stall_the_event_loop() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(SlowRemoteEmbedder {
        inner: HashEmbedder::default(),
        delay: std::time::Duration::from_millis(400),
        slow: false.into(),
    });
    let store = Arc::new(FsStore::open(dir.path()).unwrap());
    let atlas = Atlas::open(store, embedder.clone(), CheckpointPolicy::default()).unwrap();
    demo_graph(&atlas).await.unwrap();
    embedder
        .slow
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let tools = registry();
    let query_path = tools.get("query_path").unwrap().clone();
    // A phrasing that is no registered intent, so it must be embedded.
    let call = tokio::spawn(query_path.call(
        atlas.clone(),
        serde_json::json!({ "app_id": DEMO_APP_ID, "intent": "我想点一份外卖吃" }),
    ));
    // On the one event-loop thread, a ticker must keep ticking while the embedder sleeps.
    let started = std::time::Instant::now();
    let mut ticks = 0;
    while !call.is_finished() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        ticks += 1;
    }
    let answer = call.await.unwrap().unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(400));
    assert!(
        ticks >= 10,
        "the event loop ran {ticks} times while the embedder worked"
    );
    assert_eq!(answer["success"], true, "{answer}");
}

async fn call(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    name: &str,
    input: serde_json::Value,
) -> serde_json::Value {
    tools
        .get(name)
        .unwrap()
        .call(atlas.clone(), input)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The error a tool call is refused with.
async fn refusal(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    name: &str,
    input: serde_json::Value,
) -> atlas_model::AtlasError {
    match tools.get(name).unwrap().call(atlas.clone(), input).await {
        Ok(answer) => panic!("{name} was taken: {answer}"),
        Err(e) => e,
    }
}

/// The page id `add_page` gave.
async fn page(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    app: &str,
    name: &str,
    widgets: serde_json::Value,
) -> String {
    let added = call(atlas, tools, "add_page", serde_json::json!({ "app_id": app, "page_name": name, "ui_hierarchy": { "widgets": widgets } })).await;
    added["page_id"].as_str().unwrap().to_string()
}

/// A notes app: the list (with a "New note" button and a search field), the new-note dialog.
async fn notes_app(atlas: &Arc<Atlas>, tools: &ToolRegistry) -> (String, String) {
    let list = page(atlas, tools, "notes", "Notes", serde_json::json!([
        { "id": "0", "text": "Notes", "type": "p" }, { "id": "1", "text": "New note", "type": "button" }, { "id": "2", "text": "Settings", "type": "button" } ])).await;
    let dialog = page(atlas, tools, "notes", "New note dialog", serde_json::json!([
        { "id": "0", "text": "Label", "type": "input" }, { "id": "1", "text": "OK", "type": "button" }, { "id": "2", "text": "Cancel", "type": "button" } ])).await;
    (list, dialog)
}

async fn step(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    from: &str,
    action: serde_json::Value,
    to: &str,
    session: &str,
    intent: &str,
) {
    call(atlas, tools, "report_transition", serde_json::json!({ "from_page": from, "to_page": to, "action": action, "success": true, "session_id": session, "intent": intent })).await;
}

/// What the labels point to: the answer when it is sure, else the model's best candidate all the
/// same. Which action ranks first is grounding's business; whether it is sure enough to act on
/// without asking an LLM is the calibrated model's.
async fn likeliest(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    page: &str,
    intent: &str,
    session: &str,
) -> serde_json::Value {
    let answer = next(atlas, tools, page, intent, session).await;
    if !answer["action"].is_null() || answer["is_complete"] == true {
        return answer;
    }
    let best = &answer["candidates"][0];
    assert!(best.is_object(), "no candidates: {answer}");
    serde_json::json!({ "action": best["action"], "is_complete": best["is_complete"], "unsure": answer["error"] })
}

async fn next(
    atlas: &Arc<Atlas>,
    tools: &ToolRegistry,
    page: &str,
    intent: &str,
    session: &str,
) -> serde_json::Value {
    call(
        atlas,
        tools,
        "get_next_action",
        serde_json::json!({ "current_page": page, "intent": intent, "session_id": session }),
    )
    .await
}

async fn a_remembered_task_is_replayed_with_new_values_and_session_progress(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let (list, dialog) = notes_app(&atlas, &tools).await;
    let taught = "create a note named 'alpha'";
    step(
        &atlas,
        &tools,
        &list,
        serde_json::json!({ "type": "click", "widget_text": "New note" }),
        &dialog,
        "demo",
        taught,
    )
    .await;
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "input", "widget_text": "Label", "input_text": "alpha" }),
        &dialog,
        "demo",
        taught,
    )
    .await;
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "click", "widget_text": "OK" }),
        &list,
        "demo",
        taught,
    )
    .await;

    // The same template with another value, in a new session: the list page is visited twice,
    // and each visit gets its own answer.
    let asked = "create a note named 'beta'";
    let first = next(&atlas, &tools, &list, asked, "test").await;
    assert_eq!(first["action"]["widget_text"], "New note", "{first}");
    step(
        &atlas,
        &tools,
        &list,
        serde_json::json!({ "type": "click", "widget_text": "New note" }),
        &dialog,
        "test",
        asked,
    )
    .await;
    let second = next(&atlas, &tools, &dialog, asked, "test").await;
    assert_eq!(
        (
            second["action"]["action_type"].as_str(),
            second["action"]["input_text"].as_str()
        ),
        (Some("input"), Some("beta")),
        "{second}"
    );
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "input", "widget_text": "Label", "input_text": "beta" }),
        &dialog,
        "test",
        asked,
    )
    .await;
    let third = next(&atlas, &tools, &dialog, asked, "test").await;
    assert_eq!(third["action"]["widget_text"], "OK", "{third}");
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "click", "widget_text": "OK" }),
        &list,
        "test",
        asked,
    )
    .await;
    let done = next(&atlas, &tools, &list, asked, "test").await;
    assert_eq!(
        (done["is_complete"].as_bool(), done["action"].is_null()),
        (Some(true), true),
        "{done}"
    );
}

/// A session said to have failed is not replayed; a finished one is, without the steps that did
/// nothing on the way; and the remembered end carries its confidence.
async fn only_finished_sessions_are_replayed_and_their_failed_steps_are_not(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let (list, dialog) = notes_app(&atlas, &tools).await;
    let task = "open the settings";
    // An agent that wandered into the dialog and gave up.
    step(
        &atlas,
        &tools,
        &list,
        serde_json::json!({ "type": "click", "widget_text": "New note" }),
        &dialog,
        "lost",
        task,
    )
    .await;
    let ended = call(&atlas, &tools, "end_session", serde_json::json!({ "app_id": "notes", "session_id": "lost", "intent": task, "finished": false })).await;
    assert_eq!(
        (ended["updated"].as_bool(), ended["steps"].as_u64()),
        (Some(true), Some(1)),
        "{ended}"
    );
    let asked = next(&atlas, &tools, &list, task, "next").await;
    assert_ne!(
        asked["basis"], "memory",
        "a failed session was replayed: {asked}"
    );

    // An agent that tapped something that did nothing, then the right button, and finished.
    call(&atlas, &tools, "report_transition", serde_json::json!({ "from_page": list, "to_page": list,
        "action": { "type": "click", "widget_text": "Notes" }, "success": false, "reason": "the screen did not change",
        "session_id": "done", "intent": task })).await;
    let settings = page(&atlas, &tools, "notes", "Settings", serde_json::json!([
        { "id": "0", "text": "Settings", "type": "p" }, { "id": "1", "text": "Dark mode", "type": "checkbox" } ])).await;
    step(
        &atlas,
        &tools,
        &list,
        serde_json::json!({ "type": "click", "widget_text": "Settings" }),
        &settings,
        "done",
        task,
    )
    .await;
    call(&atlas, &tools, "end_session", serde_json::json!({ "app_id": "notes", "session_id": "done", "intent": task, "finished": true, "message": "设置已打开" })).await;
    let first = next(&atlas, &tools, &list, task, "again").await;
    assert_eq!(
        (
            first["basis"].as_str(),
            first["action"]["widget_text"].as_str()
        ),
        (Some("memory"), Some("Settings")),
        "{first}"
    );
    // This agent reads the widget's id off its dump as well: the same widget, the same step of
    // the remembered way, and the same edge.
    step(
        &atlas,
        &tools,
        &list,
        serde_json::json!({ "type": "click", "widget": "btn_settings", "widget_text": "Settings" }),
        &settings,
        "again",
        task,
    )
    .await;
    let end = next(&atlas, &tools, &settings, task, "again").await;
    assert_eq!(
        (end["is_complete"].as_bool(), end["basis"].as_str()),
        (Some(true), Some("memory")),
        "{end}"
    );
    assert!(end["confidence"].as_f64().is_some_and(|c| c > 0.9), "{end}");
    assert_eq!(
        end["finish_message"], "设置已打开",
        "the agent's own words: {end}"
    );
    let actions = call(
        &atlas,
        &tools,
        "get_available_actions",
        serde_json::json!({ "page_id": list }),
    )
    .await;
    let to_settings: Vec<_> = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["target_page_id"] == settings.as_str())
        .collect();
    assert_eq!(to_settings.len(), 1, "one widget, one edge: {actions}");
    assert_eq!(to_settings[0]["widget_text"], "Settings");

    // A session with no steps has nothing to mark; bad input changes nothing.
    let none = call(&atlas, &tools, "end_session", serde_json::json!({ "app_id": "notes", "session_id": "empty", "intent": task, "finished": true })).await;
    assert_eq!(none["updated"], false, "{none}");
    let bad = tools.get("end_session").unwrap().call(atlas.clone(), serde_json::json!({ "app_id": "notes", "session_id": "", "intent": task, "finished": true })).await;
    assert!(bad.is_err_and(|e| e.code() == atlas_model::ErrorCode::InvalidParameter));
}

async fn an_unknown_task_is_grounded_in_labels_or_left_unsure(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let (list, _) = notes_app(&atlas, &tools).await;
    // No memory of this task: the one label that says it is the answer.
    let settings = likeliest(&atlas, &tools, &list, "open the settings", "s1").await;
    assert_eq!(settings["action"]["widget_text"], "Settings", "{settings}");
    // Nothing says this one: no action and not complete, so the agent asks its LLM.
    let unsure = next(&atlas, &tools, &list, "share the weather forecast", "s2").await;
    assert!(
        unsure["action"].is_null() && unsure["is_complete"] == false,
        "{unsure}"
    );

    // A goal one page away: the first step of the way there, though its label says nothing.
    let settings = page(&atlas, &tools, "notes", "Settings page", serde_json::json!([
        { "id": "0", "text": "Font size<br>100%", "type": "button" }, { "id": "1", "text": "Max reminder duration<br>5 minutes", "type": "button" },
        { "id": "2", "text": "Max reminder duration<br>5 minutes", "type": "button" } ])).await;
    call(&atlas, &tools, "report_transition", serde_json::json!({ "from_page": list, "to_page": settings, "action": { "type": "click", "widget_text": "Settings" }, "success": true })).await;
    let first = likeliest(&atlas, &tools, &list, "make the font size bigger", "s3").await;
    assert_eq!(first["action"]["widget_text"], "Settings", "{first}");
    // Two settings of the same name: the instruction cannot tell which.
    let twice = next(
        &atlas,
        &tools,
        &settings,
        "change max reminder duration to 1 minute",
        "s4",
    )
    .await;
    assert!(
        twice["action"].is_null() && twice["is_complete"] == false,
        "{twice}"
    );
    // A task like one that ends on this page (a registered intent worded a little otherwise):
    // standing here says where it ends, not that it is done. Once the session has acted here,
    // the way's end is the end.
    let task = "change max reminder duration to 1 minute";
    call(&atlas, &tools, "register_intent", serde_json::json!({ "app_id": "notes", "intent_text": "change the max reminder duration to 1 minute", "target_page": settings })).await;
    let arrived = next(&atlas, &tools, &settings, task, "s5").await;
    assert!(
        arrived["action"].is_null() && arrived["is_complete"] == false,
        "{arrived}"
    );
    let font = serde_json::json!({ "type": "click", "widget_text": "Font size<br>100%" });
    step(&atlas, &tools, &settings, font, &settings, "s5", task).await;
    let acted = next(&atlas, &tools, &settings, task, "s5").await;
    assert_eq!(
        (acted["is_complete"].as_bool(), acted["basis"].as_str()),
        (Some(true), Some("path")),
        "{acted}"
    );
}

async fn device_dumps_are_read_into_widgets_and_match_their_page(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let xml = |count: &str| {
        format!(
            r#"<hierarchy rotation="0"><node class="android.widget.FrameLayout" text="" resource-id="" content-desc="" clickable="false" bounds="[0,0][1080,2400]">
        <node class="android.widget.TextView" text="购物车" resource-id="com.shop:id/title" content-desc="" clickable="false" bounds="[0,0][1080,100]"/>
        <node class="android.widget.TextView" text="{count} 件" resource-id="com.shop:id/count" content-desc="" clickable="false" bounds="[0,100][1080,200]"/>
        <node class="android.widget.Button" text="去结算" resource-id="com.shop:id/checkout" content-desc="" clickable="true" bounds="[0,200][1080,300]"/></node></hierarchy>"#
        )
    };
    let added = call(&atlas, &tools, "add_page", serde_json::json!({ "app_id": "shop", "page_name": "购物车", "ui_hierarchy": { "dump": xml("3") } })).await;
    let page = added["page_id"].as_str().unwrap().to_string();
    // The same screen with another count, as the device dumps it: the same page.
    let matched = call(&atlas, &tools, "match_current_page", serde_json::json!({ "app_id": "shop", "ui_hierarchy": { "dump": xml("5"), "dump_format": "uiautomator" } })).await;
    assert_eq!(matched["matched"], true, "{matched}");
    assert_eq!(matched["page"]["page_id"], page.as_str());
    // A HarmonyOS dump of another screen does not.
    let harmony = r#"{"attributes": {"type": "root"}, "children": [{"attributes": {"type": "Text", "id": "title", "text": "设置"}, "children": []}]}"#;
    let other = call(
        &atlas,
        &tools,
        "match_current_page",
        serde_json::json!({ "app_id": "shop", "ui_hierarchy": { "dump": harmony } }),
    )
    .await;
    assert_eq!(other["matched"], false, "{other}");
    // A broken dump is a parameter error and changes nothing.
    let broken = tools.get("add_page").unwrap().call(atlas.clone(), serde_json::json!({ "app_id": "shop", "page_name": "坏", "ui_hierarchy": { "dump": "<hierarchy><node" } })).await;
    assert_eq!(
        broken.unwrap_err().code(),
        atlas_model::ErrorCode::InvalidParameter
    );
    assert_eq!(
        atlas
            .get_graph_stats(GraphStatsRequest {
                app_id: Some("shop".into())
            })
            .unwrap()
            .pages,
        1
    );
}

async fn a_screen_in_another_rendering_is_matched_by_what_it_shows(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    // Taught from DroidTask-style HTML: elements numbered, a row's texts joined, a Back key.
    let html = |rows: &[&str]| {
        let mut widgets: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, text)| serde_json::json!({ "id": i.to_string(), "text": text, "type": "button" }))
            .collect();
        widgets.push(serde_json::json!({ "id": rows.len().to_string(), "text": "go back", "type": "button" }));
        serde_json::Value::from(widgets)
    };
    let colors = page(
        &atlas,
        &tools,
        "launcher",
        "Customize colors",
        html(&[
            "Customize colors",
            "Theme<br>Dark",
            "Text color",
            "Background color",
            "Primary color",
            "App icon color",
        ]),
    )
    .await;
    let settings = page(
        &atlas,
        &tools,
        "launcher",
        "Settings",
        html(&[
            "Settings",
            "COLOR CUSTOMIZATION",
            "Customize colors",
            "GENERAL",
            "Language",
        ]),
    )
    .await;
    // The phone's own dump of the colours screen: resource ids and classes, the row's texts
    // apart, an unlabelled icon, no Back key.
    let dump = |texts: &[&str]| {
        let mut widgets =
            vec![serde_json::json!({ "id": "navigate_up", "text": "", "type": "ImageButton" })];
        widgets.extend(texts.iter().enumerate().map(|(i, text)| {
            serde_json::json!({ "id": format!("com.launcher:id/row_{i}"), "text": text, "type": "TextView" })
        }));
        serde_json::json!({ "app_id": "launcher", "ui_hierarchy": { "widgets": widgets } })
    };
    let phone = dump(&[
        "Customize colors",
        "Theme",
        "Dark",
        "Text color",
        "Background color",
        "Primary color",
        "App icon color",
    ]);
    let matched = call(&atlas, &tools, "match_current_page", phone.clone()).await;
    assert_eq!(matched["page"]["page_id"], colors.as_str(), "{matched}");
    let other = call(
        &atlas,
        &tools,
        "match_current_page",
        dump(&[
            "Settings",
            "COLOR CUSTOMIZATION",
            "Customize colors",
            "GENERAL",
            "Language",
            "About",
        ]),
    )
    .await;
    assert_eq!(other["page"]["page_id"], settings.as_str(), "{other}");
    // A page of the phone's own rendering much like it (the screen with a Save button) does not
    // take the screen from its page: a screen taken for a page is that page again.
    let mut edited = phone["ui_hierarchy"]["widgets"].as_array().unwrap().clone();
    edited.push(
        serde_json::json!({ "id": "com.launcher:id/save", "text": "Save", "type": "Button" }),
    );
    let edited = page(
        &atlas,
        &tools,
        "launcher",
        "Customize colors, edited",
        edited.into(),
    )
    .await;
    let matched = call(&atlas, &tools, "match_current_page", phone.clone()).await;
    assert_eq!(matched["page"]["page_id"], colors.as_str(), "{matched}");
    assert_ne!(colors, edited);
    // A screen that shares a label or two with a page is not that page in any rendering.
    let unlike = call(
        &atlas,
        &tools,
        "match_current_page",
        dump(&["Settings", "Wallpaper", "Sounds", "Display", "Battery"]),
    )
    .await;
    assert_eq!(unlike["matched"], false, "{unlike}");
    // Two pages of a list, one row apart, are twins: the screen showing all three rows is the
    // page that has them, though its lead over the other is small. (The fast scroller's letters
    // are one element's lines in one rendering, one text in the other.)
    let contacts = |names: &[&'static str], letters: &'static str| -> Vec<&'static str> {
        let mut rows = vec!["Search", "Sort by", "Filter", "More options"];
        rows.extend(names);
        rows.extend([letters, "Create new contact"]);
        rows
    };
    let three = html(&contacts(&["Alice", "Bob", "Jack"], "A<br>B<br>J"));
    let three = page(&atlas, &tools, "launcher", "Contacts", three).await;
    let two = html(&contacts(&["Alice", "Jack"], "A<br>J"));
    page(&atlas, &tools, "launcher", "Contacts, two", two).await;
    let list = dump(&contacts(&["Alice", "Bob", "Jack"], "A B J"));
    let matched = call(&atlas, &tools, "match_current_page", list).await;
    assert_eq!(matched["page"]["page_id"], three.as_str(), "{matched}");
    // A dialog whose rows nobody named is not numbered either: it is the numbered page's screen
    // in another rendering.
    let alignment = page(
        &atlas,
        &tools,
        "launcher",
        "Alignment",
        html(&["Left", "Center", "Right"]),
    )
    .await;
    let rows: Vec<_> = ["Left", "Center", "Right"]
        .iter()
        .map(|text| serde_json::json!({ "id": "", "text": text, "type": "RadioButton" }))
        .collect();
    let dialog = serde_json::json!({ "app_id": "launcher", "ui_hierarchy": { "widgets": rows } });
    let matched = call(&atlas, &tools, "match_current_page", dialog).await;
    assert_eq!(matched["page"]["page_id"], alignment.as_str(), "{matched}");
    // Matching the dump left the page in its own rendering: its HTML screen is as sure as before.
    let again = call(&atlas, &tools, "match_current_page", serde_json::json!({ "app_id": "launcher", "ui_hierarchy": { "widgets": html(&["Customize colors", "Theme<br>Dark", "Text color", "Background color", "Primary color", "App icon color"]) } })).await;
    assert_eq!(again["page"]["page_id"], colors.as_str(), "{again}");
    assert!(
        again["page"]["confidence"].as_f64().unwrap() >= 0.95,
        "{again}"
    );
}

async fn a_choice_in_a_dialog_is_committed_and_digit_groups_are_not_goals(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let files = page(&atlas, &tools, "files", "Files", serde_json::json!([
        { "id": "0", "text": "Files", "type": "p" }, { "id": "1", "text": "Change view type", "type": "button" }, { "id": "2", "text": "05:00", "type": "button" } ])).await;
    let dialog = page(&atlas, &tools, "files", "View type", serde_json::json!([
        { "id": "0", "text": "Grid", "type": "checkbox" }, { "id": "1", "text": "List", "type": "checkbox" },
        { "id": "2", "text": "Cancel", "type": "button" }, { "id": "3", "text": "OK", "type": "button" } ])).await;
    let intent = "change the view type to grid";
    let open_dialog = likeliest(&atlas, &tools, &files, intent, "s1").await;
    assert_eq!(
        (
            open_dialog["action"]["widget_text"].as_str(),
            open_dialog["basis"].as_str()
        ),
        (Some("Change view type"), Some("labels")),
        "{open_dialog}"
    );
    step(
        &atlas,
        &tools,
        &files,
        serde_json::json!({ "type": "click", "widget_text": "Change view type" }),
        &dialog,
        "s1",
        intent,
    )
    .await;
    let grid = likeliest(&atlas, &tools, &dialog, intent, "s1").await;
    assert_eq!(grid["action"]["widget_text"], "Grid", "{grid}");
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "click", "widget_text": "Grid" }),
        &dialog,
        "s1",
        intent,
    )
    .await;
    // Everything asked is said, but the dialog holds the choice until it is confirmed.
    let confirm = likeliest(&atlas, &tools, &dialog, intent, "s1").await;
    assert_eq!(confirm["action"]["widget_text"], "OK", "{confirm}");
    step(
        &atlas,
        &tools,
        &dialog,
        serde_json::json!({ "type": "click", "widget_text": "OK" }),
        &files,
        "s1",
        intent,
    )
    .await;
    let done = likeliest(&atlas, &tools, &files, intent, "s1").await;
    assert_eq!(
        (done["is_complete"].as_bool(), done["action"].is_null()),
        (Some(true), true),
        "{done}"
    );

    // "00" of "5:00" is not the value the button shows: nothing here says the task.
    let timer = next(&atlas, &tools, &files, "add a new timer of 5:00", "s2").await;
    assert!(
        timer["action"].is_null() && timer["is_complete"] == false,
        "{timer}"
    );
}

async fn values_go_into_the_fields_the_instruction_and_the_last_step_name(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let list = page(&atlas, &tools, "contacts", "Contacts", serde_json::json!([
        { "id": "0", "text": "Contacts", "type": "p" }, { "id": "1", "text": "Create new contact", "type": "button" },
        { "id": "2", "text": "Bob<br>Hey<br>30.06", "type": "button" }, { "id": "3", "text": "Sort by", "type": "button" },
        { "id": "4", "text": "Android<br>3 items", "type": "button" } ])).await;
    let form = page(&atlas, &tools, "contacts", "New contact", serde_json::json!([
        { "id": "0", "text": "First name", "type": "input" }, { "id": "1", "text": "Surname", "type": "input" },
        { "id": "2", "text": "Number", "type": "input" }, { "id": "3", "text": "Save", "type": "button" } ])).await;
    let chat = page(&atlas, &tools, "contacts", "Conversation", serde_json::json!([
        { "id": "0", "text": "Type a message…", "type": "input" }, { "id": "1", "text": "Send", "type": "button" },
        { "id": "2", "text": "More options", "type": "button" }, { "id": "3", "text": "Dial number", "type": "button" },
        { "id": "4", "text": "Attach", "type": "button" }, { "id": "5", "text": "Emoji", "type": "button" } ])).await;
    let rename = page(&atlas, &tools, "contacts", "Rename", serde_json::json!([
        { "id": "0", "text": "Diary", "type": "input" }, { "id": "1", "text": "OK", "type": "button" } ])).await;
    let click = |label: &str| serde_json::json!({ "type": "click", "widget_text": label });

    // A form the last step opened takes the name in its first field...
    let intent = "create a new contact 'Ann', mobile number 12345678900";
    step(
        &atlas,
        &tools,
        &list,
        click("Create new contact"),
        &form,
        "s1",
        intent,
    )
    .await;
    let name = likeliest(&atlas, &tools, &form, intent, "s1").await;
    assert_eq!(
        (
            name["action"]["action_type"].as_str(),
            name["action"]["widget_text"].as_str(),
            name["action"]["input_text"].as_str()
        ),
        (Some("input"), Some("First name"), Some("Ann")),
        "{name}"
    );
    // ...and the number in the field its words name, whatever its place: typed at once, or the
    // field tapped first as people often do, and then typed.
    let typed =
        serde_json::json!({ "type": "input", "widget_text": "First name", "input_text": "Ann" });
    step(&atlas, &tools, &form, typed, &form, "s1", intent).await;
    let mut number = likeliest(&atlas, &tools, &form, intent, "s1").await;
    assert_eq!(number["action"]["widget_text"], "Number", "{number}");
    if number["action"]["action_type"] == "click" {
        step(&atlas, &tools, &form, click("Number"), &form, "s1", intent).await;
        number = likeliest(&atlas, &tools, &form, intent, "s1").await;
    }
    assert_eq!(
        (
            number["action"]["widget_text"].as_str(),
            number["action"]["input_text"].as_str()
        ),
        (Some("Number"), Some("12345678900")),
        "{number}"
    );

    // A field showing the value the instruction replaces takes the new one.
    let renamed = likeliest(
        &atlas,
        &tools,
        &rename,
        "rename the note 'diary' to 'events'",
        "s2",
    )
    .await;
    assert_eq!(
        (
            renamed["action"]["widget_text"].as_str(),
            renamed["action"]["input_text"].as_str()
        ),
        (Some("Diary"), Some("events")),
        "{renamed}"
    );

    // A conversation opened from its row is not a form: the new name is not a message to send.
    let intent = "change the name of the chat with Bob to 'team'";
    step(
        &atlas,
        &tools,
        &list,
        click("Bob<br>Hey<br>30.06"),
        &chat,
        "s3",
        intent,
    )
    .await;
    let chat_answer = likeliest(&atlas, &tools, &chat, intent, "s3").await;
    assert_ne!(chat_answer["action"]["input_text"], "team", "{chat_answer}");
    // The field just tapped is typed in.
    let intent = "send the message 'hello' to Bob";
    step(
        &atlas,
        &tools,
        &list,
        click("Bob<br>Hey<br>30.06"),
        &chat,
        "s4",
        intent,
    )
    .await;
    step(
        &atlas,
        &tools,
        &chat,
        click("Type a message…"),
        &chat,
        "s4",
        intent,
    )
    .await;
    let message = likeliest(&atlas, &tools, &chat, intent, "s4").await;
    assert_eq!(message["action"]["input_text"], "hello", "{message}");

    // Of two labels that say about as much, the one the instruction names first goes first.
    let first = likeliest(
        &atlas,
        &tools,
        &list,
        "open 'android' folder, sort the files by extension",
        "s5",
    )
    .await;
    assert_eq!(
        first["action"]["widget_text"], "Android<br>3 items",
        "{first}"
    );
    // An unsure answer says why.
    let unsure = next(&atlas, &tools, &list, "share the weather forecast", "s6").await;
    assert!(
        unsure["action"].is_null()
            && unsure["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("不确定(")),
        "{unsure}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operators_grounding_model_answers_instead_of_the_shipped_one() {
    let shipped = atlas_navigate::SHIPPED_MODEL;
    let with_threshold = |threshold: f64| {
        let dir = tempfile::tempdir().unwrap();
        let atlas = open(dir.path());
        let mut model = Atlas::read_grounding_model(shipped).unwrap();
        model.threshold = threshold;
        atlas.use_grounding_model(model).unwrap();
        (dir, atlas)
    };
    let tools = registry();
    // The same weights and calibration: the same confidence; the operator's threshold decides.
    let (_keep, always) = with_threshold(0.0);
    let (list, _) = notes_app(&always, &tools).await;
    let sure = next(&always, &tools, &list, "open the settings", "s1").await;
    assert_eq!(sure["action"]["widget_text"], "Settings", "{sure}");
    let (_keep, never) = with_threshold(2.0);
    let (list, _) = notes_app(&never, &tools).await;
    let unsure = next(&never, &tools, &list, "open the settings", "s1").await;
    assert!(unsure["action"].is_null(), "{unsure}");
    assert_eq!(unsure["confidence"], sure["confidence"], "{unsure}");

    // A model of other features, or a second model, is refused.
    let mut other = Atlas::read_grounding_model(shipped).unwrap();
    other.features[0] = "something else".into();
    let refused = never.use_grounding_model(other).unwrap_err();
    assert_eq!(refused.code(), atlas_model::ErrorCode::InvalidParameter);
    let again = never.use_grounding_model(Atlas::read_grounding_model(shipped).unwrap());
    assert!(again.is_err());
    assert!(Atlas::read_grounding_model("{\"features\": []}").is_err());
}

/// Two replicas on one database (PostgreSQL only): what one learns—a task done in a session,
/// an edge that keeps failing—the other's task memory and route cache use once it follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_uses_what_another_replica_learned() {
    let Some(store) = TestStore::postgres() else {
        return;
    };
    let (a, b) = (store.open_atlas(), store.open_atlas());
    let tools = registry();
    let (list, dialog) = notes_app(&a, &tools).await;
    type Done = Box<dyn Fn(&Arc<Atlas>) -> bool>;
    let settled = |what: &'static str, b: Arc<Atlas>, done: Done| async move {
        let started = std::time::Instant::now();
        while !done(&b) {
            assert!(started.elapsed().as_secs() < 20, "{what}: B did not follow");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    let dialog_id = dialog.clone();
    settled(
        "pages",
        b.clone(),
        Box::new(move |b| b.read(|g| g.page(&dialog_id).is_some())),
    )
    .await;

    // A task done and finished on A is replayed from memory on B.
    let taught = "create a note named 'alpha'";
    for (from, action, to) in [
        (
            &list,
            serde_json::json!({ "type": "click", "widget_text": "New note" }),
            &dialog,
        ),
        (
            &dialog,
            serde_json::json!({ "type": "input", "widget_text": "Label", "input_text": "alpha" }),
            &dialog,
        ),
        (
            &dialog,
            serde_json::json!({ "type": "click", "widget_text": "OK" }),
            &list,
        ),
    ] {
        step(&a, &tools, from, action, to, "on-a", taught).await;
    }
    call(&a, &tools, "end_session", serde_json::json!({ "app_id": "notes", "session_id": "on-a", "intent": taught, "finished": true })).await;
    let started = std::time::Instant::now();
    let answer = loop {
        let answer = next(&b, &tools, &list, "create a note named 'beta'", "on-b").await;
        if answer["basis"] == "memory" || started.elapsed().as_secs() > 20 {
            break answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    };
    assert_eq!(answer["basis"], "memory", "{answer}");
    assert_eq!(answer["action"]["widget_text"], "New note", "{answer}");

    // A route B has planned (and remembers) changes when A learns that its edge fails.
    let settings = page(
        &a,
        &tools,
        "notes",
        "Settings",
        serde_json::json!([{ "id": "0", "text": "Dark mode", "type": "checkbox" }]),
    )
    .await;
    let via_menu = page(
        &a,
        &tools,
        "notes",
        "Menu",
        serde_json::json!([{ "id": "0", "text": "Settings", "type": "button" }]),
    )
    .await;
    let report = |from: &str, widget: &str, to: &str, success: bool| serde_json::json!({ "from_page": from, "to_page": to, "action": { "type": "click", "widget_text": widget }, "success": success });
    for _ in 0..3 {
        call(
            &a,
            &tools,
            "report_transition",
            report(&list, "Settings", &settings, true),
        )
        .await;
        call(
            &a,
            &tools,
            "report_transition",
            report(&list, "Menu", &via_menu, true),
        )
        .await;
        call(
            &a,
            &tools,
            "report_transition",
            report(&via_menu, "Settings", &settings, true),
        )
        .await;
    }
    let list2 = list.clone();
    settled(
        "the direct route",
        b.clone(),
        Box::new(move |b| steps_to_settings(b, &list2) == Some(1)),
    )
    .await;
    for _ in 0..20 {
        call(
            &a,
            &tools,
            "report_transition",
            report(&list, "Settings", &settings, false),
        )
        .await;
    }
    let list2 = list.clone();
    settled(
        "the route around the failing edge",
        b.clone(),
        Box::new(move |b| steps_to_settings(b, &list2) == Some(2)),
    )
    .await;

    // The viewer's "reports in the last hour" on B counts the reports made on A.
    let last_hour = |atlas: &Arc<Atlas>| {
        atlas
            .get_graph_stats(GraphStatsRequest {
                app_id: Some("notes".into()),
            })
            .unwrap()
            .by_app[0]
            .reports_last_hour
    };
    let on_a = last_hour(&a);
    assert_eq!(on_a, 32, "three steps of the task, nine and twenty reports");
    settled(
        "the reports of the last hour",
        b.clone(),
        Box::new(move |b| last_hour(b) == on_a),
    )
    .await;
}

/// Two replicas reporting one edge at once, the edge new when the first report arrives (PostgreSQL
/// only): every report counts once in the database and on each replica, whichever replica made
/// it, and the failures' reason and time travel with the counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reports_on_two_replicas_count_once_everywhere() {
    let Some(store) = TestStore::postgres() else {
        return;
    };
    let (a, b) = (store.open_atlas(), store.open_atlas());
    let (list, dialog) = notes_app(&a, &registry()).await;
    let counted = |atlas: &Arc<Atlas>| {
        atlas.read(|g| {
            g.app("notes")
                .and_then(|app| {
                    app.between(&list, &dialog)
                        .find(|t| t.action().widget_text == "Brand new")
                })
                .map(|t| {
                    (
                        t.counts(),
                        t.last_failure_reason().to_string(),
                        t.updated_at(),
                    )
                })
        })
    };
    let started = std::time::Instant::now();
    while b.read(|g| g.page(&dialog).is_none()) {
        assert!(
            started.elapsed().as_secs() < 20,
            "B did not follow the pages"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    const CLIENTS: usize = 6;
    const EACH: usize = 20;
    let mut clients = Vec::new();
    for c in 0..2 * CLIENTS {
        let replica = if c % 2 == 0 { a.clone() } else { b.clone() };
        let (from, to) = (list.clone(), dialog.clone());
        clients.push(tokio::spawn(async move {
            for i in 0..EACH {
                let request = serde_json::from_value(serde_json::json!({
                    "from_page": from, "to_page": to,
                    "action": { "type": "click", "widget_text": "Brand new" },
                    "success": i % 4 != 0, "latency_ms": 100,
                    "reason": format!("timed out ({c}/{i})"),
                }))
                .unwrap();
                replica.report_transition(request).await.unwrap();
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }
    let total = (2 * CLIENTS * EACH) as u64;
    let started = std::time::Instant::now();
    loop {
        let (on_a, on_b) = (counted(&a), counted(&b));
        let done = |c: &Option<(atlas_model::Counts, String, String)>| {
            c.as_ref()
                .is_some_and(|(n, _, _)| n.success + n.fail == total)
        };
        if done(&on_a) && done(&on_b) {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "the replicas did not agree: A {on_a:?}, B {on_b:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The database's own figures, as a replica started now reads them.
    let c = store.open_atlas();
    for (name, replica) in [("A", &a), ("B", &b), ("a new replica", &c)] {
        let (counts, reason, updated_at) = counted(replica).unwrap();
        assert_eq!(counts.fail, total / 4, "{name}: {counts:?}");
        assert_eq!(counts.success, total - total / 4, "{name}: {counts:?}");
        assert_eq!(counts.latency_samples, total, "{name}: {counts:?}");
        assert_eq!(
            counts.latency_total_ms,
            100.0 * total as f64,
            "{name}: {counts:?}"
        );
        assert!(reason.starts_with("timed out ("), "{name}: {reason:?}");
        assert!(!updated_at.is_empty(), "{name}");
    }
}

/// The steps of `query_path` to the notes app's settings from `list`.
fn steps_to_settings(atlas: &Arc<Atlas>, list: &str) -> Option<usize> {
    atlas
        .query_path(QueryPathRequest {
            app_id: "notes".into(),
            intent: "Settings".into(),
            current_page: Some(list.to_string()),
            max_steps: None,
            include_history: None,
        })
        .ok()
        .and_then(|r| r.path)
        .map(|p| p.steps.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_graph_is_drawn_whole_or_around_a_page() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    assert_eq!(
        demo_graph(&atlas).await.unwrap(),
        atlas_service::DemoInstall::Installed
    );
    let request =
        |center: Option<&str>, radius: Option<u32>, max_pages: Option<usize>| AppGraphRequest {
            app_id: DEMO_APP_ID.into(),
            center: center.map(str::to_string),
            radius,
            max_pages,
        };
    let whole = atlas.get_app_graph(request(None, None, None)).unwrap();
    assert!(!whole.truncated);
    assert_eq!(
        (whole.pages.len(), whole.transitions.len()),
        (whole.total_pages, whole.total_transitions)
    );
    let home = whole.home_page.clone().unwrap();
    let depth = |id: &str| whole.pages.iter().find(|p| p.page_id == id).unwrap().depth;
    assert_eq!(depth(&home), Some(0));
    // Every edge leads at most one step deeper than where it starts.
    for t in &whole.transitions {
        if let (Some(from), Some(to)) = (depth(&t.from_page), depth(&t.to_page)) {
            assert!(to <= from + 1, "{t:?}");
        }
    }
    // Around the home page, one step: the home page and its neighbours, and only their edges.
    let near = atlas
        .get_app_graph(request(Some(&home), Some(1), None))
        .unwrap();
    assert!(near.truncated && near.pages.len() < whole.pages.len() && near.pages.len() > 1);
    assert_eq!(near.pages[0].page_id, home);
    let ids: Vec<&str> = near.pages.iter().map(|p| p.page_id.as_str()).collect();
    assert!(
        near.transitions
            .iter()
            .all(|t| ids.contains(&t.from_page.as_str()) && ids.contains(&t.to_page.as_str()))
    );
    assert!(
        near.transitions
            .iter()
            .all(|t| t.from_page == home || t.to_page == home || ids.len() > 2)
    );
    // A page budget keeps the nearest.
    let three = atlas.get_app_graph(request(None, None, Some(3))).unwrap();
    assert_eq!(three.pages.len(), 3);
    assert_eq!(three.pages[0].page_id, home);
    assert!(
        three.pages.iter().all(|p| p.depth <= Some(1)),
        "{:?}",
        three.pages
    );
    // Unknown app or page: the seed's errors.
    let unknown = atlas.get_app_graph(AppGraphRequest {
        app_id: "nope".into(),
        center: None,
        radius: None,
        max_pages: None,
    });
    assert_eq!(
        unknown.unwrap_err().code(),
        atlas_model::ErrorCode::NotFound
    );
    let unknown = atlas.get_app_graph(request(Some("nope"), None, None));
    assert_eq!(
        unknown.unwrap_err().code(),
        atlas_model::ErrorCode::PageNotFound
    );
}

/// A shop explored as a web site: the order page is one kind, seen as order 1 and 2 only.
async fn an_item_a_web_page_names_is_reached_by_its_link_or_its_kinds_address(store: TestStore) {
    let atlas = store.open_atlas();
    let tools = registry();
    let web_page = |name: &str, url: &str, template: Option<&str>| {
        let mut request = serde_json::json!({ "app_id": "shop", "page_name": name, "url": url });
        if let Some(template) = template {
            request["url_template"] = template.into();
        }
        request
    };
    let mut pages = Vec::new();
    for (name, url, template) in [
        ("Shop", "http://shop/", None),
        ("Orders", "http://shop/orders", None),
        (
            "Order 1",
            "http://shop/orders/1",
            Some("http://shop/orders/{id}"),
        ),
    ] {
        let added = call(&atlas, &tools, "add_page", web_page(name, url, template)).await;
        pages.push(added["page_id"].clone());
    }
    let (home, orders, order) = (&pages[0], &pages[1], &pages[2]);
    let link = |text: &str| serde_json::json!({ "type": "click", "widget_text": text });
    for (from, text, to) in [
        (home, "Orders", orders),
        (orders, "1", order),
        (orders, "2", order),
    ] {
        call(&atlas, &tools, "report_transition", serde_json::json!({ "from_page": from, "to_page": to, "action": link(text), "success": true })).await;
    }
    // A template that leaves no item open is refused and changes nothing.
    refusal(
        &atlas,
        &tools,
        "add_page",
        web_page(
            "Order 1",
            "http://shop/orders/1",
            Some("http://shop/orders/7"),
        ),
    )
    .await;
    // A step into a page of another app: that page is not one of the shop's.
    let other = call(
        &atlas,
        &tools,
        "add_page",
        serde_json::json!({ "app_id": "blog", "page_name": "Post 1" }),
    )
    .await;
    let crossed = refusal(&atlas, &tools, "report_transition", serde_json::json!({ "from_page": home, "to_page": other["page_id"], "action": link("Blog"), "success": true })).await;
    assert!(
        matches!(crossed, atlas_model::AtlasError::NotFound(_)),
        "{crossed:?}"
    );
    drop(atlas);
    let atlas = store.open_atlas();
    let path = |intent: &str| {
        let r = atlas
            .query_path(QueryPathRequest {
                app_id: "shop".into(),
                intent: intent.into(),
                current_page: None,
                max_steps: None,
                include_history: None,
            })
            .unwrap();
        assert!(r.success, "{intent}: {}", r.message);
        r.path.unwrap().steps
    };
    // The item the intent names, by the link that names it ...
    let steps = path("打开 order 2");
    let last = steps.last().unwrap();
    assert_eq!(
        (last.widget_text.as_str(), &last.expected_page),
        ("2", &order.as_str().unwrap().to_string())
    );
    // ... else by the kind's address, kept across a restart, with the item filled in.
    let steps = path("order 9");
    let last = steps.last().unwrap();
    assert_eq!(last.action_type, "navigate");
    assert_eq!(last.url.as_deref(), Some("http://shop/orders/9"));
    assert_eq!(steps.len(), 2, "{steps:?}");
    // Nothing but one segment of an address comes from an intent.
    let steps = path("order '../admin'");
    assert!(steps.iter().all(|s| s.url.is_none()), "{steps:?}");
}
