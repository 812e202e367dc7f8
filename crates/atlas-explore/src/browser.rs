//! Headless Chromium over the DevTools protocol (chromiumoxide): no driver process, one browser,
//! a tab per worker.
//!
//! Text goes in with CDP's `Input.insertText`, which types any script (Chinese included) into the
//! focused field, where synthesised key presses know only a keyboard's keys. Dialogs are answered
//! "cancel" before any page script runs, so a `confirm("Delete?")` the explorer triggers deletes
//! nothing and no dialog blocks the tab.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::page::ScreenshotParams;
use futures_util::StreamExt;

use crate::ExploreError;
use crate::snapshot::{SNAPSHOT_JS, Snapshot};

/// Flags that let Chromium run as root, offline and quietly (no background connections).
const FLAGS: &[&str] = &[
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--lang=zh-CN,en",
];

/// Runs before every page's own scripts.
const NO_DIALOGS: &str = "window.alert = () => {}; window.confirm = () => false; \
    window.prompt = () => null; window.print = () => {}; window.open = (u) => { if (u) location.href = u; return null; };";

/// How long one browser operation may take before the tab is given up on.
const STEP_LIMIT: Duration = Duration::from_secs(20);

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

pub struct Browser {
    inner: chromiumoxide::Browser,
    driver: tokio::task::JoinHandle<()>,
    /// A throwaway profile, removed when the browser goes.
    _profile: tempfile::TempDir,
}

impl Browser {
    pub async fn launch(executable: &Path) -> Result<Browser, ExploreError> {
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
            .map_err(ExploreError::Browser)?;
        let (inner, mut handler) = chromiumoxide::Browser::launch(config).await.map_err(|e| {
            ExploreError::Browser(format!("cannot start {}: {e}", executable.display()))
        })?;
        let driver = tokio::spawn(async move { while handler.next().await.is_some() {} });
        Ok(Browser {
            inner,
            driver,
            _profile: profile,
        })
    }

    /// A new tab; with `credentials`, it answers HTTP authentication (Basic, Digest) with them.
    pub async fn tab(&self, credentials: Option<(&str, &str)>) -> Result<Tab, ExploreError> {
        let page = self.inner.new_page("about:blank").await.map_err(browser)?;
        if let Some((username, password)) = credentials {
            page.authenticate(chromiumoxide::auth::Credentials {
                username: username.to_string(),
                password: password.to_string(),
            })
            .await
            .map_err(browser)?;
        }
        page.evaluate_on_new_document(NO_DIALOGS)
            .await
            .map_err(browser)?;
        Ok(Tab { page })
    }

    pub async fn close(mut self) {
        let _ = self.inner.close().await;
        let _ = self.inner.wait().await;
        self.driver.abort();
    }
}

fn browser(e: impl std::fmt::Display) -> ExploreError {
    ExploreError::Browser(e.to_string())
}

async fn limited<T>(
    what: &str,
    work: impl std::future::Future<Output = Result<T, ExploreError>>,
) -> Result<T, ExploreError> {
    tokio::time::timeout(STEP_LIMIT, work)
        .await
        .map_err(|_| ExploreError::Browser(format!("{what}: no answer in {STEP_LIMIT:?}")))?
}

pub struct Tab {
    page: chromiumoxide::Page,
}

impl Tab {
    pub async fn goto(&self, url: &str) -> Result<(), ExploreError> {
        limited("navigate", async {
            self.page.goto(url).await.map_err(browser)?;
            Ok(())
        })
        .await?;
        self.settle().await
    }

    /// Waits until the document has loaded and scripts had a moment to draw.
    pub async fn settle(&self) -> Result<(), ExploreError> {
        let started = Instant::now();
        tokio::time::sleep(Duration::from_millis(60)).await;
        while started.elapsed() < Duration::from_secs(10) {
            let state = tokio::time::timeout(
                Duration::from_secs(2),
                self.page.evaluate("document.readyState"),
            )
            .await;
            if let Ok(Ok(v)) = state
                && v.value().and_then(|v| v.as_str()) == Some("complete")
            {
                tokio::time::sleep(Duration::from_millis(120)).await;
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    pub async fn snapshot(&self) -> Result<Snapshot, ExploreError> {
        limited("read the page", async {
            let value = self.page.evaluate(SNAPSHOT_JS).await.map_err(browser)?;
            let text: String = value.into_value().map_err(browser)?;
            serde_json::from_str(&text).map_err(browser)
        })
        .await
    }

    pub async fn screenshot(&self) -> Result<Vec<u8>, ExploreError> {
        limited("screenshot", async {
            let params = ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .build();
            self.page.screenshot(params).await.map_err(browser)
        })
        .await
    }

    /// Runs a script that answers a boolean; false when it found nothing to act on.
    async fn run(&self, what: &str, script: String) -> Result<bool, ExploreError> {
        limited(what, async {
            let value = self.page.evaluate(script).await.map_err(browser)?;
            Ok(value.value().and_then(|v| v.as_bool()).unwrap_or(false))
        })
        .await
    }

    /// Clicks the element (in this tab: a link's other-window target is dropped).
    pub async fn click(&self, selector: &str) -> Result<bool, ExploreError> {
        let script = format!(
            "(() => {{ const el = document.querySelector({}); if (!el) return false; \
             el.removeAttribute('target'); el.scrollIntoView({{block: 'center'}}); el.click(); return true; }})()",
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
    ) -> Result<bool, ExploreError> {
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
            limited("type", async {
                self.page
                    .execute(InsertTextParams::new(value))
                    .await
                    .map_err(browser)?;
                Ok(())
            })
            .await?;
        }
        Ok(found)
    }

    /// Sends a form: its submit button when it has one, else `requestSubmit`.
    pub async fn submit(&self, form: &str, button: Option<&str>) -> Result<bool, ExploreError> {
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

    pub async fn scroll(&self) -> Result<bool, ExploreError> {
        let found = self
            .run(
                "scroll",
                "(() => { window.scrollBy(0, window.innerHeight); return true; })()".into(),
            )
            .await?;
        self.settle().await?;
        Ok(found)
    }

    pub async fn close(self) {
        let _ = self.page.close().await;
    }
}

/// A Rust string as a JavaScript string literal.
pub fn js_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}
