//! Headless Chromium over the DevTools protocol (chromiumoxide): no driver process, one browser,
//! a tab per worker, and the network filter ([`crate::network_filter`]) on its own connection.
//!
//! The explorer's scripts run in an isolated world of their own (`Page.createIsolatedWorld`):
//! they see the page's DOM but not its JavaScript, so a page that redefines `JSON.stringify`,
//! `Element.prototype.getAttribute` or `document.querySelector` changes nothing they read.
//!
//! Text goes in with CDP's `Input.insertText`, which types any script (Chinese included) into the
//! focused field, where synthesised key presses know only a keyboard's keys. Dialogs are answered
//! "cancel" before any page script runs, so a `confirm("Delete?")` the explorer triggers deletes
//! nothing, and a page that asks before it is left is left: no dialog blocks the tab.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CreateIsolatedWorldParams, DialogType, EventJavascriptDialogOpening,
    HandleJavaScriptDialogParams, NavigateParams, StopLoadingParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExecutionContextId};
use chromiumoxide::page::ScreenshotParams;
use futures_util::StreamExt;

use crate::BrowserError;
use crate::network_filter::{NetworkFilter, NetworkPolicy, Refused};
use crate::snapshot::{SNAPSHOT_JS, Snapshot};
use crate::template::document_of;

/// Flags that let Chromium run as root, offline and quietly (no background connections).
const FLAGS: &[&str] = &[
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    // A page left stays gone: its scripts' world is not kept for going back to it.
    "--disable-features=BackForwardCache",
    "--lang=zh-CN,en",
];

/// Runs before every page's own scripts.
const NO_DIALOGS: &str = "window.alert = () => {}; window.confirm = () => false; \
    window.prompt = () => null; window.print = () => {}; window.open = (u) => { if (u) location.href = u; return null; };";

/// How long one browser operation may take before the tab is given up on.
const STEP_LIMIT: Duration = Duration::from_secs(20);

/// How long a navigation may wait for its page to load; then loading is stopped and the page
/// read as it is (an image that never answers does not keep a state away).
const LOAD_LIMIT: Duration = Duration::from_secs(10);

/// The Chromium to run: `ATLAS_CHROMIUM`, else the first of the usual names on the PATH.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ATLAS_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "chrome"];
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

/// Chromium, with its network filter.
pub struct Browser {
    inner: chromiumoxide::Browser,
    driver: tokio::task::JoinHandle<()>,
    filter: Arc<NetworkFilter>,
    /// `--allow-destructive`: WebSockets are not blocked either.
    allow_writes: bool,
    /// A throwaway profile, removed when the browser goes.
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium with the network filter on before any page loads.
    pub async fn launch(executable: &Path, policy: NetworkPolicy) -> Result<Browser, BrowserError> {
        let profile = tempfile::Builder::new()
            .prefix("atlas-explore-profile-")
            .tempdir()?;
        let config = chromiumoxide::BrowserConfig::builder()
            .chrome_executable(executable)
            .new_headless_mode()
            .no_sandbox()
            .window_size(1280, 800)
            .viewport(None)
            .user_data_dir(profile.path())
            .args(FLAGS.iter().copied())
            .build()
            .map_err(BrowserError::Failed)?;
        let (inner, mut handler) = chromiumoxide::Browser::launch(config).await.map_err(|e| {
            BrowserError::Failed(format!("cannot start {}: {e}", executable.display()))
        })?;
        let driver = tokio::spawn(async move { while handler.next().await.is_some() {} });
        // A link to a file is no page, and nothing of a site is saved: a download is refused at
        // once (the tab stays on its page) rather than left pending.
        let deny = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::Deny);
        if let Err(e) = inner.execute(deny).await {
            let mut inner = inner;
            let _ = inner.close().await;
            driver.abort();
            return Err(e.into());
        }
        let allow_writes = policy.allow_writes;
        let filter = match NetworkFilter::start(inner.websocket_address(), policy).await {
            Ok(filter) => Arc::new(filter),
            Err(e) => {
                let mut inner = inner;
                let _ = inner.close().await;
                driver.abort();
                return Err(e);
            }
        };
        Ok(Browser {
            inner,
            driver,
            filter,
            allow_writes,
            _profile: profile,
        })
    }

    /// A new tab. HTTP authentication is the network filter's to answer, never the tab's.
    pub async fn tab(&self) -> Result<Tab, BrowserError> {
        let page = self.inner.new_page("about:blank").await?;
        page.evaluate_on_new_document(NO_DIALOGS).await?;
        let dialogs = tokio::spawn(answer_dialogs(
            page.clone(),
            page.event_listener::<EventJavascriptDialogOpening>()
                .await?,
        ));
        if !self.allow_writes {
            page.evaluate_on_new_document(crate::network_filter::NO_WEBSOCKETS)
                .await?;
        }
        let frame = page.target_id().as_ref().to_string();
        self.filter.add_tab(&frame);
        Ok(Tab {
            page,
            frame,
            dialogs,
            filter: self.filter.clone(),
            world: parking_lot::Mutex::new(None),
        })
    }

    /// Stops the network filter and the browser.
    pub async fn close(mut self) {
        if let Ok(filter) = Arc::try_unwrap(self.filter) {
            filter.stop();
        }
        let _ = self.inner.close().await;
        let _ = self.inner.wait().await;
        self.driver.abort();
    }
}

/// Answers the dialogs that page scripts cannot be kept from opening. A page that asks
/// before it is left (`onbeforeunload`: a wiki's editor with "unsaved changes") is left, as
/// the explorer asked; any other dialog is cancelled. Unanswered, a dialog holds every later
/// navigation of its tab.
async fn answer_dialogs(
    page: chromiumoxide::Page,
    mut dialogs: chromiumoxide::listeners::EventStream<EventJavascriptDialogOpening>,
) {
    while let Some(dialog) = dialogs.next().await {
        let leave = dialog.r#type == DialogType::Beforeunload;
        let _ = page.execute(HandleJavaScriptDialogParams::new(leave)).await;
    }
}

fn browser(e: impl std::fmt::Display) -> BrowserError {
    BrowserError::Failed(e.to_string())
}

/// The Control key, in DevTools' modifier bits.
const CTRL: i64 = 2;

async fn limited<T>(
    what: &str,
    work: impl std::future::Future<Output = Result<T, BrowserError>>,
) -> Result<T, BrowserError> {
    tokio::time::timeout(STEP_LIMIT, work)
        .await
        .map_err(|_| BrowserError::Failed(format!("{what}: no answer in {STEP_LIMIT:?}")))?
}

/// A tab of the browser.
pub struct Tab {
    page: chromiumoxide::Page,
    /// The task that answers its dialogs ([`answer_dialogs`]).
    dialogs: tokio::task::JoinHandle<()>,
    /// Its main frame's id (a page target's id), as the network filter knows the tab.
    frame: String,
    filter: Arc<NetworkFilter>,
    /// The isolated world made in the current document, and which document that was.
    world: parking_lot::Mutex<Option<(u64, ExecutionContextId)>>,
}

impl Tab {
    /// Opens an address. A page still loading after [`LOAD_LIMIT`] is stopped and used as it is.
    pub async fn goto(&self, url: &str) -> Result<(), BrowserError> {
        self.navigate(url, false).await
    }

    /// Follows a link by its address, as clicking it would: the page it leads to once it has
    /// answered, or (a download, a link the site refuses) the page the tab was on.
    pub async fn follow(&self, url: &str) -> Result<(), BrowserError> {
        self.navigate(url, true).await
    }

    /// Goes to an address: waiting for its page to load, or (`answered`) for it to answer. A
    /// tab left on a page that was stopped may hold the next navigation back: one that left the
    /// tab where it was without sending a request is made once more.
    async fn navigate(&self, url: &str, answered: bool) -> Result<(), BrowserError> {
        // What the page still loads (a hanging export, an image that never ends) would hold
        // the next navigation back.
        self.stop_loading().await?;
        let before = self.address().await;
        let sent = self.document();
        self.load(url, answered).await?;
        let after = self.address().await;
        // Asked once more only when no request for it went out: a page that still loaded
        // held it back. One that went out and hangs (an export) would only hang again.
        if self.document() == sent
            && before.is_some()
            && after == before
            && Some(document_of(url)) != before.as_deref().map(document_of)
        {
            tracing::info!("{url} did not start loading: asked again");
            self.load(url, answered).await?;
        }
        Ok(())
    }

    /// Stops whatever the page is still loading.
    async fn stop_loading(&self) -> Result<(), BrowserError> {
        limited("stop loading", async {
            self.page.execute(StopLoadingParams::default()).await?;
            Ok(())
        })
        .await
    }

    /// Where the tab is, if it answers.
    async fn address(&self) -> Option<String> {
        let answer = tokio::time::timeout(Duration::from_secs(2), self.evaluate("location.href"));
        match answer.await {
            Ok(Ok(v)) => v.as_str().map(String::from),
            _ => None,
        }
    }

    /// Waits for a navigation at most [`LOAD_LIMIT`], then stops it and lets what loaded
    /// settle; false when it was stopped.
    async fn within_load_limit(
        &self,
        url: &str,
        navigation: impl std::future::Future<Output = Result<(), chromiumoxide::error::CdpError>>,
    ) -> Result<bool, BrowserError> {
        let loaded = match tokio::time::timeout(LOAD_LIMIT, navigation).await {
            Ok(done) => {
                done?;
                true
            }
            Err(_) => {
                tracing::info!("{url} still loading after {LOAD_LIMIT:?}: stopped");
                self.stop_loading().await?;
                false
            }
        };
        self.settle().await?;
        Ok(loaded)
    }

    /// Loads an address (to its load event, or until it `answered`); false when it was still
    /// loading after [`LOAD_LIMIT`] and stopped.
    async fn load(&self, url: &str, answered: bool) -> Result<bool, BrowserError> {
        if answered {
            let navigate = async {
                self.page
                    .execute(NavigateParams::new(url))
                    .await
                    .map(|_| ())
            };
            self.within_load_limit(url, navigate).await
        } else {
            let navigate = async { self.page.goto(url).await.map(|_| ()) };
            self.within_load_limit(url, navigate).await
        }
    }

    /// Lets this tab post its sign-in form to `action` (the start origin's only) until
    /// [`Tab::end_sign_in`].
    pub fn allow_sign_in(&self, action: &str) {
        self.filter.allow_sign_in(&self.frame, action);
    }

    /// Ends what [`Tab::allow_sign_in`] allowed.
    pub fn end_sign_in(&self) {
        self.filter.end_sign_in(&self.frame);
    }

    /// False once the network filter has stopped.
    pub fn filter_alive(&self) -> bool {
        self.filter.is_alive()
    }

    /// Which document the tab shows: a count of the navigations it made.
    pub fn document(&self) -> u64 {
        self.filter.documents(&self.frame)
    }

    /// The requests the network filter refused this tab since the last call.
    pub fn refused(&self) -> Vec<Refused> {
        self.filter.take_refused(&self.frame)
    }

    /// The requests refused since the last call that `document` made (see [`Tab::document`]),
    /// its frames' and workers' included: what a page an action led to sends as it loads (an
    /// analytics beacon) is not the action's doing, and is left out.
    pub fn refused_by(&self, document: u64) -> Vec<Refused> {
        let mut refused = self.refused();
        refused.retain(|r| r.frame != self.frame || r.document == document);
        refused
    }

    /// Evaluates a script in an isolated world of the page's main frame: the page's DOM, none of
    /// its JavaScript.
    ///
    /// The world is made once per document and kept: a navigation the network filter let through starts
    /// a new document, and a world the browser has since dropped (a navigation within the
    /// page's scripts) is made again.
    async fn evaluate(&self, script: &str) -> Result<serde_json::Value, BrowserError> {
        let document = self.document();
        let kept = (*self.world.lock()).filter(|(d, _)| *d == document);
        let context = match kept {
            Some((_, context)) => context,
            None => self.new_world(document).await?,
        };
        match self.evaluate_in(context, script).await {
            Err(BrowserError::Failed(e)) if e.contains("context") => {
                let context = self.new_world(document).await?;
                self.evaluate_in(context, script).await
            }
            done => done,
        }
    }

    async fn new_world(&self, document: u64) -> Result<ExecutionContextId, BrowserError> {
        let world = self
            .page
            .execute(
                CreateIsolatedWorldParams::builder()
                    .frame_id(self.frame.clone())
                    .world_name("atlas-explore")
                    .build()
                    .map_err(browser)?,
            )
            .await?;
        let context = world.result.execution_context_id;
        *self.world.lock() = Some((document, context));
        Ok(context)
    }

    async fn evaluate_in(
        &self,
        context: ExecutionContextId,
        script: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        let params = EvaluateParams::builder()
            .expression(script)
            .context_id(context)
            .return_by_value(true)
            .await_promise(true)
            .build()
            .map_err(browser)?;
        let value = self
            .page
            .evaluate_expression(params)
            .await
            .map_err(|e| match e {
                // The script's own error, in a line (not the protocol's whole record).
                chromiumoxide::error::CdpError::JavascriptException(details) => {
                    let said = details
                        .exception
                        .as_ref()
                        .and_then(|e| e.description.as_deref())
                        .unwrap_or(&details.text);
                    browser(said.lines().next().unwrap_or_default())
                }
                other => BrowserError::Cdp(other),
            })?;
        Ok(value.value().cloned().unwrap_or(serde_json::Value::Null))
    }

    /// Waits until the document has loaded and scripts had a moment to draw.
    pub async fn settle(&self) -> Result<(), BrowserError> {
        let started = Instant::now();
        tokio::time::sleep(Duration::from_millis(60)).await;
        while started.elapsed() < Duration::from_secs(10) {
            let state =
                tokio::time::timeout(Duration::from_secs(2), self.evaluate("document.readyState"))
                    .await;
            if let Ok(Ok(v)) = state
                && v.as_str() == Some("complete")
            {
                tokio::time::sleep(Duration::from_millis(120)).await;
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Reads the page (in an isolated world, bounded; see `snapshot.js`).
    pub async fn snapshot(&self) -> Result<Snapshot, BrowserError> {
        limited("read the page", async {
            let value = self.evaluate(SNAPSHOT_JS).await?;
            let text = value
                .as_str()
                .ok_or_else(|| browser("the page reader answered no text"))?;
            Ok(Snapshot::parse(text)?)
        })
        .await
    }

    /// The page as a PNG.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        limited("screenshot", async {
            let params = ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .build();
            Ok(self.page.screenshot(params).await?)
        })
        .await
    }

    /// Runs a script that answers a boolean; false when it found nothing to act on.
    async fn run(&self, what: &str, script: String) -> Result<bool, BrowserError> {
        limited(what, async {
            Ok(self.evaluate(&script).await?.as_bool().unwrap_or(false))
        })
        .await
    }

    /// Clicks the element (in this tab: a link's other-window target is dropped).
    pub async fn click(&self, selector: &str) -> Result<bool, BrowserError> {
        let script = format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; \
             el.removeAttribute('target'); el.scrollIntoView({{block: 'center'}}); \
             if (el instanceof HTMLElement) el.click(); \
             else el.dispatchEvent(new MouseEvent('click', {{bubbles: true, cancelable: true, view: window}})); \
             return true; }})()",
            js_string(selector)
        );
        let found = self.run("click", script).await?;
        if found {
            self.settle().await?;
        }
        Ok(found)
    }

    /// Fills a field: a text is typed as a person's keyboard would (any script); a box is
    /// ticked; a list takes its first real option.
    pub async fn fill(
        &self,
        selector: &str,
        kind: &str,
        value: &str,
    ) -> Result<bool, BrowserError> {
        let sel = js_string(selector);
        let script = match kind {
            "checkbox" | "radio" => format!(
                "(() => {{ const el = document.querySelector({sel}); if (!el) return false; el.checked = true; \
                 el.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()"
            ),
            "select-one" | "select-multiple" | "select" => format!(
                "(() => {{ const el = document.querySelector({sel}); if (!el) return false; \
                 const o = [...el.options].find((o) => o.value) || el.options[0]; if (o) el.value = o.value; \
                 el.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})()"
            ),
            _ => format!(
                "(() => {{ const el = document.querySelector({sel}); if (!el) return false; el.focus(); \
                 if ('value' in el) el.value = ''; return document.activeElement === el; }})()"
            ),
        };
        let found = self.run("fill", script).await?;
        if found
            && !matches!(
                kind,
                "checkbox" | "radio" | "select-one" | "select-multiple" | "select"
            )
        {
            // As a person does: everything in the field selected first (an editor that keeps
            // its text outside `value`, a code editor's query, is emptied so too), then typed.
            limited("type", async {
                for kind in [
                    DispatchKeyEventType::RawKeyDown,
                    DispatchKeyEventType::KeyUp,
                ] {
                    let key = DispatchKeyEventParams::builder()
                        .r#type(kind)
                        .modifiers(CTRL)
                        .key("a")
                        .code("KeyA")
                        .windows_virtual_key_code(65)
                        .commands(vec!["selectAll".to_string()])
                        .build()
                        .map_err(BrowserError::Failed)?;
                    self.page.execute(key).await?;
                }
                self.page.execute(InsertTextParams::new(value)).await?;
                Ok(())
            })
            .await?;
        }
        Ok(found)
    }

    /// Sends a form: its submit button when it has one, else `requestSubmit`.
    pub async fn submit(&self, form: &str, button: Option<&str>) -> Result<bool, BrowserError> {
        let sent = match button {
            Some(b) => self.click(b).await?,
            None => {
                let script = format!(
                    "(() => {{ const f = document.querySelector({}); if (!f) return false; f.requestSubmit(); return true; }})()",
                    js_string(form)
                );
                self.run("submit", script).await?
            }
        };
        if sent {
            self.settle().await?;
        }
        Ok(sent)
    }

    /// Scrolls one screen down (true once the page ran the scroll).
    pub async fn scroll(&self) -> Result<bool, BrowserError> {
        let found = self
            .run(
                "scroll",
                "(() => { window.scrollBy(0, window.innerHeight); return true; })()".into(),
            )
            .await?;
        self.settle().await?;
        Ok(found)
    }

    /// Closes the tab.
    pub async fn close(self) {
        self.dialogs.abort();
        let _ = self.page.close().await;
    }
}

/// A Rust string as a JavaScript string literal.
pub fn js_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}
