//! What the explorer types into a form: a value each field accepts, a second value where the
//! first found nothing, and telling its own values apart where a page's address carries one.
//!
//! Key design decision: **values by the field's type and name alone**, with nothing of the page,
//! so that what the explorer typed is recognisable anywhere (in an address, a route template)
//! without knowing where it was typed.

/// The password typed where no credentials were given.
pub const TEST_PASSWORD: &str = "Explorer#2026";

/// What to type into a field, by its type `kind` (and, for text, its `name`; for a number, its
/// `min`): values a form accepts.
pub fn test_value(
    kind: &str,
    name: &str,
    min: Option<&str>,
    credentials: Option<(&str, &str)>,
) -> String {
    let name = name.to_lowercase();
    match kind {
        "email" => "explorer@example.com".into(),
        "number" | "range" => min
            .filter(|m| !m.is_empty())
            .map_or_else(|| "1".into(), str::to_string),
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

    #[test]
    fn a_value_by_the_fields_type_and_name_and_the_explorers_own_told_apart() {
        assert_eq!(test_value("date", "when", None, None), "2026-01-31");
        assert_eq!(
            test_value("text", "username", None, Some(("ann", "pw"))),
            "ann"
        );
        assert_eq!(test_value("number", "n", Some("5"), None), "5");
        assert_eq!(test_value("text", "q", None, None), "测试");
        assert!(typed_by_explorer(&test_value("text", "title", None, None)));
        assert!(!typed_by_explorer("orders"));
        assert_eq!(other_test_value("search", "x").as_deref(), Some("a"));
        assert_eq!(other_test_value("date", "when"), None);
    }
}
