//! Versions of an app over a real store (a folder and a PostgreSQL database): a release's pages
//! and transitions recorded, what it lacks marked gone and kept, routes planned on the current
//! version, what changed listed, and all of it there again after a restart.

use atlas_api::versions::{DiffPage, VersionSource};
use atlas_model::{AtlasError, Widget};
use atlas_service::*;
use atlas_wiring::testing::TestStore;

atlas_wiring::on_every_store!(
    a_release_keeps_its_history_plans_on_the_current_version_and_lists_its_changes,
    a_version_record_naming_what_is_not_there_changes_nothing
);

const APP: &str = "tracker.example";

fn widgets(texts: &[&str]) -> UiHierarchy {
    UiHierarchy {
        widgets: texts
            .iter()
            .map(|t| Widget {
                id: format!("#{t}"),
                text: t.to_string(),
                widget_type: "a".into(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

async fn page(atlas: &Atlas, name: &str, version: &str, title: &str, texts: &[&str]) -> String {
    atlas
        .add_page(AddPageRequest {
            app_id: APP.into(),
            page_name: name.into(),
            page_type: Some(if name == "Home" { "home" } else { "detail" }.into()),
            ui_hierarchy: Some(widgets(texts)),
            app_version: Some(version.into()),
            title: Some(title.into()),
            intents: match name {
                "Search" => vec!["search issues".into()],
                "About" => vec!["about roundup".into()],
                _ => vec![],
            },
            ..Default::default()
        })
        .await
        .unwrap()
        .page_id
}

async fn step(atlas: &Atlas, from: &str, text: &str, to: &str, version: &str) -> String {
    atlas
        .report_transition(ReportTransitionRequest {
            from_page: from.into(),
            action: ReportedAction {
                action_type: "click".into(),
                widget_text: Some(text.into()),
                ..Default::default()
            },
            to_page: to.into(),
            success: true,
            app_version: Some(version.into()),
            ..Default::default()
        })
        .await
        .unwrap()
        .transition_id
}

/// `query_path` for an intent from the home page, with each earlier version's way or not.
fn ask_path(atlas: &Atlas, intent: &str, history: bool) -> QueryPathResponse {
    atlas
        .query_path(QueryPathRequest {
            app_id: APP.into(),
            intent: intent.into(),
            current_page: None,
            max_steps: None,
            include_history: history.then_some(true),
        })
        .unwrap()
}

fn path_texts(atlas: &Atlas, intent: &str) -> Option<Vec<String>> {
    let r = ask_path(atlas, intent, false);
    assert!(r.history.is_none(), "history only when asked");
    r.path
        .map(|p| p.steps.iter().map(|s| s.widget_text.clone()).collect())
}

/// `query_path`'s history: each earlier version's way, its texts, whether it differs from the
/// current way and which of its steps are gone.
fn path_history(atlas: &Atlas, intent: &str) -> Vec<(String, Vec<String>, bool, Vec<usize>)> {
    ask_path(atlas, intent, true)
        .history
        .expect("asked for")
        .into_iter()
        .map(|v| {
            assert_eq!(v.found, !v.steps.is_empty());
            let texts = v.steps.iter().map(|s| s.widget_text.clone()).collect();
            (v.version, texts, v.differs, v.gone_steps)
        })
        .collect()
}

async fn a_release_keeps_its_history_plans_on_the_current_version_and_lists_its_changes(
    store: TestStore,
) {
    let atlas = store.open_atlas();
    // Release 2.2: Home → Search (its own link), Home → Help; Home → About.
    let home = page(
        &atlas,
        "Home",
        "2.2",
        "Issues",
        &["Search", "Help", "About"],
    )
    .await;
    let search = page(&atlas, "Search", "2.2", "Search", &["Go"]).await;
    let help = page(&atlas, "Help", "2.2", "Help", &["Back"]).await;
    let about = page(&atlas, "About", "2.2", "About", &["Roundup"]).await;
    let direct = step(&atlas, &home, "Search", &search, "2.2").await;
    let to_help = step(&atlas, &home, "Help", &help, "2.2").await;
    let about_link = step(&atlas, &home, "About", &about, "2.2").await;
    assert_eq!(path_texts(&atlas, "search issues").unwrap(), ["Search"]);
    assert!(
        path_history(&atlas, "search issues").is_empty(),
        "one version: no earlier one"
    );

    // Release 2.6: Help is gone; Search moved behind a new menu and shows one more text; About
    // is the same page; nothing was checked on the way from Home to Help.
    let menu = page(&atlas, "Menu", "2.6", "Menu", &["Search"]).await;
    page(&atlas, "Home", "2.6", "Issues", &["Menu", "About"]).await;
    page(
        &atlas,
        "Search",
        "2.6",
        "Search issues",
        &["Go", "Advanced"],
    )
    .await;
    step(&atlas, &home, "Menu", &menu, "2.6").await;
    step(&atlas, &menu, "Search", &search, "2.6").await;
    let recorded = atlas
        .record_app_version(RecordAppVersionRequest {
            app_id: APP.into(),
            version: "2.6".into(),
            source: Some(VersionSource::User),
            seen_transitions: vec![about_link],
            gone_pages: vec![help.clone()],
            gone_transitions: vec![direct.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(recorded.current_version, "2.6");
    assert!(!recorded.new_version, "2.6 came with the pages");
    // add_page named 2.6 first (`reported`); the record says where the name came from.
    let versions = atlas.export_app(APP).unwrap().app.versions;
    assert_eq!(versions[1].version, "2.6");
    assert_eq!(versions[1].source, VersionSource::User);
    assert_eq!(versions[0].source, VersionSource::Reported);
    // Help, its way in, and the direct Search link.
    assert_eq!(recorded.marked_gone, 3, "{recorded:?}");

    // Routes are the current version's; the old way is history, there when asked for.
    assert_eq!(
        path_texts(&atlas, "search issues").unwrap(),
        ["Menu", "Search"]
    );
    assert_eq!(
        path_history(&atlas, "search issues"),
        [("2.2".to_string(), vec!["Search".to_string()], true, vec![1])]
    );
    assert_eq!(
        path_history(&atlas, "about roundup"),
        [("2.2".to_string(), vec!["About".to_string()], false, vec![])],
        "a way the release kept is the same way"
    );
    let actions = atlas
        .get_available_actions(AvailableActionsRequest {
            page_id: home.clone(),
        })
        .unwrap();
    assert_eq!(actions.total_count, 4, "history is kept: {actions:?}");

    let check = |atlas: &Atlas| {
        let diff = atlas
            .get_app_diff(AppDiffRequest {
                app_id: APP.into(),
                ..Default::default()
            })
            .unwrap();
        assert_eq!((diff.from.as_str(), diff.to.as_str()), ("2.2", "2.6"));
        let names = |pages: &[DiffPage]| -> Vec<String> {
            pages.iter().map(|p| p.page_name.clone()).collect()
        };
        assert_eq!(names(&diff.pages.added), ["Menu"]);
        assert_eq!(names(&diff.pages.removed), ["Help"]);
        let mut changed: Vec<&str> = diff
            .pages
            .changed
            .iter()
            .map(|c| c.page.page_name.as_str())
            .collect();
        changed.sort();
        assert_eq!(
            changed,
            ["Home", "Search"],
            "About is the same page: {diff:?}"
        );
        assert_eq!(diff.pages.unchanged, 1);
        let search_change = diff
            .pages
            .changed
            .iter()
            .find(|c| c.page.page_name == "Search")
            .unwrap();
        assert_eq!(search_change.texts_added, ["Advanced"]);
        assert_eq!(
            search_change.title,
            Some(["Search".to_string(), "Search issues".to_string()])
        );
        assert_eq!(diff.intents.path_changed.len(), 1, "{diff:?}");
        assert_eq!(diff.transitions.removed.len(), 2);
        assert_eq!(diff.transitions.added.len(), 2);
        assert_eq!(diff.transitions.kept, 1);
        let stats = atlas
            .get_graph_stats(GraphStatsRequest {
                app_id: Some(APP.into()),
            })
            .unwrap();
        assert_eq!(stats.pages, 5, "nothing is deleted");
    };
    check(&atlas);
    // The journal replayed, then the files folded and read again.
    drop(atlas);
    let atlas = store.open_atlas();
    check(&atlas);
    atlas.checkpoint().unwrap();
    drop(atlas);
    let atlas = store.open_atlas();
    check(&atlas);
    assert_eq!(
        path_texts(&atlas, "search issues").unwrap(),
        ["Menu", "Search"]
    );
    let _ = to_help;
    drop(atlas);
    let report = store.open().check(false).unwrap();
    assert!(report.is_clean(), "{report:?}");

    // Seen again in a later release, a gone page is back.
    let atlas = store.open_atlas();
    page(&atlas, "Help", "2.7", "Help", &["Back"]).await;
    let diff = atlas
        .get_app_diff(AppDiffRequest {
            app_id: APP.into(),
            from_version: Some("2.6".into()),
            to_version: None,
        })
        .unwrap();
    assert_eq!(diff.to, "2.7");
    assert_eq!(diff.pages.added.len(), 1);
    assert_eq!(diff.pages.added[0].page_name, "Help");
}

async fn a_version_record_naming_what_is_not_there_changes_nothing(store: TestStore) {
    let atlas = store.open_atlas();
    let home = page(&atlas, "Home", "1", "Home", &["A"]).await;
    let other = page(&atlas, "Other", "1", "Other", &["B"]).await;
    let unknown = atlas
        .record_app_version(RecordAppVersionRequest {
            app_id: APP.into(),
            version: "2".into(),
            seen_pages: vec![home.clone()],
            gone_pages: vec!["no-such-page".into()],
            ..Default::default()
        })
        .await;
    assert!(
        matches!(unknown, Err(AtlasError::NotFound(_))),
        "{unknown:?}"
    );
    let both = atlas
        .record_app_version(RecordAppVersionRequest {
            app_id: APP.into(),
            version: "2".into(),
            seen_pages: vec![home.clone()],
            gone_pages: vec![home.clone(), other],
            ..Default::default()
        })
        .await;
    assert!(
        matches!(both, Err(AtlasError::InvalidParameter { .. })),
        "{both:?}"
    );
    let blank = atlas
        .record_app_version(RecordAppVersionRequest {
            app_id: APP.into(),
            version: " ".into(),
            ..Default::default()
        })
        .await;
    assert!(blank.is_err());
    let no_app = atlas
        .record_app_version(RecordAppVersionRequest {
            app_id: "nobody".into(),
            version: "2".into(),
            ..Default::default()
        })
        .await;
    assert!(matches!(no_app, Err(AtlasError::NotFound(_))));
    // Nothing of those was written: one version, and nothing to compare.
    let diff = atlas.get_app_diff(AppDiffRequest {
        app_id: APP.into(),
        ..Default::default()
    });
    assert!(
        matches!(&diff, Err(AtlasError::NotFound(m)) if m.contains("one version")),
        "{diff:?}"
    );
    let missing = atlas.get_app_diff(AppDiffRequest {
        app_id: APP.into(),
        from_version: Some("0.9".into()),
        to_version: Some("1".into()),
    });
    assert!(
        matches!(missing, Err(AtlasError::NotFound(_))),
        "{missing:?}"
    );
}
