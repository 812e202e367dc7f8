//! Turning an uploaded file into segments: plain text by paragraphs, Markdown by headings, and
//! question/answer tables (CSV or JSON) one pair per segment.
//!
//! Segments stay under [`MAX_SEGMENT_CHARS`] so a hit is an answer-sized piece, and a Markdown
//! segment keeps its heading path ("退款 > 到账时间") so it still says what it is about once cut
//! from its section.

use std::collections::HashMap;

use atlas_text::words;

use crate::error::{KbError, invalid};
use crate::model::{Segment, new_id};

/// The longest segment, in characters.
pub const MAX_SEGMENT_CHARS: usize = 500;
/// The largest file accepted, in bytes.
pub const MAX_FILE_BYTES: usize = 10 * 1024 * 1024;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// Plain text, split into paragraphs.
    Text,
    /// Markdown, split by headings.
    Markdown,
    /// A question,answer table.
    QaCsv,
    /// A JSON list of questions and answers.
    QaJson,
}

impl From<atlas_api::dify::DocumentKind> for SourceKind {
    fn from(kind: atlas_api::dify::DocumentKind) -> Self {
        use atlas_api::dify::DocumentKind;
        match kind {
            DocumentKind::Text => SourceKind::Text,
            DocumentKind::Markdown => SourceKind::Markdown,
            DocumentKind::QaCsv => SourceKind::QaCsv,
            DocumentKind::QaJson => SourceKind::QaJson,
        }
    }
}

impl SourceKind {
    /// By file name: `.md`/`.markdown`, `.csv`, `.json`, anything else plain text.
    pub fn of_name(name: &str) -> SourceKind {
        let lower = name.to_lowercase();
        if lower.ends_with(".md") || lower.ends_with(".markdown") {
            SourceKind::Markdown
        } else if lower.ends_with(".csv") {
            SourceKind::QaCsv
        } else if lower.ends_with(".json") {
            SourceKind::QaJson
        } else {
            SourceKind::Text
        }
    }

    /// The kind [`SourceKind::as_str`] names.
    pub fn named(name: &str) -> Option<SourceKind> {
        [
            SourceKind::Text,
            SourceKind::Markdown,
            SourceKind::QaCsv,
            SourceKind::QaJson,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }

    /// Its name (`text`, `markdown`, `qa_csv`, `qa_json`).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Text => "text",
            SourceKind::Markdown => "markdown",
            SourceKind::QaCsv => "qa_csv",
            SourceKind::QaJson => "qa_json",
        }
    }
}

/// The segments of a file. Binary or empty files, tables without question and answer columns,
/// and files over [`MAX_FILE_BYTES`] are refused.
pub fn split(bytes: &[u8], kind: SourceKind) -> Result<Vec<Segment>, KbError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(KbError::TooLarge {
            what: "the file".into(),
            size: bytes.len(),
            limit: MAX_FILE_BYTES,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| {
        invalid("the file is not UTF-8 text (binary files such as PDF are not supported)")
    })?;
    if text.contains('\0') {
        return Err(invalid("the file is binary, not text"));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let pieces: Vec<(Option<String>, String)> = match kind {
        SourceKind::Text => chunks(text).into_iter().map(|c| (None, c)).collect(),
        SourceKind::Markdown => markdown(text),
        SourceKind::QaCsv => qa_csv(text)?
            .into_iter()
            .map(|(q, a)| (Some(q), a))
            .collect(),
        SourceKind::QaJson => qa_json(text)?
            .into_iter()
            .map(|(q, a)| (Some(q), a))
            .collect(),
    };
    let segments: Vec<Segment> = pieces
        .into_iter()
        .filter(|(_, content)| !content.trim().is_empty())
        .enumerate()
        .map(|(i, (question, content))| {
            let keywords = keywords(question.as_deref().unwrap_or(&content));
            Segment {
                id: new_id(),
                position: i + 1,
                word_count: content.chars().count(),
                content,
                question,
                keywords,
            }
        })
        .collect();
    if segments.is_empty() {
        return Err(invalid("the file holds no text"));
    }
    Ok(segments)
}

/// Up to ten of a text's most frequent words, first seen first among equals.
pub(crate) fn keywords(text: &str) -> Vec<String> {
    let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
    for (i, w) in words(text).into_iter().enumerate() {
        counts.entry(w).or_insert((0, i)).0 += 1;
    }
    let mut ranked: Vec<(String, (usize, usize))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)));
    ranked.into_iter().take(10).map(|(w, _)| w).collect()
}

/// Paragraphs joined up to the segment size; a longer paragraph cut at sentence ends, and a
/// longer sentence at the size.
fn chunks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<String>| {
        if !current.trim().is_empty() {
            out.push(current.trim().to_string());
        }
        current.clear();
    };
    for paragraph in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        for piece in sentences_within(paragraph) {
            if current.chars().count() + piece.chars().count() + 2 > MAX_SEGMENT_CHARS {
                flush(&mut current, &mut out);
            }
            if !current.is_empty() {
                current.push_str("\n\n");
            }
            current.push_str(&piece);
        }
    }
    flush(&mut current, &mut out);
    out
}

/// A paragraph as pieces no longer than the segment size.
fn sentences_within(paragraph: &str) -> Vec<String> {
    if paragraph.chars().count() <= MAX_SEGMENT_CHARS {
        return vec![paragraph.to_string()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in paragraph.chars() {
        current.push(c);
        let end_of_sentence = matches!(c, '。' | '！' | '？' | '!' | '?' | '.' | '\n' | '；' | ';');
        if current.chars().count() >= MAX_SEGMENT_CHARS
            || (end_of_sentence && current.chars().count() >= MAX_SEGMENT_CHARS / 2)
        {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        pieces.push(current);
    }
    pieces
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Sections under their heading path, each cut to size.
fn markdown(text: &str) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut body = String::new();
    let emit =
        |path: &[(usize, String)], body: &mut String, out: &mut Vec<(Option<String>, String)>| {
            let heading = path
                .iter()
                .map(|(_, h)| h.as_str())
                .collect::<Vec<_>>()
                .join(" > ");
            for chunk in chunks(body) {
                out.push((
                    None,
                    if heading.is_empty() {
                        chunk
                    } else {
                        format!("{heading}\n{chunk}")
                    },
                ));
            }
            body.clear();
        };
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        let is_heading = !in_code && (1..=6).contains(&level) && line[level..].starts_with(' ');
        if is_heading {
            emit(&path, &mut body, &mut out);
            path.retain(|(l, _)| *l < level);
            path.push((level, line[level..].trim().to_string()));
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    emit(&path, &mut body, &mut out);
    out
}

fn is_question_header(h: &str) -> bool {
    matches!(h.trim().to_lowercase().as_str(), "question" | "q" | "问题")
}

fn is_answer_header(h: &str) -> bool {
    matches!(
        h.trim().to_lowercase().as_str(),
        "answer" | "a" | "答案" | "回答"
    )
}

fn qa_csv(text: &str) -> Result<Vec<(String, String)>, KbError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| invalid(format!("not a CSV table: {e}")))?
        .clone();
    let q = headers.iter().position(is_question_header);
    let a = headers.iter().position(is_answer_header);
    let (Some(q), Some(a)) = (q, a) else {
        return Err(invalid(
            "a question/answer CSV needs a header row with question and answer columns",
        ));
    };
    let mut pairs = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| invalid(format!("CSV row {}: {e}", i + 2)))?;
        let (question, answer) = (
            row.get(q).unwrap_or_default().trim(),
            row.get(a).unwrap_or_default().trim(),
        );
        if !question.is_empty() && !answer.is_empty() {
            pairs.push((question.to_string(), answer.to_string()));
        }
    }
    Ok(pairs)
}

fn qa_json(text: &str) -> Result<Vec<(String, String)>, KbError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("not JSON: {e}")))?;
    let items = value.as_array().ok_or_else(|| {
        invalid("a question/answer JSON file is an array of {\"question\", \"answer\"} objects")
    })?;
    let field = |item: &serde_json::Value, is: fn(&str) -> bool| -> Option<String> {
        item.as_object()?
            .iter()
            .find(|(k, _)| is(k))
            .and_then(|(_, v)| v.as_str())
            .map(|s| s.trim().to_string())
    };
    let mut pairs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match (
            field(item, is_question_header),
            field(item, is_answer_header),
        ) {
            (Some(q), Some(a)) if !q.is_empty() && !a.is_empty() => pairs.push((q, a)),
            _ => return Err(invalid(format!("item {i} has no question and answer"))),
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_answer_tables_become_one_segment_per_pair() {
        let csv = "question,answer\n怎么退款？,\"在订单页点“申请退款”，1-3个工作日到账。\"\nHow do I reset my password?,Use “Forgot password” on the sign-in page.\n";
        let segments = split(csv.as_bytes(), SourceKind::QaCsv).unwrap();
        assert_eq!(segments.len(), 2);
        assert_eq!(
            (segments[0].question.as_deref(), segments[0].position),
            (Some("怎么退款？"), 1)
        );
        assert!(segments[0].content.contains("申请退款"));
        assert_eq!(segments[0].searched_text(), "怎么退款？");
        let json = r#"[{"question": "运费多少？", "answer": "满99元包邮。"}]"#;
        assert_eq!(
            split(json.as_bytes(), SourceKind::QaJson).unwrap()[0].content,
            "满99元包邮。"
        );
        assert!(
            split(b"q,x\n1,2\n", SourceKind::QaCsv).is_err(),
            "no answer column"
        );
        assert!(split(b"[{\"question\": \"x\"}]", SourceKind::QaJson).is_err());
    }

    #[test]
    fn markdown_keeps_heading_paths_and_text_is_cut_to_size() {
        let md = "# 退款\n\n说明。\n\n## 到账时间\n\n1-3个工作日。\n\n```\n# not a heading\n```\n";
        let segments = split(md.as_bytes(), SourceKind::Markdown).unwrap();
        assert_eq!(segments[0].content, "退款\n说明。");
        assert!(
            segments[1]
                .content
                .starts_with("退款 > 到账时间\n1-3个工作日。"),
            "{:?}",
            segments[1].content
        );
        assert!(segments[1].content.contains("# not a heading"));
        let long = "很长的一句话。".repeat(300);
        let segments = split(long.as_bytes(), SourceKind::Text).unwrap();
        assert!(
            segments.len() > 3
                && segments
                    .iter()
                    .all(|s| s.content.chars().count() <= MAX_SEGMENT_CHARS)
        );
    }

    #[test]
    fn binary_and_empty_files_are_refused() {
        assert!(
            split(
                &[0x25, 0x50, 0x44, 0x46, 0xff, 0xfe, 0x00],
                SourceKind::Text
            )
            .is_err()
        );
        assert!(split(b"abc\0def", SourceKind::Text).is_err());
        assert!(split(b"  \n\n ", SourceKind::Text).is_err());
        assert!(matches!(
            split(&vec![b'a'; MAX_FILE_BYTES + 1], SourceKind::Text),
            Err(KbError::TooLarge { .. })
        ));
    }
}
