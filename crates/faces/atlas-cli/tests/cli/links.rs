//! Nothing is written or read outside the data folder through links, and no file a client
//! names is echoed back.

use std::process::Command;

use serde_json::json;

use crate::common::*;

/// A page's folder replaced by a link to a folder outside: checkpoints write nothing there,
/// `fsck` reports the link, and `fsck --repair` makes the page's folder again.
#[test]
fn a_page_folder_replaced_by_a_link_takes_no_write_and_fsck_repairs_it() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let server = Server::start(&data, &[]);
    let (_, home) = server.call(
        "add_page",
        json!({"app_id": "com.links", "page_name": "首页", "page_type": "home"}),
    );
    let (_, detail) = server.call(
        "add_page",
        json!({"app_id": "com.links", "page_name": "详情"}),
    );
    let report = |server: &Server, text: &str| {
        let (status, body) = server.call(
            "report_transition",
            json!({"from_page": detail["page_id"], "to_page": home["page_id"],
                   "action": {"type": "click", "widget_text": text}, "success": true}),
        );
        assert_eq!(status, 200, "{body}");
    };
    report(&server, "返回");
    server.stop();
    let app = data.join("apps").join("com_links");
    let page = std::fs::read_dir(&app)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().ends_with("详情"))
        .expect("the page's folder");
    std::fs::remove_dir_all(&page).unwrap();
    std::os::unix::fs::symlink(&outside, &page).unwrap();

    let server = Server::start(&data, &[]);
    report(&server, "关闭");
    let (status, _) = server.call(
        "add_page",
        json!({"app_id": "com.links", "page_name": "详情", "description": "改过的说明"}),
    );
    assert_eq!(status, 200);
    server.stop();
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "a checkpoint wrote through the link"
    );

    let (clean, out) = fsck(&data);
    assert!(!clean && out.contains("symbolic link"), "{out}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let repaired = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["fsck", "--repair", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&repaired.stdout);
    assert!(said.contains("replaced the link"), "{said}");
    assert!(page.is_dir() && !page.is_symlink() && page.join("meta.json").is_file());
    let (clean, out) = fsck(&data);
    assert!(clean, "{out}");
    // The graph kept both reports and the new description meanwhile.
    let server = Server::start(&data, &[]);
    let (_, actions) = server.call(
        "get_available_actions",
        json!({"page_id": detail["page_id"]}),
    );
    assert_eq!(actions["actions"].as_array().unwrap().len(), 2, "{actions}");
    server.stop();
    let meta = std::fs::read_to_string(page.join("meta.json")).unwrap();
    assert!(meta.contains("改过的说明"), "{meta}");
}

/// A suite whose test names `/etc/passwd` (or a FIFO) as its rules: refused with the path,
/// without its content, and without waiting on the FIFO.
#[test]
fn a_rules_path_to_a_system_file_or_a_fifo_is_refused_without_its_content() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("rules.fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (rules, said) in [
        ("/etc/passwd".to_string(), "not a rule set"),
        (fifo.display().to_string(), "not a regular file"),
    ] {
        let suite = tmp.path().join("suite.yaml");
        std::fs::write(
            &suite,
            format!(
                "name: hostile\napp: com.example\ntests:\n  - name: one\n    task: 打开设置\n    rules: {rules}\n    expect: {{finish: true}}\n"
            ),
        )
        .unwrap();
        let started = std::time::Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(["test", "run"])
            .arg(&suite)
            .args(["--devices", "sim:127.0.0.1:1", "--data"])
            .arg(tmp.path().join("data"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(text.contains(said), "{text}");
        assert!(
            !text.contains("root:"),
            "the file's content was echoed: {text}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
}
