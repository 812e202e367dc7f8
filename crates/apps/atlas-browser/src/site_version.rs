//! The release a website says it is, read off a page: its generator meta tag
//! (`<meta name="generator" content="MediaWiki 1.41.0">`), else a version in its footer
//! (`Powered by Datasette v0.65.5`, `Roundup 2.6.0`, `版本 3.2`).
//!
//! Only these two places, because they are where web software states its own release by
//! convention; a version-like number in a page's body is a product's, an issue's or a price. A
//! footer also holds dates, prices and ratings (`© 2024`, `11.02.2024`, `4.5`), so there a
//! number counts as a release when it says so (`v0.65.5`, `version 1.2`, `版本 3.2`), or when it
//! has three parts or more after a word (`Roundup 2.6.0`), and never when a part is a year; a
//! generator tag says nothing else, so its first version-like word is taken as it is.

use serde::{Deserialize, Serialize};

/// The longest version kept: a longer "version" is not one a person would name a release by.
const MAX_VERSION_CHARS: usize = 40;
/// A footer's number whose first part is this or more is taken for a year.
const FIRST_YEAR: u64 = 1900;

/// What a page shows of its software's release, as the snapshot reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionHints {
    /// The contents of its `<meta name="generator">` tags.
    #[serde(default)]
    pub generator: String,
    /// The text of its footers (`footer`, `[role=contentinfo]`), with their elements' titles.
    #[serde(default)]
    pub footer: String,
}

impl VersionHints {
    /// The release the page names, if it names one.
    pub fn version(&self) -> Option<String> {
        words(&self.generator)
            .find_map(|word| version_in(word).map(|(v, _)| v))
            .or_else(|| {
                let mut before: Option<&str> = None;
                for word in words(&self.footer) {
                    if let Some((version, prefixed)) = version_in(word) {
                        let said = prefixed || before.is_some_and(names_a_release);
                        let named = before.is_some_and(|b| b.chars().any(char::is_alphabetic))
                            && version.split('.').count() >= 3;
                        if (said || named) && !has_a_year(&version) {
                            return Some(version);
                        }
                    }
                    before = Some(word);
                }
                None
            })
    }
}

/// The words of a text: split at spaces and at the punctuation around versions in prose.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || ",;:()[]|·/—–\"'«»（）：，、".contains(c))
        .filter(|w| !w.is_empty())
}

/// A word that is a version — digits, a dot and more digits, then letters, digits, dots, `+`
/// or `-` (`0.65.5`, `2.6.0b1`, `1.41.0-rc.1`), after an optional `v` or `版本` — and whether
/// it had the prefix.
fn version_in(word: &str) -> Option<(String, bool)> {
    let (rest, prefixed) = match word
        .strip_prefix(['v', 'V'])
        .or_else(|| word.strip_prefix("版本"))
    {
        Some(rest) => (rest, true),
        None => (word, false),
    };
    let rest = rest.trim_end_matches(['.', '-', '+']);
    let (major, tail) = rest.split_once('.')?;
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let minor: String = tail.chars().take_while(char::is_ascii_digit).collect();
    let well_formed = numeric(major)
        && !minor.is_empty()
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+-".contains(c));
    (well_formed && rest.chars().count() <= MAX_VERSION_CHARS).then(|| (rest.to_string(), prefixed))
}

/// Whether a word says a release follows.
fn names_a_release(word: &str) -> bool {
    ["version", "ver", "release", "v", "版本"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w))
}

/// Whether a part of a number is a year: then it is a date.
fn has_a_year(version: &str) -> bool {
    version
        .split(['.', '-', '+'])
        .filter_map(|part| part.parse::<u64>().ok())
        .any(|n| n >= FIRST_YEAR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(generator: &str, footer: &str) -> VersionHints {
        VersionHints {
            generator: generator.into(),
            footer: footer.into(),
        }
    }

    fn version(generator: &str, footer: &str) -> Option<String> {
        hints(generator, footer).version()
    }

    #[test]
    fn a_generator_tag_names_the_release() {
        assert_eq!(version("MediaWiki 1.41.0", ""), Some("1.41.0".into()));
        assert_eq!(
            version("WordPress 6.4.2", "© 2024 v9.9"),
            Some("6.4.2".into())
        );
        assert_eq!(
            version("Hugo v0.120.4+extended", ""),
            Some("0.120.4+extended".into())
        );
    }

    #[test]
    fn a_footer_names_it_after_a_word_or_a_v() {
        assert_eq!(
            version("", "Powered by Datasette Datasette v0.65.5"),
            Some("0.65.5".into())
        );
        assert_eq!(
            version("Docusaurus", "Roundup 2.6.0b1, an issue tracker"),
            Some("2.6.0b1".into())
        );
        assert_eq!(version("", "版本 3.2 · 关于我们"), Some("3.2".into()));
        assert_eq!(version("", "版本3.2"), Some("3.2".into()));
        assert_eq!(version("", "(version 1.0.7)."), Some("1.0.7".into()));
    }

    #[test]
    fn dates_prices_and_bare_numbers_are_not_releases() {
        assert_eq!(version("", "© 2024 Example Inc."), None);
        assert_eq!(version("", "Updated 2024.11.02"), None);
        assert_eq!(version("", "Updated 11.02.2024"), None);
        assert_eq!(version("", "Only 3.50 today"), None);
        assert_eq!(version("", "Rated 4.5/5 · 10,000 users"), None);
        assert_eq!(
            version("", "Python 3.12"),
            None,
            "two parts after a name: too weak"
        );
        assert_eq!(version("", "Version 3.12"), Some("3.12".into()));
        assert_eq!(version("", "1.2.3"), None, "no word before it");
        assert_eq!(
            version("", "Build 1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18"),
            None
        );
        assert_eq!(
            version("", "Page v1"),
            None,
            "one part is a number, not a release"
        );
        assert_eq!(version("", ""), None);
    }
}
