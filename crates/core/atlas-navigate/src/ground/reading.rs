//! The instruction read against the app and the session: which of its words labels can say, how
//! telling each is, which are said already, which part of it comes next.

use std::collections::{HashMap, HashSet};

use atlas_graph::AppGraph;
use atlas_model::TraceStep;
use atlas_text::{Template, words};

use super::facts::{actionable, is_choice, is_input, label_words, stable_part};

/// A part of the instruction is done when this share of what labels can say of it was said.
const PART_DONE: f64 = 0.5;
/// How much a word of a later part of the instruction counts while an earlier part is open.
const LATER_PART: f64 = 0.5;

/// What one `get_next_action` call knows of its instruction.
pub(crate) struct Reading<'a> {
    pub(crate) app: &'a AppGraph,
    pub(crate) intent: &'a str,
    pub(crate) current_page: &'a str,
    pub(crate) taken: &'a [TraceStep],
    pub(crate) template: Template,
    /// Pages showing each word, for its rarity.
    df: HashMap<String, usize>,
    /// Every word the instruction asks (without the app's name and what things are now).
    pub(crate) asked: HashSet<String>,
    /// The instruction's parts in order, as words.
    pub(crate) parts: Vec<HashSet<String>>,
    /// The parts as written.
    pub(crate) part_texts: Vec<String>,
    pub(crate) done: Vec<bool>,
    pub(crate) current_part: Option<usize>,
    /// What the session has not said yet.
    pub(crate) remaining: HashSet<String>,
    /// The rarity mass of the words labels can say.
    pub(crate) mass: f64,
    pub(crate) remaining_mass: f64,
    /// The words of each value the instruction gives.
    pub(crate) value_words: Vec<HashSet<String>>,
    /// What the session typed.
    pub(crate) typed: HashSet<String>,
    /// Where each word first stands in the instruction (the act opening a part left out).
    pub(crate) order: HashMap<String, usize>,
    /// The instruction's opening act ("change", "打开").
    pub(crate) verb: HashSet<String>,
    /// Whether the session chose something on this page (typing in a field aside).
    pub(crate) chose_here: bool,
}

impl<'a> Reading<'a> {
    pub(crate) fn new(
        app: &'a AppGraph,
        intent: &'a str,
        current_page: &'a str,
        taken: &'a [TraceStep],
    ) -> Reading<'a> {
        let mut df: HashMap<String, usize> = HashMap::new();
        for page in app.pages() {
            let mut seen = HashSet::new();
            for w in &page.widgets {
                seen.extend(label_words(&w.text));
            }
            for word in seen {
                *df.entry(word).or_default() += 1;
            }
        }
        let template = Template::of(intent);
        let said = said_so_far(app, &template, taken, current_page);
        let value_words: Vec<HashSet<String>> = template
            .values
            .iter()
            .map(|v| label_words(v))
            .filter(|w| !w.is_empty())
            .collect();
        let typed: HashSet<String> = taken
            .iter()
            .flat_map(|s| label_words(&s.action.input_text))
            .collect();
        let part_texts = clauses(&without_current_state(&without_app_name(intent)));
        let parts: Vec<HashSet<String>> = part_texts.iter().map(|c| label_words(c)).collect();
        let asked: HashSet<String> = parts.iter().flatten().cloned().collect();
        let mut reading = Reading {
            app,
            intent,
            current_page,
            taken,
            template,
            df,
            remaining: asked
                .iter()
                .filter(|w| !said.contains(*w))
                .cloned()
                .collect(),
            asked,
            parts,
            part_texts,
            done: Vec::new(),
            current_part: None,
            mass: 0.0,
            remaining_mass: 0.0,
            value_words,
            typed,
            order: HashMap::new(),
            verb: intent
                .split_whitespace()
                .next()
                .map(label_words)
                .unwrap_or_default(),
            chose_here: false,
        };
        // Shares are of the whole instruction, but only of what some label of the app says: no
        // tap can say "function" of "turn on the vibration function".
        reading.mass = reading.idf_mass(&reading.asked);
        reading.done = reading
            .parts
            .iter()
            .map(|part| {
                let said =
                    reading.idf_mass(part.iter().filter(|w| !reading.remaining.contains(*w)));
                said >= reading.idf_mass(part) * PART_DONE
            })
            .collect();
        reading.current_part = reading.done.iter().position(|d| !d);
        reading.chose_here = taken.iter().any(|s| {
            s.from_page == current_page
                && s.action.action_type != "input"
                && !app.page(current_page).is_some_and(|p| {
                    p.widgets
                        .iter()
                        .any(|w| is_input(w) && w.text.trim() == s.action.widget_text.trim())
                })
        });
        reading.drop_passed_over();
        reading.remaining_mass = reading.weighted_mass(&reading.remaining);
        // The act each part opens with ("open", "change") says how, not what: it has no place.
        for word in reading
            .part_texts
            .iter()
            .flat_map(|c| words(c).into_iter().skip(1))
            .flat_map(|w| label_words(&w))
        {
            let next = reading.order.len();
            reading.order.entry(word).or_insert(next);
        }
        reading
    }

    /// What a part that is done leaves unsaid ("items" of "sort the items by date" once sorted
    /// by date) asks for nothing more when the session saw a widget saying it and chose
    /// otherwise. Never the values, nor a part's last word: where "change the theme to light"
    /// ends is what it asks for.
    fn drop_passed_over(&mut self) {
        let kept: HashSet<String> = self
            .value_words
            .iter()
            .flatten()
            .cloned()
            .chain(
                self.part_texts
                    .iter()
                    .filter_map(|c| words(c).into_iter().rev().find(|w| self.df.contains_key(w))),
            )
            .collect();
        // Pages left pass over what they offered; a choice made on this page passes over its
        // other options too, typing in a field does not.
        let passed_over: HashSet<String> = self
            .taken
            .iter()
            .map(|s| s.from_page.as_str())
            .filter(|p| *p != self.current_page || self.chose_here)
            .collect::<HashSet<_>>()
            .into_iter()
            .filter_map(|p| self.app.page(p))
            .flat_map(|p| p.widgets.iter().filter(|w| actionable(w)))
            .flat_map(|w| label_words(stable_part(&w.text)))
            .collect();
        let (parts, done) = (&self.parts, &self.done);
        self.remaining.retain(|w| {
            kept.contains(w)
                || !passed_over.contains(w)
                || parts
                    .iter()
                    .zip(done)
                    .any(|(part, done)| !done && part.contains(w))
        });
    }

    /// How telling a word is: rare among the app's pages.
    pub(crate) fn idf(&self, w: &str) -> f64 {
        let pages = self.app.pages().len() as f64;
        (1.0 + pages / (1.0 + *self.df.get(w).unwrap_or(&0) as f64)).ln()
    }

    /// The rarity of the `words` some label of the app can say, summed.
    pub(crate) fn idf_mass<'w>(&self, words: impl IntoIterator<Item = &'w String>) -> f64 {
        words
            .into_iter()
            .filter(|w| self.sayable(w))
            .map(|w| self.idf(w))
            .sum()
    }

    /// The same, each word at its [`Reading::weight`].
    pub(crate) fn weighted_mass<'w>(&self, words: impl IntoIterator<Item = &'w String>) -> f64 {
        words
            .into_iter()
            .filter(|w| self.sayable(w))
            .map(|w| self.weight(w))
            .sum()
    }

    /// Whether some label of the app can say `w`.
    pub(crate) fn sayable(&self, w: &str) -> bool {
        self.df.contains_key(w)
    }

    /// A remaining word's weight: its rarity, halved while it belongs only to a part after the
    /// one not yet done (instructions give their parts in the order they are done).
    pub(crate) fn weight(&self, w: &str) -> f64 {
        self.idf(w)
            * if self.now_or_before(w) {
                1.0
            } else {
                LATER_PART
            }
    }

    /// Whether `w` belongs to the part of the instruction now open (or an earlier one).
    pub(crate) fn now_or_before(&self, w: &str) -> bool {
        self.current_part
            .is_none_or(|k| self.parts[..=k].iter().any(|p| p.contains(w)))
    }

    /// The remaining words a label says. Numbers alone ("05:00", "3 items") are values shown
    /// everywhere: they count only for a label showing a whole value the instruction names.
    pub(crate) fn says(&self, label: &str) -> Vec<String> {
        let shared: Vec<String> = label_words(stable_part(label))
            .intersection(&self.remaining)
            .cloned()
            .collect();
        let numeric = shared.iter().all(|x| x.chars().all(|c| c.is_ascii_digit()));
        if numeric
            && !self
                .value_words
                .iter()
                .any(|v| v.iter().all(|x| shared.contains(x)))
        {
            return Vec::new();
        }
        shared
    }

    /// The share of the instruction's mass that `words` carry, each at its weight.
    pub(crate) fn share_of(&self, words: impl IntoIterator<Item = impl AsRef<str>>) -> f64 {
        if self.remaining_mass <= 0.0 {
            return 0.0;
        }
        words
            .into_iter()
            .map(|w| self.weight(w.as_ref()))
            .sum::<f64>()
            / self.remaining_mass
    }

    /// The share of the whole instruction a label says of what remains (idf, not part-weighted).
    pub(crate) fn own_share(&self, label: &str) -> f64 {
        if self.mass <= 0.0 {
            return 0.0;
        }
        self.says(label).iter().map(|w| self.idf(w)).sum::<f64>() / self.mass
    }

    /// The share of the whole instruction a label says, said or not.
    pub(crate) fn asked_share(&self, label: &str) -> f64 {
        if self.mass <= 0.0 {
            return 0.0;
        }
        self.idf_mass(label_words(stable_part(label)).intersection(&self.asked)) / self.mass
    }

    /// The share of a label's own words the instruction asks for: "Light" is all "light", "Auto
    /// light / dark" a third of it.
    pub(crate) fn fit(&self, label: &str) -> f64 {
        let own = label_words(stable_part(label));
        own.iter().filter(|w| self.asked.contains(*w)).count() as f64 / own.len().max(1) as f64
    }
}

/// The words of the instruction the session has said by what it did: the labels it tapped, the
/// page it reached, what it typed.
fn said_so_far(
    app: &AppGraph,
    template: &Template,
    taken: &[TraceStep],
    current_page: &str,
) -> HashSet<String> {
    // What a tapped setting showed under its name ("Font size<br>Medium") was its old value,
    // not a choice made: only the name counts as said.
    let mut said: HashSet<String> = taken
        .iter()
        .flat_map(|s| label_words(stable_part(&s.action.widget_text)))
        .collect();
    // Once the task has moved, the page it reached says where it is: its title and section
    // headings name the place, and an instruction's words for that place ("in the list view")
    // are satisfied by being there, not by tapping something else.
    if !taken.is_empty()
        && let Some(page) = app.page(current_page)
    {
        said.extend(
            page.widgets
                .iter()
                .filter(|w| !actionable(w))
                .flat_map(|w| label_words(&w.text)),
        );
    }
    // What the session typed is said, and so is all the instruction says up to the last value
    // typed: instructions give their parts in order.
    said.extend(taken.iter().flat_map(|s| label_words(&s.action.input_text)));
    let last_typed = template.values.iter().rposition(|v| {
        let v = v.to_lowercase();
        taken.iter().any(|s| {
            let typed = s.action.input_text.to_lowercase();
            !typed.is_empty() && (v.starts_with(&typed) || typed.starts_with(&v))
        })
    });
    if let Some(k) = last_typed {
        // An option still on offer here is chosen, not typed: a form may ask for the name first
        // and the kind after ("a checklist note called 'x'").
        let options_here: HashSet<String> = app
            .page(current_page)
            .map(|p| {
                p.widgets
                    .iter()
                    .filter(|w| is_choice(w))
                    .flat_map(|w| label_words(stable_part(&w.text)))
                    .collect()
            })
            .unwrap_or_default();
        said.extend(
            (0..=k)
                .flat_map(|j| template.cue(j))
                .flat_map(|w| label_words(w))
                .filter(|w| !options_here.contains(w)),
        );
    }
    said
}

/// The instruction without the app's own name ("… in the Calendar app"): it says where, not
/// what. A name is a run of up to three words ending before "app" or "application" and starting
/// with a capital that does not start the sentence.
fn without_app_name(intent: &str) -> String {
    let words: Vec<&str> = intent.split_whitespace().collect();
    let mut keep = vec![true; words.len()];
    for (i, w) in words.iter().enumerate() {
        let bare = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase();
        if bare != "app" && bare != "application" {
            continue;
        }
        let start = (i.saturating_sub(3)..i)
            .find(|&j| j > 0 && words[j].chars().next().is_some_and(char::is_uppercase));
        if let Some(start) = start {
            keep[start..=i].iter_mut().for_each(|k| *k = false);
        }
    }
    words
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(w, _)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The instruction without what it says things are now: in "change the view from monthly to
/// yearly", "monthly" is where the setting stands, "yearly" the goal.
fn without_current_state(intent: &str) -> String {
    let words: Vec<&str> = intent.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase()
    };
    let Some(from) = words.iter().position(|w| bare(w) == "from") else {
        return intent.to_string();
    };
    let Some(to) = words[from + 1..]
        .iter()
        .position(|w| bare(w) == "to")
        .map(|i| i + from + 1)
    else {
        return intent.to_string();
    };
    words[..from]
        .iter()
        .chain(&words[to..])
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts of an instruction in the order it gives them: split at commas, semicolons, "and",
/// "then" and their Chinese counterparts, outside quoted values.
fn clauses(intent: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in intent.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '‘' | '“' | '「') => {
                quote = Some(match c {
                    '‘' => '’',
                    '“' => '”',
                    '「' => '」',
                    other => other,
                })
            }
            None if matches!(c, ',' | ';' | '，' | '；' | '。' | '、') => {
                parts.push(String::new());
                continue;
            }
            None => {}
        }
        parts.last_mut().expect("never empty").push(c);
    }
    parts
        .iter()
        .flat_map(|p| {
            p.split(" and ")
                .flat_map(|q| q.split(" then "))
                .flat_map(|q| q.split("然后"))
                .flat_map(|q| q.split("并且"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_things_are_now_is_not_the_goal() {
        assert_eq!(
            without_current_state("change the view from monthly to yearly"),
            "change the view to yearly"
        );
        assert_eq!(without_current_state("sort by size"), "sort by size");
    }

    #[test]
    fn an_instruction_splits_into_parts_in_order() {
        assert_eq!(
            clauses("open 'android, old' folder, sort the files and save it"),
            vec!["open 'android, old' folder", " sort the files", "save it"]
        );
        assert_eq!(clauses("新建笔记然后保存"), vec!["新建笔记", "保存"]);
    }

    #[test]
    fn the_app_name_is_context() {
        assert_eq!(
            without_app_name("Use 24 hour formats in the Calendar app"),
            "Use 24 hour formats in the"
        );
        assert_eq!(
            without_app_name("change font size of the File manager app to large"),
            "change font size of the to large"
        );
        assert_eq!(without_app_name("Sort apps by title"), "Sort apps by title");
        assert_eq!(
            without_app_name("Disable closing this app when launching"),
            "Disable closing this app when launching"
        );
    }
}
