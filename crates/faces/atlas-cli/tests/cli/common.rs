//! Helpers the tests of the binary share: a server on loopback, requests to it, `atlas
//! model-sim`, fsck.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use atlas_wiring::testing::http::*;
use serde_json::Value;

/// Sends `signal` to a child of the test (one not yet waited for).
pub fn send_signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid, which has not been waited for yet.
    unsafe { libc::kill(child.id() as i32, signal) };
}

/// `atlas fsck` on a folder: whether it is clean, and what it said.
pub fn fsck(data: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["fsck", "--data"])
        .arg(data)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// A process a test starts that dies with the test's thread, however the test ends: a test
/// killed by a timeout leaves no server or phone running behind it (Linux's parent-death signal).
pub trait DiesWithTest {
    /// Asks for SIGKILL when the thread that starts the process ends.
    fn dies_with_test(&mut self) -> &mut Self;
}

impl DiesWithTest for Command {
    fn dies_with_test(&mut self) -> &mut Self {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe, and the closure touches nothing else between fork
        // and exec.
        unsafe {
            self.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        }
    }
}

pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Server {
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Server::start_logging(data, extra, Stdio::null())
    }

    /// [`Server::start`], its standard error (its log) going to `log`.
    pub fn start_logging(data: &Path, extra: &[&str], log: impl Into<Stdio>) -> Server {
        let port = free_port();
        let mut args = vec!["serve", "--data", data.to_str().unwrap(), "--addr"];
        let addr = format!("127.0.0.1:{port}");
        args.push(&addr);
        // The graph on the built-in embedder unless a test says otherwise: these tests are about
        // the routes, and the knowledge bases still take e5 when it is installed (`auto`).
        if !extra.contains(&"--embedder") {
            args.extend_from_slice(&["--embedder", "hash"]);
        }
        args.extend_from_slice(extra);
        let child = Command::new(env!("CARGO_BIN_EXE_atlas"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(log)
            .dies_with_test()
            .spawn()
            .unwrap();
        let server = Server {
            child,
            url: format!("http://{addr}"),
        };
        // Generous: with e5 installed the demo embeds its knowledge base and business graph at
        // start-up, 15 s on two idle cores, several times that on busy ones beside other tests.
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if agent()
                .get(&format!("{}/healthz", server.url))
                .call()
                .is_ok_and(|r| r.status() == 200 || r.status() == 401)
            {
                return server;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not become healthy");
    }

    pub fn stop(mut self) {
        send_signal(&self.child, libc::SIGTERM);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "server did not stop cleanly: {status}");
    }

    pub fn kill9(self) {
        drop(self); // SIGKILL
    }
}

impl Served for Server {
    fn url(&self) -> &str {
        &self.url
    }
}

/// A server a failed test leaves is killed with it.
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `atlas model-sim` on a free port with a script.
pub fn model_sim_playing(script: &Path) -> (Child, String) {
    model_sim_with(&[script.to_str().unwrap()])
}

/// `atlas model-sim ARGS…` on a free port: the process and its base URL once it answers.
pub fn model_sim_with(args: &[&str]) -> (Child, String) {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .arg("model-sim")
        .args(args)
        .args(["--addr", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .dies_with_test()
        .spawn()
        .unwrap();
    let url = format!("http://{addr}");
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if agent()
            .get(&format!("{url}/v1/models"))
            .call()
            .is_ok_and(|r| r.status() == 200)
        {
            return (child, url);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("model-sim did not start");
}

/// Runs `command`, which writes a JSON report to `report`, and reads the report once the
/// command succeeded (else fails with what it printed).
pub fn report_of(command: &mut Command, report: &Path) -> Value {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(report).unwrap()).unwrap()
}

/// Says a test is skipped for want of `what`; under CI, where scripts/test.sh installs it, fails.
pub fn skipped_without(what: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is not installed, and scripts/test.sh installs it"
    );
    eprintln!("skipped: no {what}");
}

/// Whether `command` runs and succeeds (a tool, a Python module, is here); see
/// [`skipped_without`].
pub fn required(command: &mut Command, what: &str) -> bool {
    let here = command.output().is_ok_and(|o| o.status.success());
    if !here {
        skipped_without(what);
    }
    here
}

/// What the variable `var` names, which scripts/test.sh sets once it has installed `what`;
/// none (see [`skipped_without`]) when it is not set.
pub fn installed_at(var: &str, what: &str) -> Option<std::ffi::OsString> {
    let found = std::env::var_os(var);
    if found.is_none() {
        skipped_without(&format!("{what} (set {var})"));
    }
    found
}

/// Whether Debian's `adb` is here (see [`required`]).
pub fn adb_installed() -> bool {
    required(Command::new("adb").arg("version"), "adb")
}

/// Debian's Chromium, or none (see [`skipped_without`]).
pub fn chromium() -> Option<std::path::PathBuf> {
    let found = atlas_browser::find_chromium();
    if found.is_none() {
        skipped_without("chromium");
    }
    found
}

/// The PostgreSQL tests of this binary share one test server, which one of them restarts: each
/// holds the server shared while it runs, the restart holds it alone (without this, a restart cut
/// the connections of whichever test ran beside it).
static TEST_SERVER: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Held by a test that uses the test server as it is.
pub fn sharing_the_test_server() -> std::sync::RwLockReadGuard<'static, ()> {
    TEST_SERVER.read().unwrap_or_else(|e| e.into_inner())
}

/// Held by a test that stops or restarts the test server.
pub fn alone_on_the_test_server() -> std::sync::RwLockWriteGuard<'static, ()> {
    TEST_SERVER.write().unwrap_or_else(|e| e.into_inner())
}
