//! A small website to explore (`atlas demo-site`): what real sites have in a few pages — a
//! navigation bar, a list of alike product pages, a login form, a search form, a single-page-app
//! part whose tabs change without the address changing, twenty manual pages of one template, a clock that changes every second, a
//! link that carries the current time, a guestbook whose POST form creates entries, and a
//! "delete account" button. It counts what it must never see from an explorer (deletions,
//! sign-outs, entries created) at `GET /stats`.
//!
//! Key design decision: **a crate of its own, outside the explorer.** The explorer is a client
//! of any website; the site it is shown on in the README, `atlas demo-site` and the explorer's
//! benchmark is a website like any other, so it lives beside the explorer, not in it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};

/// What happened to the site that an explorer must not do.
#[derive(Debug, Default)]
pub struct Counters {
    /// Notes deleted.
    pub deleted: AtomicUsize,
    /// Sign-outs.
    pub logouts: AtomicUsize,
    /// Entries created.
    pub entries: AtomicUsize,
    /// Sign-ins.
    pub logins: AtomicUsize,
}

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:2em}} nav a{{margin-right:1em}} .tab[aria-selected=true]{{font-weight:bold}}</style></head>
<body><header><nav>
<a href="/">首页 Home</a><a href="/products">Products</a><a href="/about">About</a><a href="/search">Search</a>
<a href="/app">App</a><a href="/clock">Clock</a><a href="/guestbook">Guestbook</a><a href="/login">Login</a>
<button id="menu" aria-expanded="false" onclick="var p=document.getElementById('menu-panel');p.hidden=!p.hidden;this.setAttribute('aria-expanded',String(!p.hidden))">菜单 Menu</button>
<div id="menu-panel" hidden><a href="/about">关于 About us</a> <a href="/docs">帮助 Help</a></div>
</nav></header><main>{body}</main><footer><p>Atlas demo site, version 1.2.0</p></footer></body></html>"#
    ))
}

fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

async fn home() -> Html<String> {
    page(
        "Demo shop 演示商店",
        &format!(
            r#"<h1>欢迎 Welcome</h1><p>A shop to explore.</p>
<p><a href="/news?from={}">Latest news</a></p><p><a href="/private">Staff area</a></p>
<p><a href="/docs">Documentation</a></p>"#,
            now()
        ),
    )
}

async fn news() -> Html<String> {
    page(
        "News",
        &format!(
            "<h1>News</h1><p>Updated {}</p><ul><li>Spring sale</li><li>New shop opened</li></ul>",
            now()
        ),
    )
}

async fn products() -> Html<String> {
    let items: String = (1..=3)
        .map(|i| format!(r#"<li><a href="/products/{i}">Product {i}</a></li>"#))
        .collect();
    page("Products", &format!("<h1>Products</h1><ul>{items}</ul>"))
}

async fn product(Path(id): Path<u32>) -> Response {
    if !(1..=3).contains(&id) {
        return (
            axum::http::StatusCode::NOT_FOUND,
            page("Not found", "<h1>Not found</h1>"),
        )
            .into_response();
    }
    page(
        &format!("Product {id}"),
        &format!(r#"<h1>Product {id}</h1><p>Price: {}.00</p><p><a href="/products">Back to products</a></p>"#, id * 10),
    )
    .into_response()
}

/// Pages of one template, as a wiki or a manual has dozens of.
const DOCS: u32 = 20;

async fn docs() -> Html<String> {
    let items: String = (1..=DOCS)
        .map(|i| format!(r#"<li><a href="/docs/{i}">Doc {i}</a></li>"#))
        .collect();
    page(
        "Documentation",
        &format!("<h1>Documentation</h1><ol>{items}</ol>"),
    )
}

async fn doc(Path(id): Path<u32>) -> Response {
    if !(1..=DOCS).contains(&id) {
        return (
            axum::http::StatusCode::NOT_FOUND,
            page("Not found", "<h1>Not found</h1>"),
        )
            .into_response();
    }
    let next = if id < DOCS {
        format!(r#"<a href="/docs/{}">Next</a>"#, id + 1)
    } else {
        String::new()
    };
    page(
        &format!("Doc {id}"),
        &format!(r#"<article><h1>Doc {id}</h1><p>Chapter {id} of the manual.</p></article><p><a href="/docs">Contents</a> {next}</p>"#),
    )
    .into_response()
}

async fn about() -> Html<String> {
    page(
        "About 关于",
        "<h1>关于我们 About us</h1><p>A demo for the explorer.</p>",
    )
}

#[derive(serde::Deserialize)]
struct Search {
    q: Option<String>,
}

async fn search(Query(s): Query<Search>) -> Html<String> {
    let form = r#"<form action="/search" method="get"><label for="q">Keyword</label>
<input id="q" name="q" type="search"><button type="submit">Search</button></form>"#;
    match s.q.filter(|q| !q.is_empty()) {
        None => page("Search", &format!("<h1>Search</h1>{form}")),
        Some(q) => page(
            "Search results",
            &format!(
                r#"<h1>Results</h1>{form}<p>Results for {}</p><ol><li><a href="/products/1">Product 1</a></li></ol>"#,
                html_escape(&q)
            ),
        ),
    }
}

/// Escapes text for HTML: what the site shows of its visitors' input stays text.
pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn app() -> Html<String> {
    page(
        "App",
        r#"<h1>Single-page app</h1>
<div role="tablist"><button class="tab" id="tab-overview" role="tab" aria-selected="true" onclick="show('overview')">Overview</button>
<button class="tab" id="tab-settings" role="tab" aria-selected="false" onclick="show('settings')">Settings</button>
<button class="tab" id="tab-help" role="tab" aria-selected="false" onclick="show('help')">Help</button></div>
<section id="overview"><ul><li>Orders: 3</li><li>Points: 120</li></ul></section>
<section id="settings" hidden><label><input type="checkbox" id="dark"> Dark mode</label><p>Language: 中文</p></section>
<section id="help" hidden><table><tr><th>Question</th><th>Answer</th></tr><tr><td>Shipping?</td><td>3 days</td></tr></table></section>
<script>function show(name){for(const s of ['overview','settings','help']){document.getElementById(s).hidden=s!==name;document.getElementById('tab-'+s).setAttribute('aria-selected', s===name?'true':'false');}}</script>"#,
    )
}

async fn clock() -> Html<String> {
    let time = chrono::Utc::now().format("%H:%M:%S").to_string();
    Html(
        page(
            &format!("Clock {time}"),
            &format!(
                r#"<h1>Clock</h1><p id="time">{time}</p><p>Visitors today: <span id="count">{}</span></p>
<script>setInterval(()=>{{const t=new Date().toISOString().slice(11,19);document.getElementById('time').textContent=t;document.title='Clock '+t;document.getElementById('count').textContent=String(Math.floor(Math.random()*1000));}},1000);</script>"#,
                chrono::Utc::now().timestamp() % 1000
            ),
        )
        .0,
    )
}

async fn guestbook(State(c): State<Arc<Counters>>) -> Html<String> {
    page(
        "Guestbook",
        &format!(
            r#"<h1>Guestbook</h1><p>{} entries</p><form action="/guestbook" method="post">
<label for="msg">Message</label><textarea id="msg" name="message" required maxlength="200"></textarea>
<button type="submit">Post</button></form>"#,
            c.entries.load(Ordering::SeqCst)
        ),
    )
}

async fn guestbook_post(State(c): State<Arc<Counters>>) -> Redirect {
    c.entries.fetch_add(1, Ordering::SeqCst);
    Redirect::to("/guestbook")
}

async fn login_form() -> Html<String> {
    page(
        "Login 登录",
        r#"<h1>Login</h1><form action="/login" method="post">
<label for="user">User name</label><input id="user" name="username" type="text" required>
<label for="pw">Password</label><input id="pw" name="password" type="password" required>
<button type="submit">Sign in</button></form>"#,
    )
}

#[derive(serde::Deserialize)]
struct Login {
    username: String,
    password: String,
}

async fn login(State(c): State<Arc<Counters>>, Form(l): Form<Login>) -> Response {
    if l.username.is_empty() || l.password.is_empty() {
        return Redirect::to("/login").into_response();
    }
    c.logins.fetch_add(1, Ordering::SeqCst);
    (
        [(header::SET_COOKIE, "session=demo; Path=/; HttpOnly")],
        Redirect::to("/dashboard"),
    )
        .into_response()
}

fn signed_in(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(';').any(|c| c.trim() == "session=demo"))
}

async fn dashboard(headers: axum::http::HeaderMap) -> Response {
    if !signed_in(&headers) {
        return Redirect::to("/login").into_response();
    }
    page(
        "Dashboard",
        r#"<h1>Dashboard</h1><p>Signed in.</p><p><a href="/account">My account</a></p><p><a href="/logout">Log out</a></p>"#,
    )
    .into_response()
}

async fn account(headers: axum::http::HeaderMap) -> Response {
    if !signed_in(&headers) {
        return Redirect::to("/login").into_response();
    }
    page(
        "Account",
        r#"<h1>Account</h1><p>Email: demo@example.com</p>
<form action="/account/delete" method="post"><button type="submit" id="delete">Delete account</button></form>"#,
    )
    .into_response()
}

async fn delete_account(State(c): State<Arc<Counters>>) -> Redirect {
    c.deleted.fetch_add(1, Ordering::SeqCst);
    Redirect::to("/")
}

async fn logout(State(c): State<Arc<Counters>>) -> Response {
    c.logouts.fetch_add(1, Ordering::SeqCst);
    (
        [(header::SET_COOKIE, "session=; Path=/; Max-Age=0")],
        Redirect::to("/"),
    )
        .into_response()
}

/// Behind HTTP Basic authentication (any user name and password).
async fn private(headers: axum::http::HeaderMap) -> Response {
    let authorised = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Basic ") && v.len() > 8);
    if !authorised {
        return (
            axum::http::StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Basic realm=\"staff\"")],
            "sign in",
        )
            .into_response();
    }
    page(
        "Staff area",
        "<h1>Staff area</h1><p>Stock levels and rotas.</p>",
    )
    .into_response()
}

async fn stats(State(c): State<Arc<Counters>>) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({
        "deleted": c.deleted.load(Ordering::SeqCst),
        "logouts": c.logouts.load(Ordering::SeqCst),
        "entries": c.entries.load(Ordering::SeqCst),
        "logins": c.logins.load(Ordering::SeqCst),
    }))
}

/// The site, counting into `counters`.
pub fn router(counters: Arc<Counters>) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/news", get(news))
        .route("/products", get(products))
        .route("/products/{id}", get(product))
        .route("/about", get(about))
        .route("/docs", get(docs))
        .route("/docs/{id}", get(doc))
        .route("/search", get(search))
        .route("/app", get(app))
        .route("/clock", get(clock))
        .route("/guestbook", get(guestbook).post(guestbook_post))
        .route("/login", get(login_form).post(login))
        .route("/dashboard", get(dashboard))
        .route("/account", get(account))
        .route("/account/delete", post(delete_account))
        .route("/logout", get(logout))
        .route("/private", get(private))
        .route("/stats", get(stats))
        .with_state(counters)
}
