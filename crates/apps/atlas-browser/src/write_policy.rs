//! What the explorer must not press (what it types is [`crate::test_values`]).
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
//! These words are the second line. The first is the network filter ([`crate::network_filter`]): whatever a
//! page's scripts do, no request but GET and HEAD leaves the browser while exploring.

use crate::snapshot::{Button, Form, Link};
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
        && crate::network_filter::origin_of(&form.action) == start_origin
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Field;

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
    }
}
