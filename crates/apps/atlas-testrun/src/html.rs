//! The run as one self-contained HTML page: every step with its screenshot, its action and who
//! chose it, in the run's language. It opens anywhere because nothing in it is fetched, and a
//! suite of hundreds of steps stays a page a browser opens at once: each screenshot shrunk, and
//! each picture embedded once however many steps show it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

use base64::Engine;

use crate::report::{Status, SuiteReport, THUMBNAIL_WIDTH, esc, thumbnail};

/// The page's own words in one language.
struct Words {
    lang: &'static str,
    title: &'static str,
    columns: [&'static str; 8],
    statuses: [&'static str; 3],
    lost_with: &'static str,
    page: &'static str,
    guard: &'static str,
    end: &'static str,
    /// `model`, `graph`, `plan`, `guard`: who chose a step.
    choosers: [(&'static str, &'static str); 4],
    /// `memory`, `labels`, `path`, `plan`: what the graph's answer rested on.
    bases: [(&'static str, &'static str); 4],
}

const ENGLISH: Words = Words {
    lang: "en",
    title: "Atlas test run",
    columns: [
        "test",
        "app",
        "status",
        "steps",
        "model calls",
        "graph steps",
        "seconds",
        "device",
    ],
    statuses: ["passed", "failed", "error"],
    lost_with: "lost with",
    page: "page",
    guard: "guard",
    end: "end",
    choosers: [
        ("model", "model"),
        ("graph", "graph"),
        ("plan", "plan"),
        ("guard", "guard"),
    ],
    bases: [
        ("memory", "remembered"),
        ("labels", "read from the labels"),
        ("path", "the graph's path"),
        ("plan", "the planned route"),
    ],
};

const CHINESE: Words = Words {
    lang: "zh",
    title: "Atlas 测试运行",
    columns: [
        "测试",
        "应用",
        "结果",
        "步数",
        "模型调用",
        "图谱步数",
        "秒",
        "设备",
    ],
    statuses: ["通过", "失败", "出错"],
    lost_with: "随设备丢失：",
    page: "页面",
    guard: "守卫",
    end: "结束",
    choosers: [
        ("model", "模型"),
        ("graph", "图谱"),
        ("plan", "规划"),
        ("guard", "守卫"),
    ],
    bases: [
        ("memory", "记住的任务"),
        ("labels", "界面文字"),
        ("path", "图谱路径"),
        ("plan", "规划的路线"),
    ],
};

impl Words {
    fn of(lang: &str) -> &'static Words {
        if lang == "en" { &ENGLISH } else { &CHINESE }
    }

    fn status(&self, status: Status) -> &'static str {
        match status {
            Status::Passed => self.statuses[0],
            Status::Failed => self.statuses[1],
            Status::Error => self.statuses[2],
        }
    }

    fn chooser<'a>(&self, by: &'a str) -> &'a str {
        self.choosers
            .iter()
            .find(|(code, _)| *code == by)
            .map_or(by, |(_, word)| word)
    }

    /// What a graph's answer rested on; a doubt (which the API words in Chinese) in English for
    /// an English page.
    fn basis(&self, basis: &str) -> String {
        if let Some((_, word)) = self.bases.iter().find(|(code, _)| *code == basis) {
            return word.to_string();
        }
        match self.lang {
            "en" => atlas_navigate::doubt_in_english(basis).unwrap_or_else(|| basis.to_string()),
            _ => basis.to_string(),
        }
    }

    fn summary(&self, report: &SuiteReport) -> String {
        if self.lang == "en" {
            return report.summary();
        }
        let count = |status| report.tests.iter().filter(|t| t.status == status).count();
        format!(
            "{} 个测试：{} 通过，{} 失败，{} 出错；模型调用 {} 次，图谱执行 {} 步；{:.1} 秒",
            report.tests.len(),
            count(Status::Passed),
            count(Status::Failed),
            count(Status::Error),
            report.model_calls(),
            report.tests.iter().map(|t| t.graph_steps).sum::<usize>(),
            report.seconds
        )
    }
}

impl SuiteReport {
    /// One HTML page holding everything, screenshots included (as data URIs), in the run's
    /// language (`lang`: `en`, else Chinese).
    pub fn html(&self) -> String {
        let words = Words::of(&self.lang);
        let mut page = String::new();
        let mut seen = Pictures::default();
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{name} — {title}</title>\n<style>{STYLE}</style></head><body>\n<h1>{name}</h1>\n<p class=\"summary\">{summary}</p>\n<table><thead><tr>",
            lang = words.lang,
            title = words.title,
            name = esc(&self.name),
            summary = esc(&words.summary(self)),
        );
        for column in words.columns {
            let _ = write!(page, "<th>{column}</th>");
        }
        page.push_str("</tr></thead><tbody>\n");
        for (i, t) in self.tests.iter().enumerate() {
            let _ = writeln!(
                page,
                "<tr class=\"{status:?}\"><td><a href=\"#t{i}\">{}</a></td><td>{}</td><td>{shown}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td></tr>",
                esc(&t.name),
                esc(&t.app),
                t.steps,
                t.model_calls,
                t.graph_steps,
                t.seconds,
                esc(&t.device),
                status = t.status,
                shown = words.status(t.status),
            );
        }
        page.push_str("</tbody></table>\n");
        for (i, t) in self.tests.iter().enumerate() {
            let _ = writeln!(
                page,
                "<section id=\"t{i}\" class=\"test {status:?}\"><h2>{} <span class=\"badge\">{shown}</span></h2>\n<p>{}</p>",
                esc(&t.name),
                esc(&t.message),
                status = t.status,
                shown = words.status(t.status),
            );
            for lost in &t.lost {
                let _ = writeln!(
                    page,
                    "<p class=\"lost\">{} {}: {}</p>",
                    words.lost_with,
                    esc(&lost.device),
                    esc(&lost.message)
                );
            }
            page.push_str("<div class=\"steps\">\n");
            for s in &t.trail {
                let _ = writeln!(
                    page,
                    "<figure class=\"step by-{by}\">{img}<figcaption><b>{n}.</b> <span class=\"by\">{who}</span> <code>{action}</code>{page}{rules}</figcaption></figure>",
                    img = image(s.png.as_deref(), &format!("step {}", s.step), &mut seen),
                    n = s.step,
                    by = esc(&s.chosen_by),
                    who = esc(words.chooser(&s.chosen_by)),
                    action = esc(&s.action),
                    page = s.page.as_ref().filter(|p| !p.is_empty()).map_or(
                        String::new(),
                        |p| format!(
                            "<br>{} {}{}",
                            words.page,
                            esc(p),
                            s.basis
                                .as_ref()
                                .filter(|b| !b.is_empty())
                                .map_or(String::new(), |b| format!(" ({})", esc(&words.basis(b))))
                        )
                    ),
                    rules = if s.rules.is_empty() {
                        String::new()
                    } else {
                        format!("<br>{}: {}", words.guard, esc(&s.rules.join("; ")))
                    },
                );
            }
            if t.end_png.is_some() {
                let _ = writeln!(
                    page,
                    "<figure class=\"step end\">{}<figcaption>{}{}</figcaption></figure>",
                    image(t.end_png.as_deref(), words.end, &mut seen),
                    words.end,
                    t.end_page
                        .as_ref()
                        .map_or(String::new(), |p| format!(": {}", esc(p)))
                );
            }
            page.push_str("</div></section>\n");
        }
        // Each picture once, where every step showing it points.
        page.push_str("<svg class=\"pictures\" style=\"display:none\">");
        for (k, (data, (w, h))) in seen.pictures.iter().enumerate() {
            let _ = write!(
                page,
                "<symbol id=\"p{k}\" viewBox=\"0 0 {w} {h}\"><image width=\"{w}\" height=\"{h}\" href=\"data:image/png;base64,{data}\"/></symbol>"
            );
        }
        page.push_str("</svg>\n</body></html>\n");
        page
    }
}

/// The pictures of a page, each kept once: a suite shows the same screens over and over.
#[derive(Default)]
struct Pictures {
    /// Each picture's number, by the hash of its PNG.
    by_hash: HashMap<u64, usize>,
    /// Each picture's encoding (shrunk) and size, by number.
    pictures: Vec<(String, (u32, u32))>,
}

/// A screenshot, shrunk, shown by pointing at its picture in `seen` (kept there once).
fn image(png: Option<&[u8]>, alt: &str, seen: &mut Pictures) -> String {
    let Some(png) = png.filter(|p| !p.is_empty()) else {
        return String::new();
    };
    let key = {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        png.hash(&mut hasher);
        hasher.finish()
    };
    let number = *seen.by_hash.entry(key).or_insert_with(|| {
        let small = thumbnail(png, THUMBNAIL_WIDTH);
        let shown = small.as_deref().unwrap_or(png);
        // The size from the PNG's header (IHDR: width and height, big-endian, at 16 and 20).
        let size = |at: usize| {
            shown
                .get(at..at + 4)
                .map_or(1, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]).max(1))
        };
        seen.pictures.push((
            base64::engine::general_purpose::STANDARD.encode(shown),
            (size(16), size(20)),
        ));
        seen.pictures.len() - 1
    });
    let (w, h) = seen.pictures[number].1;
    format!(
        "<svg class=\"shot\" role=\"img\" aria-label=\"{alt}\" viewBox=\"0 0 {w} {h}\"><use href=\"#p{number}\"/></svg>"
    )
}

const STYLE: &str = "body{font-family:system-ui,'Noto Sans CJK SC','WenQuanYi Micro Hei',sans-serif;margin:2em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
tr.Passed td:nth-child(3),.Passed .badge{color:#080}tr.Failed td:nth-child(3),.Failed .badge{color:#b00}
tr.Error td:nth-child(3),.Error .badge{color:#a60}.steps{display:flex;flex-wrap:wrap;gap:1em}
figure.step{margin:0;width:200px}figure.step svg.shot{display:block;width:200px;height:auto;border:1px solid #999}
.by-graph .by,.by-plan .by{color:#06c;font-weight:bold}.by-model .by{color:#666}.lost{color:#a60}
code{word-break:break-all;font-size:.85em}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{StepShot, TestResult};

    fn report(lang: &str) -> SuiteReport {
        let suite = crate::suite::Suite::parse(
            "name: notes\napp: notes\ntests:\n  - {name: new note, task: Create a note}\n",
            std::path::Path::new("."),
        )
        .unwrap();
        let mut result = TestResult::not_run(&suite.tests[0], "", Vec::new());
        result.status = Status::Passed;
        result.trail = vec![
            StepShot {
                step: 1,
                chosen_by: "model".into(),
                action: "tap".into(),
                page: Some("p1".into()),
                basis: Some("不确定(unlikely): 最可能的一步“Label”正确的把握只有74%".into()),
                ..StepShot::default()
            },
            StepShot {
                step: 2,
                chosen_by: "graph".into(),
                action: "tap".into(),
                page: Some("p2".into()),
                basis: Some("memory".into()),
                ..StepShot::default()
            },
        ];
        SuiteReport::new("notes", vec![result], 1.0, lang)
    }

    /// The page's text, its style and pictures left out.
    fn text(html: &str) -> String {
        let body = &html[html.find("</style>").unwrap()..];
        body.split('<')
            .filter_map(|tag| tag.split_once('>').map(|(_, text)| text))
            .collect()
    }

    #[test]
    fn the_page_speaks_the_run_s_language_the_graph_s_doubts_included() {
        let english = report("en").html();
        assert!(english.contains("<html lang=\"en\">"));
        let shown = text(&english);
        assert!(
            shown.chars().all(|c| c.is_ascii() || "“”—".contains(c)),
            "Chinese on an English page: {shown}"
        );
        assert!(
            shown.contains("unsure (unlikely): the likeliest step “Label” is right only 74%"),
            "{shown}"
        );
        assert!(shown.contains("(remembered)") && shown.contains("passed"));
        let chinese = report("zh").html();
        assert!(chinese.contains("<html lang=\"zh\">"));
        let shown = text(&chinese);
        for words in [
            "测试",
            "通过",
            "模型",
            "图谱",
            "记住的任务",
            "不确定(unlikely)",
        ] {
            assert!(shown.contains(words), "{words}: {shown}");
        }
    }
}
