//! Long work on a terminal and off one: the binary's standard error on a pseudo-terminal shows
//! the stages and a counted bar; piped, it holds only the summary line; standard output holds
//! the answer either way.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::DiesWithTest;

/// What a run printed: its standard output, and its standard error as the terminal (or pipe)
/// received it.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `atlas args` with standard error on a new pseudo-terminal (120 columns) when
/// `terminal`, else on a pipe.
fn atlas(args: &[&str], terminal: bool) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_atlas"));
    command
        .args(args)
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if !terminal {
        let out = command.stderr(Stdio::piped()).output().unwrap();
        return Run {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into(),
            stderr: String::from_utf8_lossy(&out.stderr).into(),
        };
    }
    let (leader, follower) = pseudo_terminal();
    let mut child = command
        .stderr(Stdio::from(follower))
        .dies_with_test()
        .spawn()
        .unwrap();
    // The command holds the parent's copy of the follower: without it the child's is the only
    // one, and reading ends when the child exits.
    drop(command);
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(leader);
        let mut seen = Vec::new();
        let mut chunk = [0u8; 4096];
        // Linux answers EIO once the last follower descriptor is closed.
        while let Ok(n) = file.read(&mut chunk) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&chunk[..n]);
        }
        seen
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let seen = reader.join().unwrap();
    Run {
        ok: status.success(),
        stdout,
        stderr: String::from_utf8_lossy(&seen).into(),
    }
}

/// A new pseudo-terminal of 120 columns: its leader, and its follower opened as a terminal is.
/// Both are closed on exec, so the children other tests start meanwhile do not keep the
/// follower open.
fn pseudo_terminal() -> (OwnedFd, OwnedFd) {
    use std::os::unix::fs::OpenOptionsExt;
    // SAFETY: posix_openpt opens a new descriptor or returns -1; it is owned here alone.
    let leader = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    assert!(
        leader >= 0,
        "no pseudo-terminal: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: as above.
    let leader = unsafe { OwnedFd::from_raw_fd(leader) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the descriptor is a pseudo-terminal leader; the name fits the buffer given.
    unsafe {
        assert_eq!(libc::grantpt(leader.as_raw_fd()), 0);
        assert_eq!(libc::unlockpt(leader.as_raw_fd()), 0);
        assert_eq!(
            libc::ptsname_r(leader.as_raw_fd(), name.as_mut_ptr(), name.len()),
            0
        );
    }
    // SAFETY: ptsname_r wrote a NUL-terminated path.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let follower = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(name.to_str().unwrap())
        .unwrap();
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize from the pointer given.
    unsafe { libc::ioctl(follower.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    (leader, OwnedFd::from(follower))
}

/// The line of `text` (a pipe's standard error) that starts with `start`.
fn summary_line<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starting {start:?} in {text:?}"))
}

fn assert_plain(run: &Run, what: &str) {
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\r'),
        "{what}: no terminal control off a terminal: {:?}",
        run.stderr
    );
}

#[test]
fn long_work_shows_its_stages_on_a_terminal_and_a_summary_line_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();

    // An import: its stages on the terminal, the answer on standard output.
    let import = atlas(
        &["import", "synthetic", "--data", data, "--pages", "3000"],
        true,
    );
    assert!(import.ok, "{}", import.stderr);
    assert!(
        import.stderr.contains("generating 3000 pages"),
        "{:?}",
        import.stderr
    );
    assert!(
        import.stderr.contains('\u{1b}'),
        "a bar is drawn and cleared"
    );
    assert!(import.stderr.contains("imported synthetic.app: 3000 pages"));
    let summary: Value = serde_json::from_str(&import.stdout).expect("the answer stays JSON");
    assert!(summary.is_object());

    // A migration counts the records it writes.
    let to = dir.path().join("copy");
    let migrate = atlas(
        &["migrate", "--from", data, "--to", to.to_str().unwrap()],
        true,
    );
    assert!(migrate.ok, "{}", migrate.stderr);
    let copied: Value = serde_json::from_str(&migrate.stdout).unwrap();
    let records = 1 + ["pages", "intents", "transitions", "traces"]
        .iter()
        .map(|k| copied[k].as_u64().unwrap())
        .sum::<u64>();
    assert!(
        migrate.stderr.contains(&format!("/{records}")),
        "a bar counts the {records} records: {:?}",
        migrate.stderr
    );
    assert!(migrate.stderr.contains("copied 1 apps, 3000 pages"));

    // Off a terminal: the summary alone, plain.
    let again = atlas(
        &[
            "migrate",
            "--from",
            data,
            "--to",
            dir.path().join("again").to_str().unwrap(),
        ],
        false,
    );
    assert!(again.ok, "{}", again.stderr);
    assert_plain(&again, "migrate");
    assert!(!again.stderr.contains("writing"), "{:?}", again.stderr);
    let line = summary_line(&again.stderr, "copied 1 apps, 3000 pages");
    assert!(line.ends_with(" s"), "the summary says how long: {line}");
    assert_eq!(
        serde_json::from_str::<Value>(&again.stdout).unwrap(),
        copied
    );
}

/// A new dataset named `name` in the data folder `data`; its id.
fn create_dataset(data: &str, name: &str) -> String {
    let created = atlas(&["kb", "create", "--data", data, name], false);
    assert!(created.ok, "{}", created.stderr);
    let dataset: Value = serde_json::from_str(&created.stdout).unwrap();
    dataset["id"].as_str().unwrap().to_string()
}

#[test]
fn a_large_document_and_an_evaluation_show_progress_too() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let id = &create_dataset(data, "手册");
    let document = dir.path().join("manual.md");
    let text: String = (0..2000)
        .map(|i| {
            format!("## 第 {i} 节\n\n如何退货 {i}：在订单页点“申请售后”。Returns, part {i}.\n\n")
        })
        .collect();
    std::fs::write(&document, text).unwrap();
    let path = document.to_str().unwrap();

    let add = |terminal: bool, embedder: &str| {
        atlas(
            &[
                "kb",
                "add",
                "--data",
                data,
                "--embedder",
                embedder,
                id,
                path,
            ],
            terminal,
        )
    };
    let shown = add(true, "hash");
    assert!(shown.ok, "{}", shown.stderr);
    assert!(
        shown.stderr.contains("splitting the document"),
        "{:?}",
        shown.stderr
    );
    assert!(
        shown
            .stderr
            .contains(&format!("added manual.md to dataset {id}"))
    );
    let plain = add(false, "hash");
    assert!(plain.ok, "{}", plain.stderr);
    assert_plain(&plain, "kb add");
    let line = summary_line(&plain.stderr, "added manual.md");
    let segments: Value = serde_json::from_str(&plain.stdout).unwrap();
    assert!(
        line.contains(&format!("{} segments", segments["segment_count"])),
        "{line}"
    );

    // With a model, each segment embedded is counted (e5 where it is installed), in a folder of
    // its own: opening a knowledge base embeds what it holds.
    let small = dir.path().join("small.md");
    let text: String = (0..12)
        .map(|i| format!("## 问题 {i}\n\n答案 {i}：请联系客服。\n\n"))
        .collect();
    std::fs::write(&small, text).unwrap();
    let modelled = dir.path().join("modelled");
    let modelled = modelled.to_str().unwrap();
    let id = &create_dataset(modelled, "问答");
    let add_with_e5 = |file: &std::path::Path| {
        let args = ["kb", "add", "--data", modelled, "--embedder", "e5", id];
        let mut args = args.to_vec();
        args.push(file.to_str().unwrap());
        atlas(&args, true)
    };
    let e5 = add_with_e5(&small);
    if e5.ok {
        let added: Value = serde_json::from_str(&e5.stdout).unwrap();
        let n = added["segment_count"].as_u64().unwrap();
        assert!(e5.stderr.contains("embedding segments"), "{:?}", e5.stderr);
        assert!(e5.stderr.contains(&format!("/{n}")), "{:?}", e5.stderr);
        // The next opening takes those vectors from the file beside the dataset: only the new
        // document's segments are embedded.
        let ten = dir.path().join("ten.md");
        let text: String = (0..10)
            .map(|i| format!("## 发票 {i}\n\n开票说明 {i}。\n\n"))
            .collect();
        std::fs::write(&ten, text).unwrap();
        let next = add_with_e5(&ten);
        assert!(next.ok, "{}", next.stderr);
        let added: Value = serde_json::from_str(&next.stdout).unwrap();
        let m = added["segment_count"].as_u64().unwrap();
        assert_ne!(m, n);
        assert!(next.stderr.contains(&format!("/{m}")), "{:?}", next.stderr);
        assert!(!next.stderr.contains(&format!("/{n}")), "{:?}", next.stderr);
        // Without the file, opening embeds them all again, and says so.
        let kept = std::path::Path::new(modelled)
            .join("kb")
            .join(id)
            .join("vectors.image");
        std::fs::remove_file(&kept).unwrap();
        let one = dir.path().join("one.md");
        std::fs::write(&one, "## 退货\n\n七天无理由退货。\n").unwrap();
        let reopened = add_with_e5(&one);
        assert!(reopened.ok, "{}", reopened.stderr);
        assert!(reopened.stderr.contains("opening the knowledge bases"));
        let all = format!("/{}", n + m);
        assert!(reopened.stderr.contains(&all), "{:?}", reopened.stderr);
        assert!(kept.is_file(), "kept again");
    } else {
        assert!(
            std::env::var_os("ATLAS_REQUIRE_E5").is_none(),
            "e5 is installed but kb add failed: {}",
            e5.stderr
        );
    }

    // An evaluation: its stages on a terminal, its figures on standard output, a summary.
    let eval = atlas(&["eval", "kb", "--embedder", "hash"], true);
    assert!(eval.ok, "{}", eval.stderr);
    assert!(
        eval.stderr.contains("asking the paraphrases"),
        "{:?}",
        eval.stderr
    );
    assert!(eval.stdout.contains("top-1"));
    assert!(
        eval.stderr
            .contains("asked 2 labelled sets by three methods")
    );
    let piped = atlas(&["eval", "biz", "--embedder", "hash"], false);
    assert!(piped.ok, "{}", piped.stderr);
    assert_plain(&piped, "eval biz");
    summary_line(&piped.stderr, "asked 74 questions");
}

#[test]
fn a_droidtask_evaluation_counts_its_tasks_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("droidtask");
    crate::eval::tiny_droidtask(&bench);
    let shown = atlas(&["eval", "droidtask", bench.to_str().unwrap()], true);
    assert!(shown.ok, "{}", shown.stderr);
    assert!(
        shown
            .stderr
            .contains("notes: each task asked, taught the others"),
        "{:?}",
        shown.stderr
    );
    assert!(
        shown.stderr.contains("/2"),
        "two tasks counted: {:?}",
        shown.stderr
    );
    assert!(shown.stdout.contains("total"));
    let plain = atlas(&["import", "droidtask", "--data"], false);
    assert!(!plain.ok, "a missing argument is still an error");
    let data = dir.path().join("data");
    let import = atlas(
        &[
            "import",
            "droidtask",
            "--data",
            data.to_str().unwrap(),
            bench.to_str().unwrap(),
        ],
        false,
    );
    assert!(import.ok, "{}", import.stderr);
    assert_plain(&import, "import droidtask");
    summary_line(&import.stderr, "imported 1 apps");
}
