//! The phone's command line as `/system/bin/sh` reads what adb sends: commands joined by `;`,
//! `&&` and `||`, pipelines joined by `|`, words grouped by quotes; each command's output on
//! stdout or stderr and its exit status, which adb's `shell_v2` protocol carries back (127 for a
//! command the shell cannot find, as Android's).
//!
//! The text filters scripts put after a pipe (`grep`, `head`, `tail`, `wc -l`, `cat`) are here;
//! the phone's own commands are [`crate::Phone`]'s. No redirection, variables or subshells: a
//! simulator answers what agents and test scripts send, and says "not found" to the rest.

/// What a command printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// What it wrote to stdout.
    pub stdout: Vec<u8>,
    /// What it wrote to stderr.
    pub stderr: Vec<u8>,
    /// Its exit status: 0 for success.
    pub code: u8,
}

impl Output {
    /// A success printing `stdout`.
    pub fn ok(stdout: impl Into<Vec<u8>>) -> Output {
        Output {
            stdout: stdout.into(),
            ..Output::default()
        }
    }

    /// A failure with status `code`, saying why on stderr.
    pub fn fail(code: u8, stderr: impl Into<Vec<u8>>) -> Output {
        Output {
            stderr: stderr.into(),
            code,
            ..Output::default()
        }
    }

    /// stdout then stderr, as the plain `shell:` service (no separate streams) delivers them.
    pub fn merged(mut self) -> Vec<u8> {
        self.stdout.extend(self.stderr);
        self.stdout
    }
}

/// How a pipeline joins the one before it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Joint {
    /// `;` (or the first): always runs.
    Then,
    /// `&&`: runs when the one before succeeded.
    And,
    /// `||`: runs when the one before failed.
    Or,
}

/// A command line: pipelines with how each joins the one before, each pipeline its commands'
/// words.
type Line = Vec<(Joint, Vec<Vec<String>>)>;

/// Reads a command line. Operators inside quotes are text.
fn parse(line: &str) -> Line {
    let mut pipelines: Line = vec![(Joint::Then, vec![Vec::new()])];
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, pipelines: &mut Line| {
        if *in_word {
            let (_, commands) = pipelines.last_mut().expect("never empty");
            commands
                .last_mut()
                .expect("never empty")
                .push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                }
            }
            (None, ';' | '&' | '|') => {
                end_word(&mut word, &mut in_word, &mut pipelines);
                let doubled = chars.peek() == Some(&c);
                if doubled {
                    chars.next();
                }
                match (c, doubled) {
                    ('|', false) => pipelines
                        .last_mut()
                        .expect("never empty")
                        .1
                        .push(Vec::new()),
                    (';', _) => pipelines.push((Joint::Then, vec![Vec::new()])),
                    ('&', true) => pipelines.push((Joint::And, vec![Vec::new()])),
                    ('|', true) => pipelines.push((Joint::Or, vec![Vec::new()])),
                    // A lone `&` (run in the background): run it now.
                    _ => pipelines.push((Joint::Then, vec![Vec::new()])),
                }
            }
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut pipelines),
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut pipelines);
    pipelines
}

/// Runs a command line: each command by `command` (its words, and what the command before it in
/// a pipeline printed), the text filters here. stdout is the last command's of each pipeline that
/// ran, stderr everything's, the status the last run's.
pub fn run_line(line: &str, command: &mut dyn FnMut(&[&str], &[u8]) -> Output) -> Output {
    let mut all = Output::default();
    let mut last = 0;
    for (joint, pipeline) in parse(line) {
        let runs = match joint {
            Joint::Then => true,
            Joint::And => last == 0,
            Joint::Or => last != 0,
        };
        if !runs || pipeline.iter().all(Vec::is_empty) {
            continue;
        }
        let mut input = Vec::new();
        for words in &pipeline {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let out = filter(&words, &input).unwrap_or_else(|| {
                if words.is_empty() {
                    Output::fail(2, "/system/bin/sh: syntax error: unexpected '|'\n")
                } else {
                    command(&words, &input)
                }
            });
            all.stderr.extend(out.stderr);
            input = out.stdout;
            last = out.code;
        }
        all.stdout.extend(input);
    }
    all.code = last;
    all
}

/// The text filters a pipeline ends with, on what the command before printed; none for any other
/// command (or a filter given a file, which the phone's `cat` reads).
fn filter(words: &[&str], input: &[u8]) -> Option<Output> {
    let text = String::from_utf8_lossy(input);
    let lines: Vec<&str> = text.lines().collect();
    let join = |lines: &[&str]| -> Vec<u8> {
        lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    };
    let count = |args: &[&str]| -> Option<usize> {
        match args {
            [] => Some(10),
            ["-n", n] => n.parse().ok(),
            [n] => n.strip_prefix('-')?.parse().ok(),
            _ => None,
        }
    };
    match words {
        ["grep", args @ ..] => {
            let flags: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| a.starts_with('-') && *a != "-e")
                .collect();
            let patterns: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let [pattern] = patterns[..] else {
                return Some(Output::fail(2, "usage: grep [-iv] [-E] PATTERN\n"));
            };
            let has = |f: char| flags.iter().any(|a| a.contains(f));
            let fold = |s: &str| {
                if has('i') {
                    s.to_lowercase()
                } else {
                    s.to_string()
                }
            };
            // `-E a|b` alternatives; otherwise the pattern is taken as plain text.
            let alternatives: Vec<String> = if has('E') {
                pattern.split('|').map(fold).collect()
            } else {
                vec![fold(pattern)]
            };
            let kept: Vec<&str> = lines
                .iter()
                .copied()
                .filter(|l| alternatives.iter().any(|a| fold(l).contains(a.as_str())) != has('v'))
                .collect();
            let code = if kept.is_empty() { 1 } else { 0 };
            Some(Output {
                stdout: join(&kept),
                code,
                ..Output::default()
            })
        }
        ["head", args @ ..] => Some(match count(args) {
            Some(n) => Output::ok(join(&lines[..n.min(lines.len())])),
            None => Output::fail(1, "usage: head [-n N]\n"),
        }),
        ["tail", args @ ..] => Some(match count(args) {
            Some(n) => Output::ok(join(&lines[lines.len().saturating_sub(n)..])),
            None => Output::fail(1, "usage: tail [-n N]\n"),
        }),
        ["wc", "-l"] => Some(Output::ok(format!("{}\n", lines.len()))),
        ["cat"] | ["cat", "-"] => Some(Output::ok(input.to_vec())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo(words: &[&str], _: &[u8]) -> Output {
        match words {
            ["echo", rest @ ..] => Output::ok(format!("{}\n", rest.join(" "))),
            ["true"] => Output::ok(""),
            ["false"] => Output::fail(1, ""),
            [name, ..] => Output::fail(127, format!("{name}: not found\n")),
            [] => Output::ok(""),
        }
    }

    fn run(line: &str) -> (String, String, u8) {
        let out = run_line(line, &mut echo);
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
            out.code,
        )
    }

    #[test]
    fn commands_join_as_the_shell_joins_them() {
        assert_eq!(run("echo a; echo b").0, "a\nb\n");
        assert_eq!(run("false && echo no").0, "");
        assert_eq!(run("false && echo no").2, 1);
        assert_eq!(run("false || echo yes").0, "yes\n");
        assert_eq!(run("true && echo yes || echo no").0, "yes\n");
        assert_eq!(run("nothing").2, 127);
        assert_eq!(run("nothing; true").2, 0);
        assert_eq!(
            parse("ime set ''"),
            [(
                Joint::Then,
                vec![vec!["ime".to_string(), "set".into(), "".into()]]
            )]
        );
        // Operators in quotes are text.
        assert_eq!(run("echo 'a;b|c' \"d && e\"").0, "a;b|c d && e\n");
    }

    #[test]
    fn pipelines_feed_the_text_filters() {
        // A pipe binds tighter than `;`.
        assert_eq!(
            run("echo 'x one' ; echo 'y two' | grep two").0,
            "x one\ny two\n"
        );
        assert_eq!(run("echo 'x one' | grep two ; echo z").0, "z\n");
        assert_eq!(run("echo abc | grep -v abc").2, 1);
        assert_eq!(
            run("echo 'Focus=a' | grep -E 'mFocus|Focus'").0,
            "Focus=a\n"
        );
        assert_eq!(run("echo A | grep -i a").0, "A\n");
        assert_eq!(run("echo a | wc -l").0, "1\n");
        assert_eq!(run("echo a | head -n 0").0, "");
        assert_eq!(run("echo a | cat").0, "a\n");
        assert_eq!(run("echo a | nothing").2, 127);
    }
}
