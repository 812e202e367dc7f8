//! Deterministic ids and the input checks every id-bearing string goes through.

use sha2::{Digest, Sha256};

use crate::{Action, AtlasError};

/// The longest name, text or id Atlas accepts in one field. Far above any real label, far below
/// what would bloat a file past the store's 10 MB limit.
pub const MAX_TEXT_LEN: usize = 4096;

pub(crate) fn hex_digest(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        // Length-prefix each part so ("ab","c") and ("a","bc") cannot collide.
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A page's id: 16 hex digits from its app id and page name, so adding a page twice is idempotent
/// and the id matches seed 001's `^[a-f0-9]{8,}$` node-id pattern.
pub fn page_id(app_id: &str, page_name: &str) -> String {
    hex_digest(&["page", app_id, page_name])
}

/// An intent's id, from its app and text.
pub fn intent_id(app_id: &str, intent_text: &str) -> String {
    hex_digest(&["intent", app_id, intent_text])
}

/// A transition's id: its from page, its action (type, widget, input) and its to page.
pub fn transition_id(from_page: &str, action: &Action, to_page: &str) -> String {
    hex_digest(&[
        "transition",
        from_page,
        &action.action_type,
        action.widget_key(),
        &action.input_text,
        to_page,
    ])
}

/// Seed 001 §9.1: anything that is not a word character or `-` becomes `_`, so no id can walk out
/// of its folder. Word characters are Unicode's, so Chinese names stay readable.
pub fn sanitize_node_id(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Keep directory names short enough for every filesystem (255 bytes) with room for a prefix.
    let mut out = String::new();
    for c in cleaned.chars() {
        if out.len() + c.len_utf8() > 96 {
            break;
        }
        out.push(c);
    }
    if out.is_empty() { "_".to_string() } else { out }
}

/// What [`validate_text`] takes of a required text, as a JSON Schema pattern: no control
/// character but tab and newline, and something besides white space.
pub const REQUIRED_TEXT_PATTERN: &str = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*[^\\s\\u0000-\\u001F\\u007F-\\u009F][^\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F]*$";
/// An optional text that, when given, must not be empty or blank: the same pattern.
pub const NON_BLANK_TEXT: &str = REQUIRED_TEXT_PATTERN;

/// Checks a caller-supplied text field: not empty (when required), no NUL or other control
/// characters that break files and logs, and not longer than [`MAX_TEXT_LEN`].
pub fn validate_text(field: &str, value: &str, required: bool) -> Result<(), AtlasError> {
    if required && value.trim().is_empty() {
        return Err(AtlasError::invalid(
            field,
            format!("{field} must not be empty"),
        ));
    }
    if value.len() > MAX_TEXT_LEN {
        return Err(AtlasError::invalid(
            field,
            format!("{field} is longer than {MAX_TEXT_LEN} bytes"),
        ));
    }
    if value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(AtlasError::invalid(
            field,
            format!("{field} contains control characters"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_ids_are_deterministic_and_distinct() {
        assert_eq!(page_id("com.a", "首页"), page_id("com.a", "首页"));
        assert_ne!(page_id("com.a", "首页"), page_id("com.b", "首页"));
        assert_ne!(page_id("ab", "c"), page_id("a", "bc"));
        let id = page_id("com.a", "首页");
        assert_eq!(id.len(), 16);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn sanitizing_removes_path_tricks_and_keeps_chinese() {
        assert_eq!(sanitize_node_id("../../etc/passwd"), "______etc_passwd");
        assert_eq!(sanitize_node_id("外卖 首页"), "外卖_首页");
        assert_eq!(sanitize_node_id(""), "_");
        assert!(sanitize_node_id(&"长".repeat(200)).len() <= 96);
    }

    #[test]
    fn control_characters_are_rejected() {
        assert!(validate_text("x", "a\0b", true).is_err());
        assert!(validate_text("x", "  ", true).is_err());
        assert!(validate_text("x", "", false).is_ok());
        assert!(validate_text("x", "点外卖", true).is_ok());
    }
}
