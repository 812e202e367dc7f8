//! What phones dump of their screens, as the widgets an agent sends: Android's
//! `uiautomator dump` XML and HarmonyOS's `uitest dumpLayout` JSON.
//!
//! Only nodes a person could see or act on become widgets: those with a text or description, and
//! those that are clickable, checkable or editable. Layout containers are left out, so two dumps of
//! one screen give the same widgets however deep the view tree is.
//!
//! Key design decision: **a pure crate of its own, below both the devices and the service.** A
//! device reads its screen with it, the service reads a dump an agent sends with it, and the
//! dataset readers stay out of both: the same dump gives the same widgets on every path, and no
//! phone backend pulls in a benchmark's file formats to read a screen.

use atlas_model::Widget;

/// A dump that is not what its format says.
#[derive(Debug, thiserror::Error)]
#[error("{format}: {message}{}", source.as_ref().map(|s| s.to_string()).unwrap_or_default())]
pub struct UiTreeError {
    /// Which dump: `uiautomator dump` or `dumpLayout`.
    pub format: &'static str,
    /// What is wrong with it (before its parser's error, when one said so).
    pub message: String,
    /// The XML or JSON parser's error.
    #[source]
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// Most widgets read from one dump (a screen with more is cut, not refused).
const MAX_WIDGETS: usize = 1000;

fn format_error(format: &'static str, message: String) -> UiTreeError {
    UiTreeError {
        format,
        message,
        source: None,
    }
}

/// A dump its parser could not read.
fn unparsed(
    format: &'static str,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> UiTreeError {
    UiTreeError {
        format,
        message: String::new(),
        source: Some(source.into()),
    }
}

/// The class's simple name: `android.widget.Button` → `Button`.
fn simple_class(class: &str) -> String {
    class.rsplit('.').next().unwrap_or(class).to_string()
}

/// A resource id without its package: `com.app:id/title` → `title`.
fn short_id(id: &str) -> String {
    id.rsplit_once(":id/")
        .map_or(id, |(_, name)| name)
        .to_string()
}

fn widget(
    id: &str,
    text: &str,
    description: &str,
    class: &str,
    bounds: &str,
    actionable: bool,
    checked: Option<bool>,
) -> Option<Widget> {
    let text = if text.trim().is_empty() {
        description.trim()
    } else {
        text.trim()
    };
    (!text.is_empty() || actionable).then(|| Widget {
        id: short_id(id),
        text: text.to_string(),
        widget_type: simple_class(class),
        bounds: bounds.to_string(),
        checked,
        seen: 0,
    })
}

/// A widget's checked state: known when it can be checked, or when the dump says it is checked or
/// selected (a tab, a list choice); otherwise unknown rather than "not checked".
fn state(checkable: &str, on: &[&str]) -> Option<bool> {
    let on = on.contains(&"true");
    (on || checkable == "true").then_some(on)
}

/// Android `uiautomator dump` XML (`<hierarchy><node text=… resource-id=… class=… …>`).
pub fn uiautomator_widgets(xml: &str) -> Result<Vec<Widget>, UiTreeError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| unparsed("uiautomator dump", e))?;
    if doc.root_element().tag_name().name() != "hierarchy" {
        return Err(format_error(
            "uiautomator dump",
            format!(
                "the root element is <{}>, not <hierarchy>",
                doc.root_element().tag_name().name()
            ),
        ));
    }
    let mut widgets = Vec::new();
    for node in doc.descendants().filter(|n| n.has_tag_name("node")) {
        let attr = |name: &str| node.attribute(name).unwrap_or_default();
        let class = attr("class");
        let actionable = ["clickable", "checkable", "long-clickable"]
            .iter()
            .any(|a| attr(a) == "true")
            || class.contains("EditText");
        if let Some(w) = widget(
            attr("resource-id"),
            attr("text"),
            attr("content-desc"),
            class,
            attr("bounds"),
            actionable,
            state(attr("checkable"), &[attr("checked"), attr("selected")]),
        ) {
            widgets.push(w);
        }
        if widgets.len() >= MAX_WIDGETS {
            break;
        }
    }
    Ok(widgets)
}

/// HarmonyOS `uitest dumpLayout` JSON: a tree of `{"attributes": {…}, "children": […]}` whose
/// attribute values are strings.
pub fn harmony_widgets(json: &str) -> Result<Vec<Widget>, UiTreeError> {
    let root: serde_json::Value =
        serde_json::from_str(json).map_err(|e| unparsed("dumpLayout", e))?;
    if !root.is_object() || root.get("attributes").is_none() && root.get("children").is_none() {
        return Err(format_error(
            "dumpLayout",
            "expected an object with attributes and children".into(),
        ));
    }
    let mut widgets = Vec::new();
    let mut stack = vec![&root];
    while let Some(node) = stack.pop() {
        let attrs = &node["attributes"];
        let attr = |name: &str| attrs[name].as_str().unwrap_or_default();
        let kind = attr("type");
        let actionable = ["clickable", "checkable", "longClickable"]
            .iter()
            .any(|a| attr(a) == "true")
            || kind.contains("TextInput")
            || kind.contains("TextArea");
        let id = if attr("id").is_empty() {
            attr("key")
        } else {
            attr("id")
        };
        if let Some(w) = widget(
            id,
            attr("text"),
            attr("description"),
            kind,
            attr("bounds"),
            actionable,
            state(attr("checkable"), &[attr("checked"), attr("selected")]),
        ) {
            widgets.push(w);
        }
        if widgets.len() >= MAX_WIDGETS {
            break;
        }
        if let Some(children) = node["children"].as_array() {
            // Reversed onto the stack, so widgets come out in the tree's own order.
            stack.extend(children.iter().rev());
        }
    }
    Ok(widgets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uiautomator_xml() {
        let xml = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
  <node index="0" text="" resource-id="" class="android.widget.FrameLayout" content-desc="" clickable="false" bounds="[0,0][1080,2400]">
    <node index="0" text="首页" resource-id="com.sankuai.meituan:id/title" class="android.widget.TextView" content-desc="" clickable="false" bounds="[0,80][1080,200]"/>
    <node index="1" text="" resource-id="com.sankuai.meituan:id/search" class="android.widget.EditText" content-desc="" clickable="true" bounds="[40,220][1040,320]"/>
    <node index="2" text="" resource-id="" class="android.widget.ImageButton" content-desc="外卖" clickable="true" bounds="[40,400][300,600]"/>
    <node index="3" text="" resource-id="" class="android.widget.LinearLayout" content-desc="" clickable="false" bounds="[0,600][1080,700]"/>
  </node>
</hierarchy>"#;
        let w = uiautomator_widgets(xml).unwrap();
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(
            (
                w[0].id.as_str(),
                w[0].text.as_str(),
                w[0].widget_type.as_str()
            ),
            ("title", "首页", "TextView")
        );
        assert_eq!(
            (w[1].id.as_str(), w[1].widget_type.as_str()),
            ("search", "EditText")
        );
        assert_eq!(
            (w[2].text.as_str(), w[2].bounds.as_str()),
            ("外卖", "[40,400][300,600]")
        );
        assert_eq!(w[1].checked, None);
        let checked = uiautomator_widgets(r#"<hierarchy><node text="Title" class="android.widget.RadioButton" checkable="true" checked="true" clickable="true"/><node text="Date" class="android.widget.RadioButton" checkable="true" checked="false" clickable="true"/><node text="Chats" class="android.widget.TextView" selected="true" clickable="true"/></hierarchy>"#).unwrap();
        assert_eq!(
            checked.iter().map(|w| w.checked).collect::<Vec<_>>(),
            [Some(true), Some(false), Some(true)]
        );
        assert!(uiautomator_widgets("<html/>").is_err());
        assert!(uiautomator_widgets("<hierarchy><node").is_err());
    }

    #[test]
    fn reads_harmony_dump_layout() {
        let json = r#"{"attributes": {"type": "root", "text": "", "clickable": "false"}, "children": [
            {"attributes": {"type": "Text", "id": "title", "text": "设置", "clickable": "false", "bounds": "[0,0][720,100]"}, "children": []},
            {"attributes": {"type": "Column", "text": ""}, "children": [
                {"attributes": {"type": "Button", "key": "wifi", "text": "WLAN", "clickable": "true"}, "children": []},
                {"attributes": {"type": "Toggle", "id": "", "text": "", "checkable": "true", "checked": "true"}, "children": []}
            ]}
        ]}"#;
        let w = harmony_widgets(json).unwrap();
        assert_eq!(
            w.iter()
                .map(|w| (w.id.as_str(), w.text.as_str(), w.widget_type.as_str()))
                .collect::<Vec<_>>(),
            [
                ("title", "设置", "Text"),
                ("wifi", "WLAN", "Button"),
                ("", "", "Toggle")
            ]
        );
        assert_eq!(w[2].checked, Some(true));
        assert_eq!(w[1].checked, None);
        assert!(harmony_widgets("[1,2]").is_err());
        assert!(harmony_widgets("{").is_err());
    }
}
