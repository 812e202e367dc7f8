//! The DroidTask evaluation must not let the task under test teach the graph before its steps are
//! asked: an agent meets a screen only when it gets there.

use std::path::Path;
use std::sync::{Arc, Mutex};

use atlas_agent::{CallError, ToolCaller};
use atlas_registry::ServiceCaller;
use atlas_service::{Atlas, CheckpointPolicy};
use atlas_store_fs::FsStore;
use atlas_text::HashEmbedder;
use serde_json::Value;

/// Passes calls on to the service and, before every `get_next_action`, notes which of the
/// watched labels some page of the graph already shows.
struct Watching {
    inner: ServiceCaller,
    atlas: Arc<Atlas>,
    watched: Vec<&'static str>,
    seen_before_asking: Mutex<Vec<Vec<&'static str>>>,
}

impl ToolCaller for Watching {
    fn call(&self, tool: &str, input: Value) -> Result<Value, CallError> {
        if tool == "get_next_action" {
            let known: Vec<&'static str> = self
                .watched
                .iter()
                .copied()
                .filter(|label| {
                    self.atlas.read(|g| {
                        // The app under test; the evaluation's page-identity count teaches
                        // everything under an app id of its own.
                        g.apps()
                            .filter(|app| !app.app_id().ends_with(".identity"))
                            .any(|app| {
                                app.pages()
                                    .iter()
                                    .any(|p| p.widgets.iter().any(|w| w.text == *label))
                            })
                    })
                })
                .collect();
            self.seen_before_asking.lock().unwrap().push(known);
        }
        self.inner.call(tool, input)
    }
}

fn record(choice: i64, input: &str, state: &str) -> String {
    format!(
        "- Choice: {choice}\n  Input: {input}\n  State: {}\n  new_state_str: x\n",
        serde_json::to_string(state).unwrap()
    )
}

/// One app whose only task walks through two screens nothing else shows.
fn write_app(root: &Path) {
    let home = "<p id=0>Notes</p>\n <button id=1 text='Settings'></button>\n <button id=2>go back</button>";
    let first = "<p id=0>Secret first</p>\n <button id=1 text='Deeper'></button>\n <button id=2>go back</button>";
    let second = "<p id=0>Secret second</p>\n <button id=1 text='Hidden switch'></button>\n <button id=2>go back</button>";
    std::fs::create_dir_all(root.join("raw_utgs")).unwrap();
    std::fs::create_dir_all(root.join("user_tasks/notes")).unwrap();
    std::fs::write(
        root.join("raw_utgs/notes.yaml"),
        format!(
            "records:\n{}{}",
            record(2, "'null'", home),
            record(-1, "'null'", home)
        ),
    )
    .unwrap();
    let task = format!(
        "records:\n{}{}{}step_num: 3\ntask_name: open settings and flip the hidden switch\n",
        record(1, "'null'", home),
        record(1, "'null'", first),
        record(-1, "'null'", second)
    );
    std::fs::write(root.join("user_tasks/notes/task1.yaml"), task).unwrap();
}

#[test]
fn the_task_under_test_leaves_no_trace_before_its_steps_are_asked() {
    let dir = tempfile::tempdir().unwrap();
    write_app(&dir.path().join("bench"));
    let apps = atlas_import::droidtask::read_all(&dir.path().join("bench")).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let store = Arc::new(FsStore::open(&dir.path().join("data")).unwrap());
    let atlas = Atlas::open(
        store,
        Arc::new(HashEmbedder::default()),
        CheckpointPolicy::default(),
    )
    .unwrap();
    let caller = Watching {
        inner: ServiceCaller::new(atlas.clone(), runtime.handle().clone()),
        atlas,
        watched: vec!["Deeper", "Hidden switch"],
        seen_before_asking: Mutex::new(Vec::new()),
    };
    let report =
        atlas_eval::droidtask::evaluate(&caller, &apps, "t.", &atlas_progress::Quiet).unwrap();
    assert_eq!(report.total.all.steps, 3);
    let seen = caller.seen_before_asking.into_inner().unwrap();
    // Step 0 is asked on the home screen: neither secret screen may be known yet; step 1 on the
    // first secret screen: the second not yet; step 2 on the second.
    assert_eq!(
        seen,
        vec![vec![], vec!["Deeper"], vec!["Deeper", "Hidden switch"]],
        "labels known to the graph before each step was asked"
    );
}
