//! The network filter: what the browser may send while it explores, decided outside the page.
//!
//! A page decides which requests it makes; the network filter decides which of them leave the browser.
//! It is a DevTools connection of its own to the browser endpoint that enables the Fetch domain
//! browser-wide, so every request of every tab, frame and pop-up waits for its answer:
//!
//! - **Writes are refused.** A request other than GET or HEAD (a `fetch(…, {method: 'DELETE'})`,
//!   a beacon, a form's POST) fails in the browser and is recorded with its page's frame, for the
//!   explorer to list as a destructive candidate. The one exception is the sign-in the explorer
//!   itself is sending: a POST from that tab's page to the sign-in form's own address on the start
//!   origin ([`NetworkFilter::allow_sign_in`]). `--allow-destructive` lifts the rule. WebSockets, which
//!   the Fetch domain cannot hold, are refused in the page instead ([`NO_WEBSOCKETS`]).
//! - **Credentials go only to the start origin.** An HTTP authentication challenge is answered
//!   with the credentials only when it comes from the start URL's origin (scheme, host and port),
//!   once per request; any other origin's challenge is cancelled. No option widens this.
//!
//! Key design decision: **a connection of its own rather than chromiumoxide's page API.**
//! chromiumoxide answers every authentication challenge itself (with its credentials, or with the
//! browser's default) on the connection it drives; a second connection that alone enables Fetch
//! receives the challenges and the paused requests, and nothing else answers them first. Should
//! the network filter's connection end, requests stay paused: the browser then sends nothing at all, and
//! the explorer stops ([`NetworkFilter::is_alive`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_tungstenite::tungstenite::Message;
use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::BrowserError;

/// A request the network filter refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The frame that made it (a tab's main frame has the tab's target id).
    pub frame: String,
    /// Which document of that frame made it: the frame's navigations let through before it.
    pub document: u64,
    /// Its method.
    pub method: String,
    /// Its address.
    pub url: String,
}

/// What the network filter lets through: the start origin, the credentials for it, and whether writes
/// are allowed at all.
#[derive(Debug, Clone)]
pub struct NetworkPolicy {
    /// `scheme://host:port` of the start URL (url's ASCII serialisation of an origin).
    pub start_origin: String,
    /// The user and password for the start origin's sign-in and HTTP authentication.
    pub credentials: Option<(String, String)>,
    /// `--allow-destructive`: every request goes.
    pub allow_writes: bool,
}

#[derive(Default)]
struct Decisions {
    /// Per frame, the address a sign-in the explorer is sending may post to.
    sign_in: HashMap<String, String>,
    /// The main frames of the explorer's tabs, each with the navigations let through so far:
    /// a request refused after one was made by the new document, not by what led to it.
    tabs: HashMap<String, u64>,
    refused: Vec<Refused>,
    /// Challenges already answered with the credentials: a second one means they were wrong.
    answered: HashSet<String>,
}

struct Inner {
    policy: NetworkPolicy,
    decisions: Mutex<Decisions>,
    alive: AtomicBool,
}

/// The network filter over every tab of one browser (see the module's documentation).
pub struct NetworkFilter {
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

fn browser(e: impl std::fmt::Display) -> BrowserError {
    BrowserError::Failed(format!("network filter: {e}"))
}

/// The origin of an address, as the network filter compares origins ("null" for none).
pub fn origin_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| "null".into())
}

/// The address without its fragment, as a request carries it.
fn without_fragment(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// Run before every document's own scripts while writes are refused: the Fetch domain cannot
/// hold a WebSocket (nor can `Network.setBlockedURLs`), so the constructors are replaced, not
/// to be redefined. A page set on it could still reach a pristine constructor through a frame
/// made before the browser runs this in it: the one channel the network filter holds only this far.
pub const NO_WEBSOCKETS: &str = "(() => { for (const name of ['WebSocket', 'WebSocketStream']) { \
    try { Object.defineProperty(window, name, { configurable: false, writable: false, \
    value: function () { throw new DOMException('WebSockets are refused while exploring', 'SecurityError'); } }); } \
    catch (_) {} } })();";

impl NetworkFilter {
    /// Connects to the browser at `websocket` and intercepts every request from then on. It
    /// returns once interception is on, so nothing the explorer does afterwards goes unfiltered.
    pub async fn start(
        websocket: &str,
        policy: NetworkPolicy,
    ) -> Result<NetworkFilter, BrowserError> {
        let (socket, _) = async_tungstenite::tokio::connect_async(websocket).await?;
        let (mut sink, mut stream) = socket.split();
        // Every request, images included: an image's authentication challenge left to the
        // browser would hold its page's loading.
        let enable = json!({
            "id": 1,
            "method": "Fetch.enable",
            "params": { "patterns": [{ "urlPattern": "*", "requestStage": "Request" }], "handleAuthRequests": true },
        });
        sink.send(Message::text(enable.to_string())).await?;
        loop {
            let message = stream
                .next()
                .await
                .ok_or_else(|| browser("the browser closed the connection"))??;
            let Ok(text) = message.to_text() else {
                continue;
            };
            let reply: Value = serde_json::from_str(text).unwrap_or_default();
            if reply["id"] == 1 {
                if let Some(error) = reply.get("error") {
                    return Err(browser(format!("Fetch.enable: {error}")));
                }
                break;
            }
        }
        let inner = Arc::new(Inner {
            policy,
            decisions: Mutex::new(Decisions::default()),
            alive: AtomicBool::new(true),
        });
        let worker = inner.clone();
        let task = tokio::spawn(async move {
            let mut next_id = 2u64;
            while let Some(Ok(message)) = stream.next().await {
                let Ok(text) = message.to_text() else {
                    continue;
                };
                let Ok(event) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                let Some((method, params)) = worker.answer(&event) else {
                    continue;
                };
                next_id += 1;
                let command = json!({ "id": next_id, "method": method, "params": params });
                if sink.send(Message::text(command.to_string())).await.is_err() {
                    break;
                }
            }
            worker.alive.store(false, Ordering::SeqCst);
        });
        Ok(NetworkFilter { inner, task })
    }

    /// False once the network filter's connection has ended (the browser then sends nothing).
    pub fn is_alive(&self) -> bool {
        self.inner.alive.load(Ordering::SeqCst)
    }

    /// Lets the tab whose main frame is `frame` post its sign-in form to `action` (on the start
    /// origin only) until [`NetworkFilter::end_sign_in`].
    pub fn allow_sign_in(&self, frame: &str, action: &str) {
        if origin_of(action) == self.inner.policy.start_origin {
            self.inner
                .decisions
                .lock()
                .sign_in
                .insert(frame.to_string(), without_fragment(action));
        }
    }

    /// Ends what [`NetworkFilter::allow_sign_in`] allowed the frame.
    pub fn end_sign_in(&self, frame: &str) {
        self.inner.decisions.lock().sign_in.remove(frame);
    }

    /// Counts `frame` as a tab's main frame (see [`NetworkFilter::take_refused`]).
    pub fn add_tab(&self, frame: &str) {
        self.inner
            .decisions
            .lock()
            .tabs
            .insert(frame.to_string(), 0);
    }

    /// How many documents the tab whose main frame is `frame` has loaded (see [`Refused::document`]).
    pub fn documents(&self, frame: &str) -> u64 {
        self.inner
            .decisions
            .lock()
            .tabs
            .get(frame)
            .copied()
            .unwrap_or_default()
    }

    /// The refused requests of the tab whose main frame is `frame`, and of frames that are no
    /// tab's main frame (its iframes, workers: with one tab, exactly its own), taken out of the
    /// filter's record.
    pub fn take_refused(&self, frame: &str) -> Vec<Refused> {
        let mut decisions = self.inner.decisions.lock();
        let refused = std::mem::take(&mut decisions.refused);
        let (mine, rest) = refused
            .into_iter()
            .partition(|r| r.frame == frame || !decisions.tabs.contains_key(&r.frame));
        decisions.refused = rest;
        mine
    }

    /// Stops the network filter's connection.
    pub fn stop(self) {
        self.task.abort();
    }
}

impl Inner {
    /// The command that answers a Fetch event, if it is one.
    fn answer(&self, event: &Value) -> Option<(&'static str, Value)> {
        let params = &event["params"];
        let request_id = params["requestId"].as_str()?.to_string();
        let url = params["request"]["url"].as_str().unwrap_or_default();
        let frame = params["frameId"].as_str().unwrap_or_default();
        match event["method"].as_str()? {
            "Fetch.requestPaused" => {
                let method = params["request"]["method"].as_str().unwrap_or("GET");
                let navigation = params["resourceType"] == "Document";
                if self.lets_through(frame, method, url) {
                    if navigation && let Some(n) = self.decisions.lock().tabs.get_mut(frame) {
                        *n += 1;
                    }
                    Some(("Fetch.continueRequest", json!({ "requestId": request_id })))
                } else {
                    tracing::info!("refused {method} {url}");
                    let mut decisions = self.decisions.lock();
                    let document = decisions.tabs.get(frame).copied().unwrap_or_default();
                    decisions.refused.push(Refused {
                        frame: frame.to_string(),
                        document,
                        method: method.to_string(),
                        url: url.to_string(),
                    });
                    Some((
                        "Fetch.failRequest",
                        json!({ "requestId": request_id, "errorReason": "BlockedByClient" }),
                    ))
                }
            }
            "Fetch.authRequired" => {
                let challenge = &params["authChallenge"];
                let from_start = challenge["source"].as_str() != Some("Proxy")
                    && origin_of(url) == self.policy.start_origin
                    && challenge["origin"]
                        .as_str()
                        .is_none_or(|o| origin_of(o) == self.policy.start_origin);
                let first = self.decisions.lock().answered.insert(request_id.clone());
                let response = match &self.policy.credentials {
                    Some((user, password)) if from_start && first => {
                        json!({ "response": "ProvideCredentials", "username": user, "password": password })
                    }
                    _ => {
                        if !from_start {
                            tracing::info!("cancelled an authentication challenge from {url}");
                        }
                        json!({ "response": "CancelAuth" })
                    }
                };
                Some((
                    "Fetch.continueWithAuth",
                    json!({ "requestId": request_id, "authChallengeResponse": response }),
                ))
            }
            _ => None,
        }
    }

    fn lets_through(&self, frame: &str, method: &str, url: &str) -> bool {
        if matches!(method, "GET" | "HEAD") || self.policy.allow_writes {
            return true;
        }
        method == "POST"
            && origin_of(url) == self.policy.start_origin
            && self.decisions.lock().sign_in.get(frame) == Some(&without_fragment(url))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inner(credentials: bool, allow_writes: bool) -> Inner {
        Inner {
            policy: NetworkPolicy {
                start_origin: "http://127.0.0.1:8000".into(),
                credentials: credentials.then(|| ("ann".into(), "pw".into())),
                allow_writes,
            },
            decisions: Mutex::new(Decisions::default()),
            alive: AtomicBool::new(true),
        }
    }

    fn paused(method: &str, url: &str, frame: &str) -> Value {
        json!({"method": "Fetch.requestPaused", "params": {"requestId": "r1", "frameId": frame, "request": {"method": method, "url": url}}})
    }

    fn challenge(id: &str, url: &str) -> Value {
        json!({"method": "Fetch.authRequired", "params": {"requestId": id, "frameId": "F", "request": {"url": url, "method": "GET"},
            "authChallenge": {"source": "Server", "origin": origin_of(url), "scheme": "basic", "realm": "r"}}})
    }

    #[test]
    fn writes_are_refused_but_the_sign_in_post_to_the_start_origin() {
        let filter = inner(true, false);
        let (m, _) = filter
            .answer(&paused("GET", "http://evil:9/x", "F"))
            .unwrap();
        assert_eq!(m, "Fetch.continueRequest");
        for (method, url) in [
            ("DELETE", "http://127.0.0.1:8000/item/1"),
            ("POST", "http://127.0.0.1:8000/login"),
            ("PUT", "http://127.0.0.1:8000/x"),
        ] {
            let (m, p) = filter.answer(&paused(method, url, "F")).unwrap();
            assert_eq!(m, "Fetch.failRequest", "{method} {url}");
            assert_eq!(p["errorReason"], "BlockedByClient");
        }
        assert_eq!(filter.decisions.lock().refused.len(), 3);
        filter
            .decisions
            .lock()
            .sign_in
            .insert("F".into(), "http://127.0.0.1:8000/login".into());
        let post = |url: &str, frame: &str| filter.answer(&paused("POST", url, frame)).unwrap().0;
        assert_eq!(
            post("http://127.0.0.1:8000/login#x", "F"),
            "Fetch.continueRequest"
        );
        // Another frame, another address, another origin: refused all the same.
        assert_eq!(
            post("http://127.0.0.1:8000/login", "G"),
            "Fetch.failRequest"
        );
        assert_eq!(
            post("http://127.0.0.1:8000/other", "F"),
            "Fetch.failRequest"
        );
        assert_eq!(
            post("http://127.0.0.1:8001/login", "F"),
            "Fetch.failRequest"
        );
        let open = inner(false, true);
        assert_eq!(
            open.answer(&paused("DELETE", "http://x/", "F")).unwrap().0,
            "Fetch.continueRequest"
        );
    }

    #[test]
    fn a_refusal_is_counted_to_the_document_that_made_it() {
        let filter = inner(false, false);
        filter.decisions.lock().tabs.insert("F".into(), 0);
        filter.answer(&paused("POST", "http://127.0.0.1:8000/a", "F"));
        let mut navigation = paused("GET", "http://127.0.0.1:8000/next", "F");
        navigation["params"]["resourceType"] = json!("Document");
        filter.answer(&navigation);
        filter.answer(&paused("POST", "http://127.0.0.1:8000/beacon", "F"));
        let refused = &filter.decisions.lock().refused;
        assert_eq!(
            refused.iter().map(|r| r.document).collect::<Vec<_>>(),
            [0, 1]
        );
    }

    #[test]
    fn credentials_answer_only_the_start_origin_once() {
        let filter = inner(true, false);
        let response = |id: &str, url: &str| {
            filter.answer(&challenge(id, url)).unwrap().1["authChallengeResponse"].clone()
        };
        let ours = response("a", "http://127.0.0.1:8000/private");
        assert_eq!(ours["response"], "ProvideCredentials");
        assert_eq!(ours["password"], "pw");
        // Wrong the first time: not sent again for the same request.
        assert_eq!(
            response("a", "http://127.0.0.1:8000/private")["response"],
            "CancelAuth"
        );
        for other in [
            "http://127.0.0.1:8001/img.png",
            "https://127.0.0.1:8000/x",
            "http://localhost:8000/x",
        ] {
            let answer = response(other, other);
            assert_eq!(answer["response"], "CancelAuth", "{other}");
            assert!(answer.get("password").is_none());
        }
        assert_eq!(
            inner(false, false)
                .answer(&challenge("b", "http://127.0.0.1:8000/p"))
                .unwrap()
                .1["authChallengeResponse"]["response"],
            "CancelAuth"
        );
    }
}
