//! What the explorer must not press, and what it types.
//!
//! An action is destructive when its words say it ends a session, deletes, pays, orders or
//! unsubscribes (in its text, its attributes or its address), or when it submits a form by POST
//! that is not a login: HTTP says POST changes the server, and a wiki's edit form or a shop's
//! order form creates what a test run must not leave behind. A login form is the exception,
//! since exploring behind it is the point.

use crate::snapshot::{Button, Field, Form, Link};

/// Words (matched as whole words in Latin script, as substrings in CJK) of actions that cannot be
/// undone or change what others see.
const DESTRUCTIVE: &[&str] = &[
    "logout",
    "log out",
    "log-out",
    "signout",
    "sign out",
    "sign-out",
    "logoff",
    "delete",
    "remove",
    "destroy",
    "erase",
    "purge",
    "wipe",
    "pay",
    "payment",
    "checkout",
    "check out",
    "place order",
    "submit order",
    "buy",
    "purchase",
    "unsubscribe",
    "deactivate",
    "terminate",
    "close account",
    "cancel account",
    "cancel subscription",
    "revert",
    "删除",
    "移除",
    "注销",
    "退出",
    "登出",
    "支付",
    "付款",
    "购买",
    "下单",
    "提交订单",
    "取消订阅",
    "清空",
    "销毁",
    "解绑",
    "save",
    "publish",
    "upload",
    "保存",
    "发布",
    "上传",
];

fn says_destructive(text: &str) -> bool {
    let lower = text.to_lowercase();
    // Latin words: compare on word boundaries ("display" is not "pay"), camel and snake case split.
    let spaced: String = lower
        .chars()
        .map(|c| {
            if c.is_alphanumeric() && c.is_ascii() {
                c
            } else if c.is_ascii() {
                ' '
            } else {
                c
            }
        })
        .collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    DESTRUCTIVE.iter().any(|w| {
        if w.is_ascii() {
            let parts: Vec<&str> = w.split([' ', '-']).collect();
            words
                .windows(parts.len())
                .any(|win| win == parts.as_slice())
        } else {
            lower.contains(w)
        }
    })
}

/// The path and query of an address, as words (`/+delete/Page`, `?do=destroy`, `/logout`).
fn address_words(href: &str) -> String {
    match url::Url::parse(href) {
        Ok(u) => format!("{} {}", u.path(), u.query().unwrap_or_default()),
        Err(_) => href.to_string(),
    }
}

pub fn link_is_destructive(link: &Link) -> bool {
    says_destructive(&link.text)
        || says_destructive(&link.attrs)
        || says_destructive(&address_words(&link.href))
}

pub fn button_is_destructive(button: &Button) -> bool {
    says_destructive(&button.text)
        || says_destructive(&button.attrs)
        || (button.form_method == "post" && !button.form_login)
}

/// A form with a password field and few others: signing in.
pub fn is_login(form: &Form) -> bool {
    form.fields.iter().any(|f| f.kind == "password") && form.fields.len() <= 4
}

pub fn form_is_destructive(form: &Form) -> bool {
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
        || (form.method == "post" && !is_login(form))
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
        let button = |text: &str| Button {
            text: text.into(),
            ..Default::default()
        };
        assert!(button_is_destructive(&button("Delete account")));
        assert!(!button_is_destructive(&button("Show details")));
    }

    #[test]
    fn post_forms_are_destructive_unless_they_sign_in() {
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
        let login = form("post", vec![field("user", "text"), field("pw", "password")]);
        assert!(is_login(&login) && !form_is_destructive(&login));
        assert!(form_is_destructive(&form(
            "post",
            vec![field("text", "textarea")]
        )));
        let search = form("get", vec![field("q", "search")]);
        assert!(is_search(&search) && !form_is_destructive(&search));
        assert_eq!(test_value(&field("when", "date"), None), "2026-01-31");
        assert_eq!(
            test_value(&field("username", "text"), Some(("ann", "pw"))),
            "ann"
        );
    }
}
