//! What the explorer must not press, and what it types.
//!
//! An action is destructive when its words say it destroys, pays, orders, sends or leaves (in its
//! text, its attributes or its address: verbs, so "My orders" is explored and "Cancel order" is
//! not), or when it submits a form by POST that is not the sign-in: HTTP says POST changes the
//! server, and a wiki's edit form or a shop's order form creates what a test run must not leave
//! behind. A sign-in form is the exception, since exploring behind it is the point, and only one
//! that posts to the start URL's origin is one: credentials go nowhere else.
//!
//! The words are Atlas's one rule for actions that cannot be undone
//! ([`atlas_text::says_irreversible`]), which a phone agent's fast path keeps too.
//!
//! These words are the second line. The first is the network guard ([`crate::guard`]): whatever a
//! page's scripts do, no request but GET and HEAD leaves the browser while exploring.

use crate::snapshot::{Button, Field, Form, Link};
use atlas_text::says_irreversible as says_destructive;

/// The path and query of an address, as words (`/+delete/Page`, `?do=destroy`, `/logout`).
fn address_words(href: &str) -> String {
    match url::Url::parse(href) {
        Ok(u) => format!("{} {}", u.path(), u.query().unwrap_or_default()),
        Err(_) => href.to_string(),
    }
}

/// Whether a link's text, attributes or address say it deletes, pays, orders or signs out.
pub fn link_is_destructive(link: &Link) -> bool {
    says_destructive(&link.text)
        || says_destructive(&link.attrs)
        || says_destructive(&address_words(&link.href))
}

/// A button outside a form that sends one by POST is destructive, a sign-in form's too: the
/// explorer signs in through the form itself ([`is_sign_in`]).
pub fn button_is_destructive(button: &Button) -> bool {
    says_destructive(&button.text)
        || says_destructive(&button.attrs)
        || button.form_method == "post"
}

/// A form with a password field and few others that sends to `start_origin` (the start URL's,
/// as `url` serialises an origin): signing in there. Nothing widens it to another origin.
pub fn is_sign_in(form: &Form, start_origin: &str) -> bool {
    form.fields.iter().any(|f| f.kind == "password")
        && form.fields.len() <= 4
        && crate::guard::origin_of(&form.action) == start_origin
}

/// Whether a form's words say it deletes, pays, orders, signs out or creates content.
pub fn form_is_destructive(form: &Form, start_origin: &str) -> bool {
    let words = format!(
        "{} {} {} {}",
        form.id,
        form.name,
        form.classes,
        form.submit
            .as_ref()
            .map(|s| s.text.as_str())
            .unwrap_or_default()
    );
    says_destructive(&words)
        || says_destructive(&address_words(&form.action))
        || (form.method == "post" && !is_sign_in(form, start_origin))
}

/// A search form: one text-like field, sent by GET.
pub fn is_search(form: &Form) -> bool {
    form.method != "post"
        && form.fields.iter().any(|f| {
            f.kind == "search"
                || matches!(f.name.as_str(), "q" | "query" | "search" | "s" | "keyword")
        })
}

/// The password typed where no credentials were given.
pub const TEST_PASSWORD: &str = "Explorer#2026";

/// What to type into a field, by its type (and, for text, its name): values a form accepts.
pub fn test_value(field: &Field, credentials: Option<(&str, &str)>) -> String {
    let name = field.name.to_lowercase();
    match field.kind.as_str() {
        "email" => "explorer@example.com".into(),
        "number" | "range" => field
            .min
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "1".into()),
        "date" => "2026-01-31".into(),
        "time" => "12:00".into(),
        "datetime-local" => "2026-01-31T12:00".into(),
        "month" => "2026-01".into(),
        "week" => "2026-W05".into(),
        "tel" => "13800000000".into(),
        "url" => "https://example.com/".into(),
        "color" => "#336699".into(),
        "password" => credentials.map_or(TEST_PASSWORD.into(), |(_, p)| p.to_string()),
        // A search is typed in Chinese: the text that needs care (input methods, fonts) is the
        // text to try.
        "search" => "测试".into(),
        _ if matches!(
            name.as_str(),
            "q" | "query" | "search" | "keyword" | "wd" | "kw"
        ) =>
        {
            "测试".into()
        }
        _ if name.contains("mail") => "explorer@example.com".into(),
        _ if ["user", "login", "account", "name"]
            .iter()
            .any(|w| name.contains(w)) =>
        {
            credentials.map_or("explorer".into(), |(u, _)| u.to_string())
        }
        _ => "test".into(),
    }
}

/// A value the explorer types (its test values and second values): where a page's address
/// carries one, the explorer put it there, and it names no kind of page.
pub fn typed_by_explorer(value: &str) -> bool {
    [
        "test",
        "测试",
        "a",
        "1",
        "0",
        "explorer",
        "explorer@example.com",
        "13800000000",
        "https://example.com/",
        "#336699",
        TEST_PASSWORD,
    ]
    .contains(&value)
}

/// A second value for a field whose first fill found nothing: a single letter for a search
/// (most texts hold one) and a number for other text (most ids and counts are one); none for a
/// field whose value its type fixes (a date, an e-mail address).
pub fn other_test_value(kind: &str, name: &str) -> Option<String> {
    let search = kind == "search"
        || matches!(
            name.to_lowercase().as_str(),
            "q" | "query" | "search" | "keyword" | "wd" | "kw"
        );
    match kind {
        _ if search => Some("a".into()),
        "text" | "textarea" | "" => Some("1".into()),
        "number" | "range" => Some("0".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(text: &str, href: &str) -> Link {
        Link {
            text: text.into(),
            href: href.into(),
            ..Default::default()
        }
    }

    #[test]
    fn destructive_words_in_text_attributes_and_addresses() {
        assert!(link_is_destructive(&link("Log out", "http://x/")));
        assert!(link_is_destructive(&link("Page", "http://x/+delete/Home")));
        assert!(link_is_destructive(&link("", "http://x/wiki?do=destroy")));
        assert!(link_is_destructive(&link("删除账户", "http://x/a")));
        assert!(!link_is_destructive(&link(
            "Display settings",
            "http://x/display"
        )));
        assert!(!link_is_destructive(&link(
            "Products",
            "http://x/products?page=2"
        )));
        for href in [
            "http://x/db/truncate",
            "http://x/order/9/cancel",
            "http://x/reset-all",
            "http://x/admin/drop-table",
            "http://x/clear",
            "http://x/archive-all",
            "http://x/send-money",
            "http://x/items?action=del",
            "http://x/api/deleteItem?id=3",
        ] {
            assert!(link_is_destructive(&link("Details", href)), "{href}");
        }
        for text in [
            "Buy now",
            "Place an order",
            "Transfer",
            "Unsubscribe",
            "Sign out",
            "Empty the cart",
            "转账",
            "立即购买",
            "取消订单",
            "重置密码",
            "退订",
            "发送",
        ] {
            assert!(link_is_destructive(&link(text, "http://x/a")), "{text}");
        }
        // Nouns are explored: the orders list, a dialog's plain "Cancel", the archives.
        for (text, href) in [
            ("My orders", "http://x/orders"),
            ("Order history", "http://x/account/orders?page=2"),
            ("Cancel", "http://x/help"),
            ("Archives", "http://x/archives/2026"),
            ("Transfers", "http://x/transfers"),
            ("我的订单", "http://x/orders"),
        ] {
            assert!(!link_is_destructive(&link(text, href)), "{text} {href}");
        }
        let button = |text: &str| Button {
            text: text.into(),
            ..Default::default()
        };
        assert!(button_is_destructive(&button("Delete account")));
        assert!(!button_is_destructive(&button("Show details")));
    }

    #[test]
    fn post_forms_are_destructive_unless_they_sign_in_to_the_start_origin() {
        let field = |name: &str, kind: &str| Field {
            name: name.into(),
            kind: kind.into(),
            ..Default::default()
        };
        let form = |method: &str, fields: Vec<Field>| Form {
            method: method.into(),
            action: "http://x/submit".into(),
            fields,
            ..Default::default()
        };
        let start = "http://x";
        let login = form("post", vec![field("user", "text"), field("pw", "password")]);
        assert!(is_sign_in(&login, start) && !form_is_destructive(&login, start));
        let elsewhere = Form {
            action: "http://y/collect".into(),
            ..login.clone()
        };
        assert!(!is_sign_in(&elsewhere, start) && form_is_destructive(&elsewhere, start));
        assert!(form_is_destructive(
            &form("post", vec![field("text", "textarea")]),
            start
        ));
        let search = form("get", vec![field("q", "search")]);
        assert!(is_search(&search) && !form_is_destructive(&search, start));
        assert_eq!(test_value(&field("when", "date"), None), "2026-01-31");
        assert_eq!(
            test_value(&field("username", "text"), Some(("ann", "pw"))),
            "ann"
        );
    }
}
