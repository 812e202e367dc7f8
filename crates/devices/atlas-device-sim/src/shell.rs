//! The phone's command line as `/system/bin/sh` reads what adb sends: commands joined by `;`,
//! `&&` and `||`, pipelines joined by `|`, words grouped by quotes; `$?`, `$NAME` and `${NAME}`
//! expanded (not inside single quotes), `NAME=value` and `export` setting them for the rest of
//! the line; `>`, `>>`, `2>`, `2>&1` into the phone's own files; `test`/`[`. Each command's output
//! on stdout or stderr and its exit status, which adb's `shell_v2` protocol carries back (127 for
//! a command the shell cannot find, as Android's).
//!
//! The text filters scripts put after a pipe (`grep`, `head`, `tail`, `wc -l`, `cat`) are here;
//! the phone's own commands and files are [`System`]'s. No subshells, globs or control flow: a
//! simulator answers what agents and test scripts send, and says "not found" to the rest.

/// What a command line runs against: the phone's commands and files.
pub trait System {
    /// Runs one command: its words (expanded), and what the command before it in a pipeline
    /// printed.
    fn command(&mut self, words: &[&str], input: &[u8]) -> Output;
    /// Writes `bytes` to the file at `path` (after what it holds, with `append`); why not, as
    /// the shell says it.
    fn write(&mut self, path: &str, bytes: &[u8], append: bool) -> Result<(), crate::WriteError>;
    /// What is at `path`, if anything.
    fn kind(&self, path: &str) -> Option<FileKind>;
}

/// What a path names, as `test` tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file (`-f`).
    File,
    /// A folder (`-d`).
    Folder,
    /// A character device, such as `/dev/null` (`-c`): there (`-e`), but not a regular file.
    Device,
}

/// What a command printed and how it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// What it wrote to stdout.
    pub stdout: Vec<u8>,
    /// What it wrote to stderr.
    pub stderr: Vec<u8>,
    /// Its exit status: 0 for success.
    pub code: u8,
    /// stdout and stderr together in the order they were written, where a command line kept it
    /// (empty: stdout, then stderr).
    pub both: Vec<u8>,
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

    /// stdout and stderr in one stream, as the plain `shell:` service delivers them: in the
    /// order they were written (adbutils finds the status after the last line of it).
    pub fn merged(mut self) -> Vec<u8> {
        if !self.both.is_empty() {
            return self.both;
        }
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

/// Where a redirection sends a stream.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// A file of the phone's.
    File(String),
    /// Another stream (`2>&1`).
    Stream(u8),
}

/// `N>`, `N>>`: stream `fd` to `to`.
#[derive(Debug, Clone, PartialEq)]
struct Redirect {
    fd: u8,
    append: bool,
    to: Target,
}

/// One command: its words (with [`VAR`]…[`END`] where a variable is expanded) and redirections.
#[derive(Debug, Clone, Default, PartialEq)]
struct Simple {
    words: Vec<String>,
    redirects: Vec<Redirect>,
}

/// A command line: pipelines with how each joins the one before.
type Line = Vec<(Joint, Vec<Simple>)>;

/// Marks where a variable's name starts in a parsed word, [`END`] where it ends: text a command
/// line cannot hold (private-use characters), so an expansion is told from the words around it.
const VAR: char = '\u{E000}';
const END: char = '\u{E001}';

/// A redirection waiting for its file's name.
struct Pending {
    fd: u8,
    append: bool,
}

/// The command being read: the last of the last pipeline (a line always has one).
fn current(line: &mut Line) -> &mut Simple {
    line.last_mut()
        .and_then(|(_, commands)| commands.last_mut())
        .expect("never empty")
}

/// Reads a command line. Operators inside quotes are text.
fn parse(line: &str) -> Line {
    let mut pipelines: Line = vec![(Joint::Then, vec![Simple::default()])];
    let mut word = String::new();
    let mut in_word = false;
    // Whether the word so far is digits the shell wrote unquoted (a stream's number before `>`).
    let mut bare_digits = true;
    let mut pending: Option<Pending> = None;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_word =
        |word: &mut String, in_word: &mut bool, pending: &mut Option<Pending>, line: &mut Line| {
            if *in_word {
                let simple = current(line);
                let text = std::mem::take(word);
                match pending.take() {
                    Some(Pending { fd, append }) => simple.redirects.push(Redirect {
                        fd,
                        append,
                        to: Target::File(text),
                    }),
                    None => simple.words.push(text),
                }
                *in_word = false;
            }
        };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '$') => {
                in_word = true;
                bare_digits = false;
                let name: String = match chars.peek() {
                    Some('?') => chars.next().map(String::from).unwrap_or_default(),
                    Some('{') => {
                        chars.next();
                        chars.by_ref().take_while(|c| *c != '}').collect()
                    }
                    Some(c) if c.is_ascii_alphanumeric() || *c == '_' => {
                        let mut name = String::new();
                        while let Some(c) =
                            chars.next_if(|c| c.is_ascii_alphanumeric() || *c == '_')
                        {
                            name.push(c);
                        }
                        name
                    }
                    _ => {
                        word.push('$');
                        continue;
                    }
                };
                word.push(VAR);
                word.push_str(&name);
                word.push(END);
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
                bare_digits = false;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                    in_word = true;
                    bare_digits = false;
                }
            }
            (None, '>') => {
                // `2>`: the digits just before are the stream, not a word.
                let fd = if in_word && bare_digits && !word.is_empty() {
                    let fd = word.parse().unwrap_or(1);
                    word.clear();
                    in_word = false;
                    fd
                } else {
                    end_word(&mut word, &mut in_word, &mut pending, &mut pipelines);
                    1
                };
                let append = chars.next_if_eq(&'>').is_some();
                if chars.next_if_eq(&'&').is_some() {
                    let digits: String =
                        std::iter::from_fn(|| chars.next_if(char::is_ascii_digit)).collect();
                    current(&mut pipelines).redirects.push(Redirect {
                        fd,
                        append,
                        to: Target::Stream(digits.parse().unwrap_or(1)),
                    });
                } else {
                    pending = Some(Pending { fd, append });
                }
                bare_digits = true;
            }
            (None, ';' | '&' | '|') => {
                end_word(&mut word, &mut in_word, &mut pending, &mut pipelines);
                bare_digits = true;
                let doubled = chars.peek() == Some(&c);
                if doubled {
                    chars.next();
                }
                match (c, doubled) {
                    ('|', false) => pipelines
                        .last_mut()
                        .expect("never empty")
                        .1
                        .push(Simple::default()),
                    (';', _) => pipelines.push((Joint::Then, vec![Simple::default()])),
                    ('&', true) => pipelines.push((Joint::And, vec![Simple::default()])),
                    ('|', true) => pipelines.push((Joint::Or, vec![Simple::default()])),
                    // A lone `&` (run in the background): run it now.
                    _ => pipelines.push((Joint::Then, vec![Simple::default()])),
                }
            }
            (None, c) if c.is_whitespace() => {
                end_word(&mut word, &mut in_word, &mut pending, &mut pipelines);
                bare_digits = true;
            }
            (None, c) => {
                word.push(c);
                in_word = true;
                bare_digits &= c.is_ascii_digit();
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut pending, &mut pipelines);
    pipelines
}

/// A parsed word with its variables' values in place (`$?`: the last status; unset: empty).
fn expand(word: &str, vars: &std::collections::HashMap<String, String>, status: u8) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find(VAR) {
        out.push_str(&rest[..at]);
        let after = &rest[at + VAR.len_utf8()..];
        let end = after.find(END).unwrap_or(after.len());
        let name = &after[..end];
        if name == "?" {
            out.push_str(&status.to_string());
        } else if let Some(value) = vars.get(name) {
            out.push_str(value);
        }
        rest = after.get(end + END.len_utf8()..).unwrap_or("");
    }
    out.push_str(rest);
    out
}

/// `NAME=value`: the name and the value, where `word` is an assignment.
fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

/// Runs a command line on `system`: each command with its variables expanded, the shell's own
/// (`NAME=value`, `export`, `test`/`[`) and text filters here, the rest by `system`. stdout is
/// the last command's of each pipeline that ran (unless redirected), stderr everything's, the
/// status the last run's.
pub fn run_line(line: &str, system: &mut dyn System) -> Output {
    let mut all = Output::default();
    let mut last = 0;
    let mut vars = std::collections::HashMap::new();
    for (joint, pipeline) in parse(line) {
        let runs = match joint {
            Joint::Then => true,
            Joint::And => last == 0,
            Joint::Or => last != 0,
        };
        if !runs
            || pipeline
                .iter()
                .all(|s| s.words.is_empty() && s.redirects.is_empty())
        {
            continue;
        }
        let mut input = Vec::new();
        for simple in &pipeline {
            let words: Vec<String> = simple
                .words
                .iter()
                .map(|w| expand(w, &vars, last))
                .collect();
            let mut words: Vec<&str> = words.iter().map(String::as_str).collect();
            // `exec CMD` runs the command in the shell's place (adb's `logcat` sends `exec logcat`).
            if words.first() == Some(&"exec") && words.len() > 1 {
                words.remove(0);
            }
            let out = builtin(&words, &mut vars, &*system)
                .or_else(|| filter(&words, &input))
                .unwrap_or_else(|| {
                    if words.is_empty() && simple.redirects.is_empty() {
                        Output::fail(2, "/system/bin/sh: syntax error: unexpected '|'\n")
                    } else if words.is_empty() {
                        Output::ok("")
                    } else {
                        system.command(&words, &input)
                    }
                });
            let out = redirect(out, &simple.redirects, &vars, last, system);
            all.both.extend_from_slice(&out.stderr);
            all.stderr.extend(out.stderr);
            input = out.stdout;
            last = out.code;
        }
        all.both.extend_from_slice(&input);
        all.stdout.extend(input);
    }
    all.code = last;
    all
}

/// Sends `out`'s streams where `redirects` say, in order (`2>&1` joins stderr to stdout).
fn redirect(
    mut out: Output,
    redirects: &[Redirect],
    vars: &std::collections::HashMap<String, String>,
    status: u8,
    system: &mut dyn System,
) -> Output {
    for Redirect { fd, append, to } in redirects {
        let taken = match fd {
            2 => std::mem::take(&mut out.stderr),
            _ => std::mem::take(&mut out.stdout),
        };
        match to {
            Target::Stream(2) => out.stderr.extend(taken),
            Target::Stream(_) => out.stdout.extend(taken),
            Target::File(path) => {
                let path = expand(path, vars, status);
                if let Err(why) = system.write(&path, &taken, *append) {
                    out.stderr.extend(
                        format!("/system/bin/sh: can't create {path}: {why}\n").into_bytes(),
                    );
                    out.code = 1;
                }
            }
        }
    }
    out
}

/// The shell's own commands: assignments, `export`, `unset`, `test` and `[`; none for others.
fn builtin(
    words: &[&str],
    vars: &mut std::collections::HashMap<String, String>,
    system: &dyn System,
) -> Option<Output> {
    let set = |vars: &mut std::collections::HashMap<String, String>, words: &[&str]| {
        for (name, value) in words.iter().filter_map(|w| assignment(w)) {
            vars.insert(name.to_string(), value.to_string());
        }
    };
    match words {
        [_, ..] if words.iter().all(|w| assignment(w).is_some()) => {
            set(vars, words);
            Some(Output::ok(""))
        }
        ["export", rest @ ..] => {
            set(vars, rest);
            Some(Output::ok(""))
        }
        ["unset", names @ ..] => {
            for name in names {
                vars.remove(*name);
            }
            Some(Output::ok(""))
        }
        ["[", args @ .., "]"] | ["test", args @ ..] => Some(test(args, system)),
        ["[", ..] => Some(Output::fail(2, "[: missing ]\n")),
        _ => None,
    }
}

/// `test` as toybox's: strings, numbers and files, `!` before any.
fn test(args: &[&str], system: &dyn System) -> Output {
    let truth = |holds: bool| Output {
        code: u8::from(!holds),
        ..Output::default()
    };
    let number = |s: &str| s.trim().parse::<i64>().ok();
    match args {
        ["!", rest @ ..] => {
            let inner = test(rest, system);
            if inner.code > 1 {
                inner
            } else {
                truth(inner.code != 0)
            }
        }
        [] => truth(false),
        [s] => truth(!s.is_empty()),
        ["-z", s] => truth(s.is_empty()),
        ["-n", s] => truth(!s.is_empty()),
        ["-e", path] => truth(system.kind(path).is_some()),
        ["-f", path] => truth(system.kind(path) == Some(FileKind::File)),
        ["-d", path] => truth(system.kind(path) == Some(FileKind::Folder)),
        ["-c", path] => truth(system.kind(path) == Some(FileKind::Device)),
        [a, "=" | "==", b] => truth(a == b),
        [a, "!=", b] => truth(a != b),
        [a, op @ ("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"), b] => {
            match (number(a), number(b)) {
                (Some(a), Some(b)) => truth(match *op {
                    "-eq" => a == b,
                    "-ne" => a != b,
                    "-lt" => a < b,
                    "-le" => a <= b,
                    "-gt" => a > b,
                    _ => a >= b,
                }),
                _ => Output::fail(2, "test: integer expression expected\n"),
            }
        }
        _ => Output::fail(2, format!("test: unknown condition: {}\n", args.join(" "))),
    }
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
                return Some(Output::fail(2, "usage: grep [-iov] [-E] PATTERN\n"));
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
            // `-o`: each match on a line of its own, as the line writes it.
            let stdout = if has('o') && !has('v') {
                let mut found = Vec::new();
                for line in &kept {
                    let folded = fold(line);
                    let mut at = 0;
                    while let Some((start, len)) = alternatives
                        .iter()
                        .filter(|a| !a.is_empty())
                        .filter_map(|a| folded[at..].find(a.as_str()).map(|i| (at + i, a.len())))
                        .min()
                    {
                        found.push(line.get(start..start + len).unwrap_or_default());
                        at = start + len;
                    }
                }
                join(&found)
            } else {
                join(&kept)
            };
            Some(Output {
                stdout,
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

    /// `echo`, `true`, `false` and files in memory.
    #[derive(Default)]
    struct Mock {
        files: std::collections::HashMap<String, Vec<u8>>,
    }

    impl System for Mock {
        fn command(&mut self, words: &[&str], _: &[u8]) -> Output {
            match words {
                ["echo", "-n", rest @ ..] => Output::ok(rest.join(" ")),
                ["echo", rest @ ..] => Output::ok(format!("{}\n", rest.join(" "))),
                ["true"] => Output::ok(""),
                ["false"] => Output::fail(1, ""),
                ["cat", path] => match self.files.get(*path) {
                    Some(bytes) => Output::ok(bytes.clone()),
                    None => Output::fail(1, format!("cat: {path}: No such file or directory\n")),
                },
                [name, ..] => Output::fail(127, format!("{name}: not found\n")),
                [] => Output::ok(""),
            }
        }

        fn write(
            &mut self,
            path: &str,
            bytes: &[u8],
            append: bool,
        ) -> Result<(), crate::WriteError> {
            if path == "/dev/null" {
                return Ok(());
            }
            if !path.starts_with("/sdcard/") {
                return Err(crate::WriteError::ReadOnly);
            }
            let file = self.files.entry(path.to_string()).or_default();
            if !append {
                file.clear();
            }
            file.extend_from_slice(bytes);
            Ok(())
        }

        fn kind(&self, path: &str) -> Option<FileKind> {
            match path {
                "/sdcard" => Some(FileKind::Folder),
                "/dev/null" => Some(FileKind::Device),
                _ => self.files.contains_key(path).then_some(FileKind::File),
            }
        }
    }

    fn run(line: &str) -> (String, String, u8) {
        let out = run_line(line, &mut Mock::default());
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
                vec![Simple {
                    words: vec!["ime".to_string(), "set".into(), "".into()],
                    redirects: Vec::new()
                }]
            )]
        );
        // Operators in quotes are text.
        assert_eq!(run("echo 'a;b|c' \"d && e\"").0, "a;b|c d && e\n");
        // adb's `logcat` runs `exec logcat …`.
        assert_eq!(run("exec echo a").0, "a\n");
        assert_eq!(run("exec nothing").2, 127);
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

    #[test]
    fn the_status_and_variables_expand_as_sh_expands_them() {
        // adbutils' `shell2` reads the status this way.
        assert_eq!(run("false; echo X4EXIT:$?").0, "X4EXIT:1\n");
        assert_eq!(run("true; echo $?").0, "0\n");
        assert_eq!(run("nothing; echo \"status $?\"").0, "status 127\n");
        assert_eq!(
            run("A=1 B=two; echo $A ${B}x \"$B\" '$B'").0,
            "1 twox two $B\n"
        );
        assert_eq!(run("export C=3; echo $C; unset C; echo [$C]").0, "3\n[]\n");
        assert_eq!(run("echo $NOTSET.").0, ".\n");
        assert_eq!(run("echo cost \\$5 $ 5$").0, "cost $5 $ 5$\n");
    }

    #[test]
    fn the_plain_stream_keeps_the_order_things_were_written() {
        let out = run_line("nothing; echo X:$?", &mut Mock::default());
        assert_eq!(out.merged(), b"nothing: not found\nX:127\n");
    }

    #[test]
    fn redirections_write_the_phones_files() {
        let mut phone = Mock::default();
        let out = run_line(
            "echo one > /sdcard/a.txt; echo two >> /sdcard/a.txt; cat /sdcard/a.txt",
            &mut phone,
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "one\ntwo\n");
        assert_eq!(phone.files["/sdcard/a.txt"], b"one\ntwo\n");
        // stderr away, or into stdout.
        let out = run_line("cat /none 2>/dev/null; echo $?", &mut phone);
        assert_eq!((out.stdout, out.stderr), (b"1\n".to_vec(), Vec::new()));
        let out = run_line("cat /none 2>&1 | grep -o 'No such'", &mut phone);
        assert_eq!(out.stdout, b"No such\n");
        let out = run_line("echo x >/system/x", &mut phone);
        assert_eq!(out.code, 1);
        assert!(String::from_utf8_lossy(&out.stderr).contains("can't create /system/x"));
        // A quoted 2 is a word; `echo -n` ends no line.
        let out = run_line("echo '2'>/sdcard/b; echo -n x > /sdcard/c", &mut phone);
        assert_eq!(out.code, 0);
        assert_eq!(phone.files["/sdcard/b"], b"2\n");
        assert_eq!(phone.files["/sdcard/c"], b"x");
    }

    #[test]
    fn test_and_brackets_judge_strings_numbers_and_files() {
        assert_eq!(run("[ a = a ] && echo yes").0, "yes\n");
        assert_eq!(run("test -z '' && echo empty").0, "empty\n");
        assert_eq!(run("[ 3 -gt 2 ]; echo $?").0, "0\n");
        assert_eq!(run("[ ! -e /sdcard/none ]; echo $?").0, "0\n");
        assert_eq!(
            run("[ -d /sdcard ] && [ ! -f /sdcard ] && echo dir").0,
            "dir\n"
        );
        // The null device is there, but not a regular file.
        assert_eq!(
            run("[ -e /dev/null ] && [ -c /dev/null ] && [ ! -f /dev/null ] && echo dev").0,
            "dev\n"
        );
        assert_eq!(run("[ a = a").2, 2);
        assert_eq!(run("[ x -lt y ]").2, 2);
        assert_eq!(run("echo 'id=1 id=22' | grep -o 'id='").0, "id=\nid=\n");
    }
}
