//! An intent that names one item of a kind of page ("order 7", "打开 doc 12"): the way ends on
//! that item, not on whichever example of the page the graph happens to remember.
//!
//! A web site is a few kinds of pages with many items each, and the graph keeps a page a kind
//! (the explorer sees `/orders/1` … `/orders/5` and keeps one page "Order"). Planned as it is,
//! the way to "order 7" clicks the link the planner liked best, to order 1. Two rules mend that,
//! both about the web in general: among the ways into the page, the one whose label names the
//! value is the way to that item (the table's link "7"); where none does, the page's address
//! template ([`atlas_model::Page::url_template`]) filled with the value opens it.

use atlas_api::navigation::PathStep;
use atlas_graph::{AppGraph, Plan};
use atlas_model::Counts;

/// A character a value may have to go into an address: never more than one path segment.
fn fits_an_address(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// The values an intent names that can stand for an item: its numbers and quoted texts made of
/// letters, digits, `-`, `_` and `.` only, so that a value put into an address is never more
/// than one path segment (no `/`, `?`, `#` or `..` from an intent reaches an address).
pub(crate) struct Item {
    values: Vec<String>,
    /// The intent's words, a value written [`atlas_text::VALUE`].
    words: Vec<String>,
}

impl Item {
    /// The item an intent names, when it names one.
    pub(crate) fn named(intent: &str) -> Option<Item> {
        let template = atlas_text::Template::of(intent);
        let values: Vec<String> = template
            .values
            .into_iter()
            .filter(|v| !v.is_empty() && v != "." && v != ".." && v.chars().all(fits_an_address))
            .collect();
        (!values.is_empty()).then_some(Item {
            values,
            words: template.words,
        })
    }

    /// The page of the app whose items the intent names: a page with an address template and a
    /// name or intent that reads as the intent with another value ("Doc 1" for "open doc 12"),
    /// the one that says the most of it; none when two say as much. A list page ("Docs") is not
    /// such a page: its name has no value in it.
    pub(crate) fn page_of_kind(&self, app: &AppGraph) -> Option<String> {
        let mut best: Option<(usize, &str)> = None;
        let mut tied = false;
        for page in app.pages() {
            if page.url_template.is_empty() || page.gone_in.is_some() {
                continue;
            }
            let says = std::iter::once(&page.page_name)
                .chain(&page.intents)
                .filter_map(|text| self.reads_as(text))
                .max();
            let Some(says) = says else { continue };
            match best {
                Some((most, _)) if most > says => {}
                Some((most, _)) if most == says => tied = true,
                _ => {
                    best = Some((says, &page.page_id));
                    tied = false;
                }
            }
        }
        best.filter(|_| !tied).map(|(_, id)| id.to_string())
    }

    /// How many words a page's text shares with the intent, when all of its words, a value among
    /// them, are the intent's.
    fn reads_as(&self, text: &str) -> Option<usize> {
        let words = atlas_text::Template::of(text).words;
        let has_value = words.iter().any(|w| w == atlas_text::VALUE);
        (has_value && words.len() > 1 && words.iter().all(|w| self.words.contains(w)))
            .then_some(words.len())
    }

    /// Whether a label names one of the values as a word of its own ("Doc 12" names 12, "Doc
    /// 120" does not; "第12章" does).
    fn is_named_by(&self, label: &str) -> bool {
        label
            .split(|c: char| !fits_an_address(c))
            .any(|word| self.values.iter().any(|v| v.eq_ignore_ascii_case(word)))
    }

    /// Takes, for the plan's last step, the way into the same page whose label names the item,
    /// when there is one still in the app; true when the last step names it.
    pub(crate) fn prefer_named_way(&self, app: &AppGraph, plan: &mut Plan) -> bool {
        let Some(last) = plan.steps.last_mut() else {
            return false;
        };
        let taken = app.transition_at(*last);
        if self.is_named_by(&taken.action().widget_text) {
            return true;
        }
        let named = app
            .between(taken.from_page(), taken.to_page())
            .filter(|t| !t.is_gone() && self.is_named_by(&t.action().widget_text))
            .max_by(|a, b| {
                let rate = |t: &atlas_graph::TransitionRef<'_>| t.counts().smoothed_success_rate();
                rate(a).total_cmp(&rate(b))
            });
        match named {
            Some(t) => {
                *last = t.slot();
                true
            }
            None => false,
        }
    }

    /// The address template filled with the item's value, when it takes one item and the intent
    /// names one value: with more, which value fills which place is a guess ("row 3 of table 9").
    pub(crate) fn address(&self, template: &str) -> Option<String> {
        let placeholder = atlas_model::Page::URL_ITEM;
        match (template.split_once(placeholder), self.values.as_slice()) {
            (Some((before, after)), [value]) if !after.contains(placeholder) => {
                Some(format!("{before}{value}{after}"))
            }
            _ => None,
        }
    }

    /// Ends the described way on the item by its address, when the target page has a template
    /// the item fills and the way's last step does not already name it: the last step into the
    /// page becomes opening the address (or, already on the page, one such step is added). The
    /// step keeps the confidence of the step it replaces; an added one has an unreported step's.
    pub(crate) fn open_by_address(
        &self,
        app: &AppGraph,
        start: &str,
        target: &str,
        steps: &mut Vec<PathStep>,
    ) {
        let Some(page) = app.page(target) else {
            return;
        };
        let Some(address) = self.address(&page.url_template) else {
            return;
        };
        let unreported = crate::round3(crate::confidence(&Counts::default()));
        let replaced = steps.pop();
        let step = PathStep {
            step: steps.len() + 1,
            from_page: replaced
                .as_ref()
                .map_or_else(|| start.to_string(), |s| s.from_page.clone()),
            action_type: "navigate".into(),
            widget_id: String::new(),
            widget_text: String::new(),
            widget_xpath: String::new(),
            input_text: String::new(),
            url: Some(address.clone()),
            expected_page: target.to_string(),
            expected_page_name: page.page_name.clone(),
            confidence: replaced.as_ref().map_or(unreported, |s| s.confidence),
            success_rate: replaced.as_ref().map_or(0.0, |s| s.success_rate),
            description: format!("打开{address}，进入{}", page.page_name),
        };
        steps.push(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_names_an_item_by_its_numbers_and_quoted_words_only() {
        assert_eq!(Item::named("order 7").unwrap().values, ["7"]);
        assert_eq!(
            Item::named("打开 'WikiStart' 页面").unwrap().values,
            ["WikiStart"]
        );
        assert!(Item::named("open the orders").is_none());
        // Nothing that would be more than one segment of an address.
        assert!(Item::named("open '../admin'").is_none());
        assert!(Item::named("open 'a/b'").is_none());
    }

    #[test]
    fn an_item_reads_as_the_name_of_its_kind_with_another_value() {
        let item = Item::named("打开 doc 12").unwrap();
        assert_eq!(item.reads_as("Doc 1"), Some(2));
        assert_eq!(item.reads_as("Docs"), None);
        assert_eq!(item.reads_as("Product 1"), None);
        assert_eq!(item.reads_as("1"), None);
    }

    #[test]
    fn a_label_names_the_value_as_a_word_of_its_own() {
        let item = Item::named("doc 12").unwrap();
        assert!(item.is_named_by("Doc 12"));
        assert!(item.is_named_by("第12章"));
        assert!(!item.is_named_by("Doc 120"));
        assert!(!item.is_named_by("Doc 1"));
    }

    #[test]
    fn an_address_is_filled_only_where_the_value_has_one_place() {
        let item = Item::named("order 7").unwrap();
        assert_eq!(
            item.address("http://x/shop/orders/{id}?action=edit")
                .as_deref(),
            Some("http://x/shop/orders/7?action=edit")
        );
        assert_eq!(item.address("http://x/{id}/rows/{id}"), None);
        assert_eq!(item.address(""), None);
        let two = Item::named("row 3 of table 9").unwrap();
        assert_eq!(two.address("http://x/t/{id}"), None);
    }
}
