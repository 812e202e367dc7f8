//! Versions of an app: the releases its graph has seen, which of them each page, transition and
//! intent was seen in, and what a page showed in each.
//!
//! Key design decision: **nothing a release lacks is deleted; it is marked gone.** A test suite is
//! rerun on every release, and the question it asks after one is "what changed?": a graph that
//! dropped the old release's pages could not answer it, and one that kept them unmarked would
//! plan through screens that are no longer there. So an entity records the versions it was seen
//! in and, once a release is found without it, the version it went in; the planner leaves what is
//! gone out of every route ([`Lifetime::is_gone`]), and a diff between two versions reads both.
//!
//! What is not yet seen again in a new release is *carried*, not gone: an agent sees a few screens
//! of an app at a time, and an exploration spends a budget, so absence from what was seen is no
//! evidence. Only a check that failed (a known way that no longer leads there, an address that
//! shows another page) marks an entity gone.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a version's name came from: `device` (the phone's versionName/versionCode), `site` (what
/// a web site says of itself: a generator meta tag, its footer), `user` (given by whoever ran the
/// exploration or import), `reported` (named by a client's write, `app_version`), `noticed` (the
/// graph started it when a release changed what it knew, and named it `r1`, `r2`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum VersionSource {
    Device,
    Site,
    User,
    #[default]
    Reported,
    Noticed,
}

impl VersionSource {
    /// Its name as answers show it.
    pub fn as_str(self) -> &'static str {
        match self {
            VersionSource::Device => "device",
            VersionSource::Site => "site",
            VersionSource::User => "user",
            VersionSource::Reported => "reported",
            VersionSource::Noticed => "noticed",
        }
    }
}

/// One version of an app, as its graph first met it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AppVersion {
    /// Its name (`2.6.0`, `10.3.1 (10301)`, `r2`).
    pub version: String,
    /// Where the name came from.
    #[serde(default)]
    pub source: VersionSource,
    /// When the graph first met it (RFC 3339).
    pub first_seen: String,
}

/// The name the graph gives the `n`th version it started itself (1-based): `r1`, `r2`, ….
pub fn noticed_version(n: usize) -> String {
    format!("r{n}")
}

/// The versions of its app an entity (page, transition, intent) was seen in, and the one it was
/// found gone in. An entity seen before its app had versions has none: it counts as seen in the
/// app's first version.
pub trait Versioned {
    /// The versions it was seen in, oldest first.
    fn seen_in(&self) -> &[String];
    /// The version it was found gone in (none while it is not).
    fn gone_in(&self) -> Option<&str>;
    /// Its versions and gone mark, to change.
    fn lifetime_mut(&mut self) -> (&mut Vec<String>, &mut Option<String>);

    /// Whether a release was found without it: the planner leaves it out.
    fn is_gone(&self) -> bool {
        self.gone_in().is_some()
    }

    /// Whether it was seen in `version`, of an app whose versions are `versions` (an entity
    /// with no versions was seen in the first).
    fn seen_in_version(&self, version: &str, versions: &[AppVersion]) -> bool {
        seen_in_version(self.seen_in(), version, versions)
    }

    /// Records it seen in `version` (no longer gone); whether that changed anything.
    fn saw(&mut self, version: &str) -> bool {
        let (seen, gone) = self.lifetime_mut();
        let mut changed = gone.take().is_some();
        if !seen.iter().any(|v| v == version) {
            seen.push(version.to_string());
            changed = true;
        }
        changed
    }

    /// Records it gone in `version`; whether that changed anything (what is gone stays gone from
    /// the first version found without it).
    fn went(&mut self, version: &str) -> bool {
        let (_, gone) = self.lifetime_mut();
        if gone.is_some() {
            return false;
        }
        *gone = Some(version.to_string());
        true
    }
}

/// Whether an entity seen in `seen_in` was seen in `version`, of an app whose versions are
/// `versions`: one seen before its app had versions was seen in the first.
pub fn seen_in_version(seen_in: &[String], version: &str, versions: &[AppVersion]) -> bool {
    if seen_in.is_empty() {
        return versions.first().is_some_and(|v| v.version == version);
    }
    seen_in.iter().any(|v| v == version)
}

macro_rules! versioned {
    ($($t:ty),*) => {$(
        impl Versioned for $t {
            fn seen_in(&self) -> &[String] {
                &self.seen_in
            }
            fn gone_in(&self) -> Option<&str> {
                self.gone_in.as_deref()
            }
            fn lifetime_mut(&mut self) -> (&mut Vec<String>, &mut Option<String>) {
                (&mut self.seen_in, &mut self.gone_in)
            }
        }
    )*};
}

versioned!(crate::Page, crate::Transition, crate::Intent);

/// What a page showed in one version of its app: what a diff compares (its actions are its
/// transitions', which know their own versions).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PageFace {
    /// The first version that showed it (it holds until a later face).
    pub version: String,
    /// Its title as shown (a web page's document title; else the page's name).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// The texts of its widgets (not what fields hold), sorted, each once, at most
    /// [`MAX_FACE_TEXTS`]; every run of digits written `#`, so that a clock or a counter is not a
    /// change.
    #[serde(default)]
    pub texts: Vec<String>,
}

/// The most texts a page's face keeps.
pub const MAX_FACE_TEXTS: usize = 300;

impl PageFace {
    /// The face a screen shows: its title and its widgets' stable texts.
    pub fn of<'a>(
        version: &str,
        title: &str,
        texts: impl IntoIterator<Item = &'a str>,
    ) -> PageFace {
        let texts: BTreeSet<String> = texts.into_iter().filter_map(face_text).collect();
        PageFace {
            version: version.to_string(),
            title: title.trim().to_string(),
            texts: texts.into_iter().take(MAX_FACE_TEXTS).collect(),
        }
    }

    /// Whether two faces show the same (their versions aside).
    pub fn same_as(&self, other: &PageFace) -> bool {
        self.title == other.title && self.texts == other.texts
    }
}

/// A text as a face keeps it: its words joined by one space, each run of digits `#`, at most
/// [`MAX_FACE_TEXT_CHARS`] characters; none when empty.
pub(crate) fn face_text(text: &str) -> Option<String> {
    let mut out = String::new();
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        let mut digits = false;
        for c in word.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    out.push('#');
                }
                digits = true;
            } else {
                out.push(c);
                digits = false;
            }
        }
    }
    let out: String = out.chars().take(MAX_FACE_TEXT_CHARS).collect();
    (!out.is_empty()).then_some(out)
}

/// The most characters a face keeps of one text.
pub const MAX_FACE_TEXT_CHARS: usize = 120;

/// Keeps `face` as what a page shows in its version: a face alike to the one before it adds
/// nothing (faces hold until they change), a second face of one version replaces the first.
/// Whether the page's faces changed.
pub fn keep_face(faces: &mut Vec<PageFace>, face: PageFace) -> bool {
    if let Some(last) = faces.last() {
        if last.version == face.version {
            if last.same_as(&face) {
                return false;
            }
            faces.pop();
            let unchanged = faces.last().is_some_and(|before| before.same_as(&face));
            if unchanged {
                return true;
            }
        } else if last.same_as(&face) {
            return false;
        }
    }
    faces.push(face);
    true
}

/// The face a page showed in `version`: the latest face at or before it, by the order of the
/// app's `versions`.
pub fn face_in<'a>(
    faces: &'a [PageFace],
    version: &str,
    versions: &[AppVersion],
) -> Option<&'a PageFace> {
    let order = |v: &str| versions.iter().position(|x| x.version == v);
    let at = order(version)?;
    faces
        .iter()
        .filter(|f| order(&f.version).is_some_and(|o| o <= at))
        .max_by_key(|f| order(&f.version))
}

/// What changed in an app between two of its versions (`atlas diff`, `get_app_diff`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct AppDiff {
    /// The app.
    pub app_id: String,
    /// Its versions, in the order the graph met them (the last is current).
    pub versions: Vec<AppVersion>,
    /// The version compared from.
    pub from: String,
    /// The version compared to.
    pub to: String,
    /// Its pages.
    pub pages: PageChanges,
    /// Its transitions.
    pub transitions: TransitionChanges,
    /// Its intents.
    pub intents: IntentChanges,
}

/// How the pages of two versions differ.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PageChanges {
    /// Seen in the newer version, not in the older.
    pub added: Vec<DiffPage>,
    /// Seen in the older version, found gone by the newer: kept as history.
    pub removed: Vec<DiffPage>,
    /// Seen in both, showing other texts, another title or other actions.
    pub changed: Vec<PageChange>,
    /// Seen in both, showing the same.
    pub unchanged: usize,
    /// Seen in the older version, not yet seen in the newer and not found gone (carried: nothing
    /// has checked them).
    pub unchecked: Vec<DiffPage>,
}

/// A page, as a diff names it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DiffPage {
    /// Its id.
    pub page_id: String,
    /// Its name.
    pub page_name: String,
    /// A web page's address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
}

/// What changed in one page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PageChange {
    /// The page.
    pub page: DiffPage,
    /// Its title in the older and the newer version, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<[String; 2]>,
    /// Texts the newer version shows and the older did not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts_added: Vec<String>,
    /// Texts the older version showed and the newer does not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts_removed: Vec<String>,
    /// Actions (`点击'Search' → Search`) the newer version has and the older had not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions_added: Vec<String>,
    /// Actions the older version had and the newer has not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions_removed: Vec<String>,
}

/// How the transitions of two versions differ.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TransitionChanges {
    /// Seen in the newer version, not in the older.
    pub added: Vec<DiffTransition>,
    /// Seen in the older version, found gone by the newer.
    pub removed: Vec<DiffTransition>,
    /// Seen in both.
    pub kept: usize,
}

/// A transition, as a diff names it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct DiffTransition {
    /// Its id.
    pub transition_id: String,
    /// The page it leaves (its name).
    pub from: String,
    /// Its action, in words.
    pub action: String,
    /// The page it leads to (its name).
    pub to: String,
}

/// How the intents of two versions differ.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct IntentChanges {
    /// Seen in the newer version, not in the older.
    pub added: Vec<String>,
    /// Seen in the older version, found gone by the newer.
    pub removed: Vec<String>,
    /// Served in both, by another way from the app's home page.
    pub path_changed: Vec<IntentPathChange>,
}

/// An intent whose way from the app's home page changed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct IntentPathChange {
    /// The intent.
    pub intent: String,
    /// The page that serves it.
    pub target_page: String,
    /// Its way in the older version, step by step (`点击'Search' → Search`); none when it had
    /// none.
    pub from: Option<Vec<String>>,
    /// Its way in the newer version.
    pub to: Option<Vec<String>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(names: &[&str]) -> Vec<AppVersion> {
        names
            .iter()
            .map(|n| AppVersion {
                version: n.to_string(),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn an_entity_without_versions_was_seen_in_the_first() {
        let page = crate::Page::named("a", "p");
        let v = versions(&["1", "2"]);
        assert!(page.seen_in_version("1", &v));
        assert!(!page.seen_in_version("2", &v));
        assert!(!page.is_gone());
    }

    #[test]
    fn seen_again_a_gone_entity_is_back_and_gone_stays_at_its_first_version() {
        let mut page = crate::Page::named("a", "p");
        assert!(page.saw("1"));
        assert!(!page.saw("1"));
        assert!(page.went("2"));
        assert!(!page.went("3"));
        assert_eq!(page.gone_in(), Some("2"));
        assert!(page.saw("4"));
        assert!(!page.is_gone());
        assert_eq!(page.seen_in(), ["1", "4"]);
    }

    #[test]
    fn faces_are_kept_only_when_they_change() {
        let v = versions(&["1", "2", "3"]);
        let mut faces = Vec::new();
        assert!(keep_face(&mut faces, PageFace::of("1", "Home", ["a", "b"])));
        assert!(!keep_face(
            &mut faces,
            PageFace::of("2", "Home", ["b", "a"])
        ));
        assert!(keep_face(&mut faces, PageFace::of("3", "Home", ["a", "c"])));
        assert_eq!(faces.len(), 2);
        assert_eq!(face_in(&faces, "2", &v).unwrap().texts, ["a", "b"]);
        assert_eq!(face_in(&faces, "3", &v).unwrap().texts, ["a", "c"]);
        // A second screen of version 3 like version 1's: the face of 3 is gone again.
        assert!(keep_face(&mut faces, PageFace::of("3", "Home", ["a", "b"])));
        assert_eq!(faces.len(), 1);
        assert_eq!(face_in(&faces, "3", &v).unwrap().texts, ["a", "b"]);
    }

    #[test]
    fn a_face_folds_what_changes_on_every_screen() {
        let face = PageFace::of(
            "1",
            " Issues ",
            ["12:30", "09:05", "Search  issues", "Search issues", " "],
        );
        assert_eq!(face.title, "Issues");
        assert_eq!(face.texts, ["#:#", "Search issues"]);
    }
}
