//! Actions that cannot be undone, told by their words: one rule, in Chinese and English, for
//! every face of Atlas that acts on its own — the web explorer does not press them, and a phone
//! agent's fast path takes them only as a step of a remembered way that its own record has seen
//! succeed on that page in that version.
//!
//! Key design decision: **verbs, not nouns.** "My orders", "Transfers" and a dialog's plain
//! "Cancel" are explored and replayed; "Cancel order", "Transfer", "Pay now", "发送" are not.
//! What it destroys, pays, orders, sends, publishes or signs out is true of user interfaces in
//! general, whatever the app: no app's own labels tuned it.

/// Words (matched as whole words in Latin script, as substrings in CJK) of actions that cannot be
/// undone or change what others see.
const IRREVERSIBLE: &[&str] = &[
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
    "truncate",
    "drop",
    "reset",
    "clear",
    "empty",
    "del",
    "cancel order",
    "buy now",
    "place an order",
    "transfer",
    "send",
    "archive",
    "sign off",
    "重置",
    "取消订单",
    "立即购买",
    "转账",
    "发送",
    "退订",
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
    "confirm order",
    "confirm payment",
    "confirm purchase",
    "pay now",
    "确认订单",
    "确认支付",
    "确认付款",
    "确认购买",
    "立即支付",
];

/// What "cancel" destroys when it is said beside it (a dialog's "Cancel" closes the dialog).
const CANCELLABLE: &[&str] = &[
    "order",
    "orders",
    "booking",
    "reservation",
    "subscription",
    "account",
    "payment",
];

/// Latin words, lower-case: split on anything not a letter or digit and where camelCase turns
/// ("deleteItem" is "delete item"); other scripts kept whole.
fn words(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                spaced.push(' ');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            spaced.push(c.to_ascii_lowercase());
        } else {
            previous_lower = false;
            spaced.push(if c.is_ascii() { ' ' } else { c });
        }
    }
    spaced.split_whitespace().map(String::from).collect()
}

/// Whether a label, attribute or address says its action cannot be undone or changes what others
/// see: it destroys, pays, orders, sends, publishes or signs out (verbs, so "My orders" is not
/// and "Cancel order" is).
pub fn says_irreversible(text: &str) -> bool {
    let lower = text.to_lowercase();
    // Latin words: compare on word boundaries ("display" is not "pay").
    let words = words(text);
    if words.iter().any(|w| w == "cancel")
        && words.iter().any(|w| CANCELLABLE.contains(&w.as_str()))
    {
        return true;
    }
    IRREVERSIBLE.iter().any(|w| {
        if w.is_ascii() {
            let parts: Vec<&str> = w.split([' ', '-']).collect();
            words
                .windows(parts.len())
                .any(|win| win.iter().eq(parts.iter()))
        } else {
            lower.contains(w)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::says_irreversible;

    #[test]
    fn sending_paying_and_destroying_are_irreversible_in_both_languages() {
        for text in [
            "Delete",
            "Send",
            "Pay now",
            "Submit order",
            "Place order",
            "Confirm purchase",
            "发送",
            "删除",
            "确认支付",
            "提交订单",
            "立即购买",
            "deleteItem",
        ] {
            assert!(says_irreversible(text), "{text}");
        }
        for text in [
            "My orders",
            "Cancel",
            "Display",
            "Settings",
            "New note",
            "消息",
            "我的订单",
            "Payments history",
            "Sender",
            // A sign-in's or a search's Submit sends nothing that cannot be undone.
            "Submit",
            "提交",
        ] {
            assert!(!says_irreversible(text), "{text}");
        }
    }
}
