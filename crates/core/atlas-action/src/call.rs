//! Finding calls in a model's reply and reading their arguments: `do(action="Tap",
//! element=[500,300])` → name `do`, arguments `action` and `element`.
//!
//! The reader is a small hand-written scanner over characters, not a regular expression: the
//! arguments hold quoted strings that may contain `)`, `,`, `=` and quotes of the other kind, so
//! only a reader that tracks quoting knows where a call ends. It accepts what models write
//! beside Python: single, double and curly quotes, backslash escapes, full-width commas and
//! brackets, and a call whose closing parenthesis is missing because the reply ended.

/// A literal argument value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string, quoted with `'`, `"` or `“”`.
    Str(String),
    /// A number.
    Num(f64),
    /// A list, `[…]`.
    List(Vec<Value>),
    /// `True` or `False`.
    Bool(bool),
    /// `None`.
    None,
}

/// One call: its name (`do`, `finish`) and its keyword arguments in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `do` or `finish`, as written.
    pub name: String,
    /// Its keyword arguments, in order.
    pub arguments: Vec<(String, Value)>,
}

/// Why a call could not be read, for the message the model gets back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

/// Every call named one of `names` that starts in `text`, in order, each read or failed: the
/// caller takes the first well-formed one. A name counts only where it starts a word (so
/// `undo(` or `todo(` is not `do(`).
pub fn calls(text: &str, names: &[&str]) -> Vec<Result<Call, ReadError>> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]);
        let name = names.iter().find(|name| {
            let n: Vec<char> = name.chars().collect();
            starts_word
                && chars[i..].starts_with(&n)
                && next_non_space(&chars, i + n.len()).is_some_and(|(_, c)| c == '(' || c == '（')
        });
        match name {
            Some(name) => {
                let (open, _) =
                    next_non_space(&chars, i + name.chars().count()).expect("a parenthesis");
                let mut reader = Reader {
                    chars: &chars,
                    at: open + 1,
                };
                found.push(reader.arguments().map(|arguments| Call {
                    name: name.to_string(),
                    arguments,
                }));
                i = open + 1;
            }
            None => i += 1,
        }
    }
    found
}

/// Names are ASCII (`do`, `action`, `element`): a call may follow Chinese text directly
/// (`点击do(…)`), but not an ASCII word (`undo(`).
fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn next_non_space(chars: &[char], from: usize) -> Option<(usize, char)> {
    chars[from.min(chars.len())..]
        .iter()
        .enumerate()
        .find(|(_, c)| !c.is_whitespace())
        .map(|(k, c)| (from + k, *c))
}

struct Reader<'a> {
    chars: &'a [char],
    at: usize,
}

/// How deep lists may nest: models write `[x, y]`; deeper is noise, and a bound keeps the
/// reader's recursion small whatever the input.
const MAX_DEPTH: usize = 4;

impl Reader<'_> {
    fn peek(&mut self) -> Option<char> {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
        self.chars.get(self.at).copied()
    }

    fn fail<T>(&self, what: impl Into<String>) -> Result<T, ReadError> {
        Err(ReadError(what.into()))
    }

    /// `name=value, …` up to the closing parenthesis (or the end of the reply, or an
    /// `</answer>` tag: a parenthesis models forget).
    fn arguments(&mut self) -> Result<Vec<(String, Value)>, ReadError> {
        let mut arguments = Vec::new();
        loop {
            match self.peek() {
                None => return Ok(arguments),
                Some(')' | '）') => return Ok(arguments),
                Some('<') if self.rest_starts_with("</answer") => return Ok(arguments),
                Some(_) => {}
            }
            let name = self.identifier()?;
            match self.peek() {
                Some('=' | '＝' | ':' | '：') => self.at += 1,
                _ => return self.fail(format!("`{name}` is not followed by `=`")),
            }
            let value = self.value(0)?;
            arguments.push((name, value));
            match self.peek() {
                Some(',' | '，') => self.at += 1,
                None | Some(')' | '）') => {}
                Some('<') if self.rest_starts_with("</answer") => {}
                Some(c) => return self.fail(format!("unexpected `{c}` after an argument")),
            }
        }
    }

    fn rest_starts_with(&self, s: &str) -> bool {
        let s: Vec<char> = s.chars().collect();
        self.chars[self.at..].starts_with(&s)
    }

    fn identifier(&mut self) -> Result<String, ReadError> {
        let start = self.at;
        while self.chars.get(self.at).is_some_and(|c| is_ident(*c)) {
            self.at += 1;
        }
        if self.at == start {
            let c = self
                .chars
                .get(self.at)
                .map_or("the end".into(), |c| format!("`{c}`"));
            return self.fail(format!("expected an argument name, found {c}"));
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    fn value(&mut self, depth: usize) -> Result<Value, ReadError> {
        match self.peek() {
            Some(q @ ('"' | '\'' | '“' | '‘' | '「')) => {
                self.at += 1;
                self.string(closing(q))
            }
            Some('[' | '［' | '(') if depth < MAX_DEPTH => {
                let close = match self.chars[self.at] {
                    '[' => ']',
                    '［' => '］',
                    _ => ')',
                };
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    match self.peek() {
                        Some(c) if c == close || (close == ']' && c == '］') => {
                            self.at += 1;
                            return Ok(Value::List(items));
                        }
                        None => return self.fail("a list that never closes"),
                        _ => {}
                    }
                    items.push(self.value(depth + 1)?);
                    if let Some(',' | '，') = self.peek() {
                        self.at += 1;
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if is_ident(c) => {
                let word = self.identifier()?;
                match word.as_str() {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::None),
                    // A bare word where a string belongs (`action=Tap`): taken as that string.
                    _ => Ok(Value::Str(word)),
                }
            }
            Some(c) => self.fail(format!("unexpected `{c}` where a value belongs")),
            None => self.fail("the reply ends where a value belongs"),
        }
    }

    /// A quoted string after its opening quote: backslash escapes as in Python and JSON.
    fn string(&mut self, close: char) -> Result<Value, ReadError> {
        let mut out = String::new();
        loop {
            let Some(&c) = self.chars.get(self.at) else {
                return self.fail("a string that never closes");
            };
            self.at += 1;
            match c {
                '\\' => {
                    let Some(&e) = self.chars.get(self.at) else {
                        return self.fail("a string that never closes");
                    };
                    self.at += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'u' => match self.unicode_escape() {
                            Some(ch) => out.push(ch),
                            None => out.push_str("\\u"),
                        },
                        other => out.push(other),
                    }
                }
                c if c == close => return Ok(Value::Str(out)),
                c => out.push(c),
            }
        }
    }

    fn unicode_escape(&mut self) -> Option<char> {
        let hex: String = self.chars.get(self.at..self.at + 4)?.iter().collect();
        let ch = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
        self.at += 4;
        Some(ch)
    }

    fn number(&mut self) -> Result<Value, ReadError> {
        let start = self.at;
        while self
            .chars
            .get(self.at)
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.at += 1;
        }
        let text: String = self.chars[start..self.at].iter().collect();
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(Value::Num(n)),
            _ => self.fail(format!("`{text}` is not a number")),
        }
    }
}

fn closing(open: char) -> char {
    match open {
        '“' => '”',
        '‘' => '’',
        '「' => '」',
        q => q,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Call {
        calls(text, &["do", "finish"]).remove(0).unwrap()
    }

    #[test]
    fn arguments_read_with_any_quoting_and_separators() {
        let call = one(r#"do(action="Type", text="他说\"你好\"，再见")"#);
        assert_eq!(call.arguments[1].1, Value::Str("他说\"你好\"，再见".into()));
        let call = one("do(action='Tap', element=[500, 300])");
        assert_eq!(
            call.arguments[1].1,
            Value::List(vec![Value::Num(500.0), Value::Num(300.0)])
        );
        let call = one("do（action=“Tap”，element=［12，34］）");
        assert_eq!(call.arguments[0].1, Value::Str("Tap".into()));
        assert_eq!(
            call.arguments[1].1,
            Value::List(vec![Value::Num(12.0), Value::Num(34.0)])
        );
    }

    #[test]
    fn calls_start_at_words_and_a_missing_parenthesis_at_the_end_is_forgiven() {
        assert!(calls("undo(x=1) todo(y=2)", &["do"]).is_empty());
        let found = calls(r#"<answer>do(action="Back"</answer>"#, &["do"]);
        assert_eq!(found.len(), 1);
        assert!(found[0].is_ok());
        assert!(calls(r#"do(action="Back""#, &["do"])[0].is_ok());
        assert!(calls(r#"do(action="Type", text="unclosed"#, &["do"])[0].is_err());
        assert!(calls("do(action=", &["do"])[0].is_err());
    }
}
