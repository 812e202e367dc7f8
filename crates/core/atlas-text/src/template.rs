//! Instructions as templates with values: "create a note named 'test'" is the template
//! "create a note named ⟨v⟩" with the value `test`. Two instructions with the same template ask
//! for the same steps with other values, so a remembered task can be replayed with the new ones.

use crate::tokenize::words;

/// The placeholder a value leaves in a template's words.
pub const VALUE: &str = "⟨v⟩";

/// An instruction split into its template words and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The words of the text outside its values, lower-cased, in order.
    pub words: Vec<String>,
    /// The values the text gives (quoted texts and bare numbers), in order.
    pub values: Vec<String>,
    /// Whether each value was quoted (a name to type) rather than a bare number (often an option).
    pub quoted: Vec<bool>,
}

const QUOTES: &[(char, char)] = &[
    ('\'', '\''),
    ('"', '"'),
    ('‘', '’'),
    ('“', '”'),
    ('「', '」'),
    ('『', '』'),
];

/// Whether `c` may stand next to a quote that opens or closes a value (so `Bob's` is no quote).
fn is_boundary(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => !c.is_ascii_alphanumeric(),
    }
}

/// Splits `text` into plain runs and values (quoted text, and numbers such as `5`, `7:00`,
/// `12345678900`, `1.5`).
fn segments(text: &str) -> Vec<(Segment, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<(Segment, String)> = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let before = if i == 0 { None } else { Some(chars[i - 1]) };
        if let Some(&(_, close)) = QUOTES
            .iter()
            .find(|(open, _)| *open == c)
            .filter(|_| is_boundary(before))
        {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == close && is_boundary(chars.get(j + 1).copied()));
            if let Some(end) = end.filter(|&e| e > i + 1) {
                out.push((Segment::Plain, std::mem::take(&mut plain)));
                out.push((
                    Segment::Quoted,
                    chars[i + 1..end]
                        .iter()
                        .collect::<String>()
                        .trim()
                        .to_string(),
                ));
                i = end + 1;
                continue;
            }
        }
        if c.is_ascii_digit() && !before.is_some_and(|b| b.is_ascii_alphabetic()) {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit()
                    || (matches!(chars[j], ':' | '.' | ',')
                        && chars.get(j + 1).is_some_and(|n| n.is_ascii_digit())))
            {
                j += 1;
            }
            out.push((Segment::Plain, std::mem::take(&mut plain)));
            out.push((Segment::Number, chars[i..j].iter().collect()));
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    out.push((Segment::Plain, plain));
    out.retain(|(kind, s)| *kind != Segment::Plain || !s.trim().is_empty());
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment {
    Plain,
    Quoted,
    Number,
}

impl Template {
    /// The template of a text: its words and the values it gives.
    pub fn of(text: &str) -> Template {
        let mut template = Template {
            words: Vec::new(),
            values: Vec::new(),
            quoted: Vec::new(),
        };
        for (kind, s) in segments(text) {
            if kind == Segment::Plain {
                template.words.extend(words(&s));
            } else {
                template.words.push(VALUE.to_string());
                template.values.push(s);
                template.quoted.push(kind == Segment::Quoted);
            }
        }
        template
    }

    /// The words said since the value before the `k`-th one ("send a text message" for "Morning"
    /// in `send a text message "Morning" to Alice`): what that value is for.
    pub fn cue(&self, k: usize) -> &[String] {
        let mut seen = 0;
        let mut start = 0;
        for (i, word) in self.words.iter().enumerate() {
            if word == VALUE {
                if seen == k {
                    return &self.words[start..i];
                }
                seen += 1;
                start = i + 1;
            }
        }
        &[]
    }

    /// How alike two templates are, 0..1: Jaccard of their word sets (values count as one word).
    pub fn similarity(&self, other: &Template) -> f64 {
        let a: std::collections::BTreeSet<&str> = self.words.iter().map(String::as_str).collect();
        let b: std::collections::BTreeSet<&str> = other.words.iter().map(String::as_str).collect();
        let union = a.union(&b).count();
        if union == 0 {
            0.0
        } else {
            a.intersection(&b).count() as f64 / union as f64
        }
    }

    /// Pairs this template's values with `other`'s, in order, when both name as many.
    pub fn value_map<'a>(&'a self, other: &'a Template) -> Option<Vec<(&'a str, &'a str)>> {
        (self.values.len() == other.values.len()).then(|| {
            self.values
                .iter()
                .map(String::as_str)
                .zip(other.values.iter().map(String::as_str))
                .collect()
        })
    }
}

/// `text` with each old value replaced by its new one (whole text first, then as a part;
/// case-insensitively). `None` when no value occurs in it.
pub fn substitute(text: &str, map: &[(&str, &str)]) -> Option<String> {
    let trimmed = text.trim();
    for (old, new) in map {
        if !old.is_empty() && trimmed.eq_ignore_ascii_case(old) {
            return Some((*new).to_string());
        }
    }
    let lower = text.to_lowercase();
    for (old, new) in map {
        let old_lower = old.to_lowercase();
        if old_lower.is_empty() {
            continue;
        }
        if let Some(at) = lower.find(&old_lower) {
            // Only as a whole token: "5 minutes" may become "1 minutes", but "15" never "11".
            let before = lower[..at].chars().next_back();
            let after = lower[at + old_lower.len()..].chars().next();
            if !before.is_some_and(char::is_alphanumeric)
                && !after.is_some_and(char::is_alphanumeric)
                && lower.len() == text.len()
            {
                return Some(format!(
                    "{}{}{}",
                    &text[..at],
                    new,
                    &text[at + old_lower.len()..]
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cue_is_what_was_said_since_the_last_value() {
        let t = Template::of("Create a new contact Bob, mobile number 12345678900 and 'x'");
        assert_eq!(
            t.cue(0),
            words("Create a new contact Bob, mobile number").as_slice()
        );
        assert_eq!(t.cue(1), words("and").as_slice());
        assert!(t.cue(2).is_empty());
    }

    #[test]
    fn values_are_quotes_and_numbers_not_apostrophes() {
        let t = Template::of("create a new event, the task is 'laundry', save it");
        assert_eq!(t.values, ["laundry"]);
        assert!(t.words.contains(&VALUE.to_string()));
        assert_eq!(
            Template::of("Open Bob's information page").values,
            Vec::<String>::new()
        );
        assert_eq!(
            Template::of("add all my contacts' birthdays").values,
            Vec::<String>::new()
        );
        assert_eq!(
            Template::of("turn on the '7:00 am' alarm").values,
            ["7:00 am"]
        );
        assert_eq!(
            Template::of("change the snooze time to 30 min").values,
            ["30"]
        );
        assert_eq!(Template::of("name it 'x' at 30").quoted, [true, false]);
        assert_eq!(
            Template::of("Export contacts to 'classmate.vcf''").values,
            ["classmate.vcf"]
        );
        assert_eq!(Template::of("新建一个名为'周报'的笔记").values, ["周报"]);
        assert_eq!(Template::of("call 911 from mp3 player").values, ["911"]);
    }

    #[test]
    fn same_template_other_values() {
        let a = Template::of("Create a text note named 'NewTextNote'");
        let b = Template::of("Create a text note named 'Groceries'");
        assert_eq!(a.similarity(&b), 1.0);
        assert_eq!(a.value_map(&b).unwrap(), [("NewTextNote", "Groceries")]);
        let c = Template::of("Delete the note 'Diary'");
        assert!(a.similarity(&c) < 0.5);
    }

    #[test]
    fn substitution_replaces_whole_tokens_only() {
        let map = [("5", "1"), ("laundry", "homework")];
        assert_eq!(substitute("laundry", &map).as_deref(), Some("homework"));
        assert_eq!(substitute("5 minutes", &map).as_deref(), Some("1 minutes"));
        assert_eq!(substitute("15 minutes", &map), None);
        assert_eq!(substitute("Save", &map), None);
    }
}
