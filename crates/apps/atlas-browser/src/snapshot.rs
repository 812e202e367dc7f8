//! A page as the explorer reads it, and its identity: seed 001 §6's DOM fingerprint.
//!
//! Identity is what a person would call "the same screen": the same address (once the parts of
//! it that only carry the time, a session or a tracker are dropped), the same title (digits
//! aside: counters and clocks), the same forms (field names and types, never values), the same
//! link targets (never texts) and the same tag structure of what is visible (texts ignored, runs
//! of alike siblings folded, the selected tab kept). So a clock ticking, a list growing by one,
//! or a link that carries `?from=<now>` make no new state; a tab switched without a URL change
//! does.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use crate::template::normalize_url;

/// The script that reads a page (run in the page; returns this module's [`Snapshot`] as JSON).
pub const SNAPSHOT_JS: &str = include_str!("snapshot.js");

/// What the reader saw of a page.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Snapshot {
    /// The page's address.
    pub url: String,
    /// Its title.
    pub title: String,
    /// What the document is (`text/html`; a JSON or CSV file shown in the tab is no page).
    #[serde(default)]
    pub content_type: String,
    /// Its h1 and h2 headings.
    #[serde(default)]
    pub headings: Vec<String>,
    /// Selectors of the selected tabs, current items, open panels.
    #[serde(default)]
    pub selected: Vec<String>,
    /// Its forms.
    #[serde(default)]
    pub forms: Vec<Form>,
    /// Its links.
    #[serde(default)]
    pub links: Vec<Link>,
    /// Its buttons.
    #[serde(default)]
    pub buttons: Vec<Button>,
    /// Its element structure, for the fingerprint.
    #[serde(default)]
    pub structure: String,
    /// Its height, in pixels.
    #[serde(default)]
    pub scroll_height: u64,
    /// The window's height.
    #[serde(default)]
    pub viewport_height: u64,
    /// Its elements.
    #[serde(default)]
    pub element_count: u64,
    /// Selectors of images without a text alternative.
    #[serde(default)]
    pub images_without_alt: Vec<String>,
    /// Selectors of fields without a label.
    #[serde(default)]
    pub unlabelled_fields: Vec<String>,
    /// The start of the page's text, for the summary.
    #[serde(default)]
    pub text: String,
    /// What it shows of its software's release.
    #[serde(default)]
    pub version_hints: crate::site_version::VersionHints,
}

/// A form.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Form {
    /// Its selector.
    pub selector: String,
    /// GET or POST.
    pub method: String,
    /// Where it sends.
    pub action: String,
    /// Its id attribute.
    #[serde(default)]
    pub id: String,
    /// Its name attribute.
    #[serde(default)]
    pub name: String,
    /// Its class attribute.
    #[serde(default)]
    pub classes: String,
    /// Its fields.
    pub fields: Vec<Field>,
    /// Its submit button, if any.
    pub submit: Option<Submit>,
}

/// A form's field.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Field {
    /// Its selector.
    pub selector: String,
    /// Its name.
    pub name: String,
    /// Its type (`text`, `password`, `email`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// It must be filled.
    #[serde(default)]
    pub required: bool,
    /// Its longest value.
    pub maxlength: Option<u64>,
    /// Its least value.
    pub min: Option<String>,
    /// Its greatest value.
    pub max: Option<String>,
    /// The pattern its value must match.
    pub pattern: Option<String>,
    /// Its label.
    #[serde(default)]
    pub label: String,
    /// The page filled it itself (a value attribute, a text area's text): it is sent so.
    #[serde(default)]
    pub prefilled: bool,
}

/// A form's submit button.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Submit {
    /// Its selector.
    pub selector: String,
    /// Its text.
    pub text: String,
}

/// A link.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Link {
    /// Its selector.
    pub selector: String,
    /// Where it leads.
    pub href: String,
    /// Its text.
    pub text: String,
    /// It is in a navigation bar.
    #[serde(default)]
    pub in_nav: bool,
    /// Its attributes that say what it does (title, aria-label, class).
    #[serde(default)]
    pub attrs: String,
}

/// A button outside a form's submit.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Button {
    /// Its selector.
    pub selector: String,
    /// Its text.
    pub text: String,
    /// Its attributes that say what it does.
    #[serde(default)]
    pub attrs: String,
    /// The method of the form it sends (by its `form` attribute), if any.
    #[serde(default)]
    pub form_method: String,
}

/// Digits in a title are counters and clocks ("(3) Inbox", "12:04:59").
fn normalize_title(title: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in title.trim().chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

impl Snapshot {
    /// Reads what [`SNAPSHOT_JS`] answered.
    pub fn parse(text: &str) -> Result<Snapshot, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The facts identity is computed from, as JSON with sorted keys.
    fn features(&self, with_address: bool) -> serde_json::Value {
        let mut forms: Vec<String> = self
            .forms
            .iter()
            .map(|f| {
                let mut fields: Vec<String> = f
                    .fields
                    .iter()
                    .map(|x| format!("{}:{}", x.name, x.kind))
                    .collect();
                fields.sort();
                format!(
                    "{} {} [{}]",
                    f.method,
                    normalize_url(&f.action),
                    fields.join(",")
                )
            })
            .collect();
        forms.sort();
        let mut links: Vec<String> = self.links.iter().map(|l| normalize_url(&l.href)).collect();
        links.sort();
        links.dedup();
        serde_json::json!({
            "url": if with_address { normalize_url(&self.url) } else { String::new() },
            "title": if with_address { normalize_title(&self.title) } else { String::new() },
            "forms": forms,
            "links": if with_address { links } else { Vec::new() },
            "structure": self.structure,
        })
    }

    /// Seed 001 §6: SHA-256 of the normalised features, its first 16 hex digits.
    pub fn fingerprint(&self) -> String {
        digest(&self.features(true))
    }

    /// The fingerprint, and what tells a near-duplicate ([`same_screen`]): the key of what must
    /// be equal (address, title, forms, what is selected, main headings) and the link targets,
    /// normalised.
    /// One reading of the features serves all three.
    pub fn identity(&self) -> Identity {
        let features = self.features(true);
        // The main headings name what a screen shows: a panel swapped in on the same address
        // (another heading, its own list) is another screen however many links it shares.
        let headings: Vec<String> = self.headings.iter().map(|h| normalize_title(h)).collect();
        let key = digest(&serde_json::json!({
            "url": features["url"],
            "title": features["title"],
            "forms": features["forms"],
            "selected": self.selected,
            "headings": headings,
        }));
        let links = features["links"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Identity {
            fingerprint: digest(&features),
            key,
            links,
            url: features["url"].as_str().unwrap_or_default().to_string(),
            route: crate::template::route_template(&self.url),
            layout: self.template(),
            shape: crate::template::shape(&self.structure),
        }
    }

    /// The layout alone (forms and structure, no address, title or links): pages made from one
    /// template share it, however many there are.
    pub fn template(&self) -> String {
        digest(&self.features(false))
    }

    /// A page a person reads and acts on, rather than a file the browser shows (JSON, CSV,
    /// text, an image): only pages are states.
    pub fn is_page(&self) -> bool {
        let kind = self.content_type.to_ascii_lowercase();
        kind.is_empty() || kind.contains("html")
    }

    /// A short human name: the title, else the first heading, else the address's path.
    pub fn name(&self) -> String {
        let title = self.title.trim();
        if !title.is_empty() {
            return title.chars().take(60).collect();
        }
        if let Some(h) = self.headings.first() {
            return h.chars().take(60).collect();
        }
        Url::parse(&self.url)
            .map(|u| u.path().to_string())
            .unwrap_or_else(|_| self.url.clone())
    }
}

/// What a page is known by (see [`Snapshot::identity`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// Its DOM fingerprint.
    pub fingerprint: String,
    /// What near-duplicates share: the path, the title and the headings.
    pub key: String,
    /// Sorted, without repeats.
    pub links: Vec<String>,
    /// The address, normalised.
    pub url: String,
    /// Its route template ([`crate::template::route_template`]).
    pub route: String,
    /// Its layout ([`Snapshot::template`]).
    pub layout: String,
    /// Its element structure as tag paths ([`crate::template::shape`]).
    pub shape: Vec<u32>,
}

/// Two pages of one [`Identity::key`] (address, title, forms, selection and main headings) are
/// one state when most of their links are shared:
/// sites add a few links as one browses (a trail of visited pages, "recent changes", a flash
/// message), and those make no new screen.
pub fn same_screen(a: &[String], b: &[String]) -> bool {
    if a.is_empty() && b.is_empty() {
        return true;
    }
    let shared = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    let union = a.len() + b.len() - shared;
    shared as f64 >= NEAR_DUPLICATE * union as f64
}

/// The share of links two near-duplicate pages have in common, at least.
const NEAR_DUPLICATE: f64 = 0.7;

fn digest(value: &serde_json::Value) -> String {
    // serde_json's maps are sorted (no preserve_order), so the text is canonical.
    let text = serde_json::to_string(value).unwrap_or_default();
    let hash = Sha256::digest(text.as_bytes());
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_session_and_tracking_parameters_do_not_change_the_address() {
        let a = normalize_url("http://127.0.0.1:8000/news?from=2026-11-23T11:19:13Z&page=2#top");
        let b = normalize_url("http://127.0.0.1:8000/news?page=2&from=2026-11-24T08:00:00Z");
        assert_eq!(a, b);
        assert_eq!(a, "http://127.0.0.1:8000/news?page=2");
        assert_eq!(
            normalize_url("http://x/a?sid=abc&t=1732350000"),
            normalize_url("http://x/a?sid=zzz&t=1732359999")
        );
        assert_ne!(
            normalize_url("http://x/a?page=2"),
            normalize_url("http://x/a?page=3")
        );
        assert_eq!(
            normalize_url("http://x/app#/settings"),
            "http://x/app#/settings"
        );
        assert_eq!(
            normalize_url("http://x/a?k=0f8fad5b-d9cb-469f-a165-70867728950e"),
            "http://x/a"
        );
    }

    #[test]
    fn near_duplicates_share_most_links() {
        let links =
            |n: usize| -> Vec<String> { (0..n).map(|i| format!("http://x/{i:02}")).collect() };
        // A trail of two more visited pages on a page of twenty links: the same screen.
        assert!(same_screen(&links(20), &links(22)));
        // Half the links new: another screen.
        assert!(!same_screen(&links(10), &links(20)));
        assert!(same_screen(&[], &[]));
    }

    #[test]
    fn texts_and_values_do_not_make_a_state_but_forms_and_tabs_do() {
        let page = |title: &str, structure: &str, field: &str| Snapshot {
            url: "http://x/clock".into(),
            title: title.into(),
            structure: structure.into(),
            forms: vec![Form {
                method: "get".into(),
                action: "http://x/search".into(),
                fields: vec![Field {
                    name: field.into(),
                    kind: "text".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let at_noon = page("Clock 12:00:01", "body(p,ul(li))", "q");
        assert_eq!(
            at_noon.fingerprint(),
            page("Clock 12:00:02", "body(p,ul(li))", "q").fingerprint()
        );
        assert_ne!(
            at_noon.fingerprint(),
            page("Clock 12:00:01", "body(p,ul(li*))", "q").fingerprint()
        );
        assert_ne!(
            at_noon.fingerprint(),
            page("Clock 12:00:01", "body(p,ul(li))", "query").fingerprint()
        );
        assert_eq!(at_noon.fingerprint().len(), 16);
    }
}
