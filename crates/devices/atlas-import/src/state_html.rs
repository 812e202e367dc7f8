//! DroidTask's simplified screen HTML: one element per line (a label may span lines), each with
//! an `id`, e.g. `<button id=5 text='New Event'></button>`, `<input id=3 >Title</input>`,
//! `<checkbox id=6 checked=False>All-day OFF</checkbox>`.

use atlas_model::Widget;

/// One element of a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    /// The element's index on its screen (what a DroidTask `Choice` names).
    pub index: usize,
    /// `button`, `checkbox`, `p`, `input`.
    pub tag: String,
    /// The `text='…'` attribute (a content description), if any.
    pub text_attr: Option<String>,
    /// What stands between the tags.
    pub content: String,
    /// A checkbox's state, when it has one.
    pub checked: Option<bool>,
}

impl Element {
    /// What a person would call it: the content description, else the visible text.
    pub fn label(&self) -> &str {
        match &self.text_attr {
            Some(t) if !t.trim().is_empty() => t.trim(),
            _ => self.content.trim(),
        }
    }

    /// Whether it is a text field.
    pub fn is_input(&self) -> bool {
        self.tag == "input"
    }

    /// The synthetic last element every DroidTask screen has: the Back key.
    pub fn is_back_key(&self) -> bool {
        self.tag == "button" && self.text_attr.is_none() && self.content.trim() == "go back"
    }

    /// The widget as an agent sends it: `{id: index, text: label, type: tag}`.
    pub fn widget(&self) -> Widget {
        Widget {
            id: self.index.to_string(),
            text: self.label().to_string(),
            widget_type: self.tag.clone(),
            checked: self.checked,
            ..Default::default()
        }
    }
}

/// A screen's HTML that cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unreadable screen HTML at byte {at}: {what}")]
pub struct HtmlError {
    /// Where, in bytes.
    pub at: usize,
    /// What was expected there.
    pub what: String,
}

/// Parses a whole screen. Quoted attribute values may hold `>`; contents may hold newlines.
pub fn parse_screen(html: &str) -> Result<Vec<Element>, HtmlError> {
    let mut elements = Vec::new();
    let mut rest = html;
    let offset = |rest: &str| html.len() - rest.len();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(elements);
        }
        let err = |rest: &str, what: &str| HtmlError {
            at: offset(rest),
            what: what.to_string(),
        };
        let Some(after_lt) = rest.strip_prefix('<') else {
            return Err(err(rest, "expected '<'"));
        };
        let tag_len = after_lt
            .find(|c: char| !c.is_ascii_alphanumeric())
            .ok_or_else(|| err(rest, "unterminated tag"))?;
        let tag = &after_lt[..tag_len];
        if tag.is_empty() {
            return Err(err(rest, "empty tag name"));
        }
        // Attributes up to the '>' that is not inside quotes.
        let mut attrs = Vec::new();
        let mut cursor = &after_lt[tag_len..];
        loop {
            cursor = cursor.trim_start();
            if let Some(after) = cursor.strip_prefix('>') {
                cursor = after;
                break;
            }
            let eq = cursor
                .find('=')
                .ok_or_else(|| err(cursor, "attribute without '='"))?;
            let name = cursor[..eq].trim().to_string();
            let value_start = &cursor[eq + 1..];
            let (value, after) = match value_start.chars().next() {
                Some(q @ ('\'' | '"')) => {
                    let end = value_start[1..]
                        .find(q)
                        .ok_or_else(|| err(value_start, "unterminated quote"))?;
                    (value_start[1..1 + end].to_string(), &value_start[end + 2..])
                }
                _ => {
                    let end = value_start
                        .find(|c: char| c.is_whitespace() || c == '>')
                        .unwrap_or(value_start.len());
                    (value_start[..end].to_string(), &value_start[end..])
                }
            };
            attrs.push((name, value));
            cursor = after;
        }
        let close = format!("</{tag}>");
        let end = cursor
            .find(&close)
            .ok_or_else(|| err(cursor, &format!("missing {close}")))?;
        let content = cursor[..end].to_string();
        rest = &cursor[end + close.len()..];
        let attr = |n: &str| attrs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let index = attr("id")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| err(rest, "element without a numeric id"))?;
        elements.push(Element {
            index,
            tag: tag.to_string(),
            text_attr: attr("text"),
            content,
            checked: attr("checked").map(|v| v.eq_ignore_ascii_case("true")),
        });
    }
}

/// The screen's title as a person reads it: its first text element, else its first label.
pub fn title(elements: &[Element]) -> String {
    elements
        .iter()
        .find(|e| e.tag == "p" && !e.label().is_empty())
        .or_else(|| {
            elements
                .iter()
                .find(|e| !e.label().is_empty() && !e.is_back_key())
        })
        .map(|e| e.label().chars().take(40).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_element_kind() {
        let html = "<p id=0>Calendar</p>\n <button id=1 text='Search'></button>\n <input id=3 >Title</input>\n <checkbox id=6 checked=False>All-day OFF</checkbox>\n <checkbox id=7 checked=True>Update the file\n(note </checkbox>\n <button id=8 text='a > b'></button>\n <button id=9>go back</button>";
        let e = parse_screen(html).unwrap();
        assert_eq!(e.len(), 7);
        assert_eq!((e[0].tag.as_str(), e[0].label()), ("p", "Calendar"));
        assert_eq!(e[1].label(), "Search");
        assert!(e[2].is_input() && e[2].label() == "Title");
        assert_eq!(e[3].checked, Some(false));
        assert_eq!(e[4].checked, Some(true));
        assert_eq!(e[4].label(), "Update the file\n(note");
        assert_eq!(e[5].label(), "a > b");
        assert!(e[6].is_back_key());
        assert_eq!(e[6].index, 9);
        assert_eq!(title(&e), "Calendar");
        assert_eq!(e[1].widget().widget_type, "button");
    }

    #[test]
    fn broken_html_is_an_error() {
        assert!(parse_screen("<button id=1>never closed").is_err());
        assert!(parse_screen("<p>no id</p>").is_err());
        assert!(parse_screen("plain text").is_err());
    }
}
