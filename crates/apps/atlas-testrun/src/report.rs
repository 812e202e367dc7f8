//! What a run reports: JSON (the contract's shape) and JUnit XML (what CI servers read: each
//! test's time, its steps, model calls and graph steps as properties, the failure's message);
//! the HTML page is [`crate::html`]'s.

use std::fmt::Write as _;

use atlas_agent::phone::Ending;
use serde::Serialize;
use serde_json::{Value, json};

use crate::suite::Test;

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The run ended as the test expects.
    Passed,
    /// It ended otherwise.
    Failed,
    /// It could not run to its end (the model, the phone, a stop).
    Error,
}

/// A run of a test lost with its phone.
#[derive(Debug, Clone, Serialize)]
pub struct LostAttempt {
    /// The phone.
    pub device: String,
    /// What failed.
    pub message: String,
    /// How long it ran.
    pub seconds: f64,
}

/// One step, for the HTML page.
#[derive(Debug, Clone, Default)]
pub struct StepShot {
    /// From 1.
    pub step: usize,
    /// `model`, `graph`, `plan` or `guard`.
    pub chosen_by: String,
    /// What ran, in the seed's dict form.
    pub action: String,
    /// The page the graph took the screen for.
    pub page: Option<String>,
    /// Why the graph answered as it did (its `basis`), when it was asked.
    pub basis: Option<String>,
    /// Guard rules that fired.
    pub rules: Vec<String>,
    /// The screen as the step began.
    pub png: Option<Vec<u8>>,
}

/// One test's result.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    /// The test.
    pub name: String,
    /// Its app.
    pub app: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// How it ended.
    pub status: Status,
    /// Why (the failure), or the model's last words.
    pub message: String,
    /// Steps taken.
    pub steps: usize,
    /// Calls to the model (the planner's included).
    pub model_calls: usize,
    /// Steps the graph (or a planned route) took without the model.
    pub graph_steps: usize,
    /// The test's time, the phone's start included.
    pub seconds: f64,
    /// The phone it ran on (the last, where it was lost before).
    pub device: String,
    /// How the agent's run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// The page (or recorded screen) it ended on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_page: Option<String>,
    /// Runs lost with their phones before this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<LostAttempt>,
    /// Each step (the HTML report's).
    #[serde(skip)]
    pub trail: Vec<StepShot>,
    /// The screen at the end.
    #[serde(skip)]
    pub end_png: Option<Vec<u8>>,
}

impl TestResult {
    /// A test that did not run, and why.
    pub fn not_run(test: &Test, why: &str, lost: Vec<LostAttempt>) -> TestResult {
        TestResult {
            name: test.name.clone(),
            app: test.app.clone(),
            tags: test.tags.clone(),
            status: Status::Error,
            message: why.to_string(),
            steps: 0,
            model_calls: 0,
            graph_steps: 0,
            seconds: 0.0,
            device: String::new(),
            ending: None,
            end_page: None,
            lost,
            trail: Vec::new(),
            end_png: None,
        }
    }
}

/// A suite's results.
#[derive(Debug, Clone)]
pub struct SuiteReport {
    /// The suite.
    pub name: String,
    /// Each test, in the suite's order.
    pub tests: Vec<TestResult>,
    /// The run's wall time.
    pub seconds: f64,
    /// When it ended.
    pub ended: chrono::DateTime<chrono::Utc>,
    /// The run's language (`en`, `zh`): the HTML page's.
    pub lang: String,
}

impl SuiteReport {
    /// The report of `tests`, run in `lang`.
    pub fn new(name: &str, tests: Vec<TestResult>, seconds: f64, lang: &str) -> SuiteReport {
        SuiteReport {
            name: name.to_string(),
            tests,
            seconds,
            ended: chrono::Utc::now(),
            lang: lang.to_string(),
        }
    }

    fn count(&self, status: Status) -> usize {
        self.tests.iter().filter(|t| t.status == status).count()
    }

    /// Whether every test passed.
    pub fn passed(&self) -> bool {
        self.count(Status::Passed) == self.tests.len()
    }

    /// Model calls over every test.
    pub fn model_calls(&self) -> usize {
        self.tests.iter().map(|t| t.model_calls).sum()
    }

    /// `{"tests": [...], "summary": {passed, failed, errors, model_calls, seconds, …}}`.
    pub fn json(&self) -> Value {
        json!({
            "suite": self.name,
            "tests": self.tests,
            "summary": {
                "tests": self.tests.len(),
                "passed": self.count(Status::Passed),
                "failed": self.count(Status::Failed),
                "errors": self.count(Status::Error),
                "model_calls": self.model_calls(),
                "graph_steps": self.tests.iter().map(|t| t.graph_steps).sum::<usize>(),
                "steps": self.tests.iter().map(|t| t.steps).sum::<usize>(),
                "seconds": round(self.seconds),
            }
        })
    }

    /// A line for a person: `12 tests: 11 passed, 1 failed, 0 errors; 40 model calls; 31.2 s`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} passed, {} failed, {}; {}, {}; {:.1} s",
            counted(self.tests.len(), "test"),
            self.count(Status::Passed),
            self.count(Status::Failed),
            counted(self.count(Status::Error), "error"),
            counted(self.model_calls(), "model call"),
            counted(
                self.tests.iter().map(|t| t.graph_steps).sum::<usize>(),
                "graph step"
            ),
            self.seconds
        )
    }

    /// JUnit XML: one `<testsuite>`; each test a `<testcase>` (classname: its app) with its
    /// numbers as properties and a `<failure>` or `<error>` with the message; a run lost with
    /// its phone as a `<rerunError>`, as Maven Surefire writes reruns.
    pub fn junit(&self) -> String {
        let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            xml,
            "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3}\">",
            esc(&self.name),
            self.tests.len(),
            self.count(Status::Failed),
            self.count(Status::Error),
            self.seconds
        );
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\" timestamp=\"{}\">",
            esc(&self.name),
            self.tests.len(),
            self.count(Status::Failed),
            self.count(Status::Error),
            self.seconds,
            self.ended.format("%Y-%m-%dT%H:%M:%S")
        );
        for t in &self.tests {
            let _ = writeln!(
                xml,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">",
                esc(&t.name),
                esc(&t.app),
                t.seconds
            );
            xml.push_str("      <properties>\n");
            for (name, value) in [
                ("steps", t.steps.to_string()),
                ("model_calls", t.model_calls.to_string()),
                ("graph_steps", t.graph_steps.to_string()),
                ("device", t.device.clone()),
                ("tags", t.tags.join(",")),
            ] {
                let _ = writeln!(
                    xml,
                    "        <property name=\"{name}\" value=\"{}\"/>",
                    esc(&value)
                );
            }
            xml.push_str("      </properties>\n");
            match t.status {
                Status::Passed => {}
                Status::Failed => {
                    let _ = writeln!(
                        xml,
                        "      <failure message=\"{}\" type=\"unmet\">{}</failure>",
                        esc(&t.message),
                        esc(&trail_text(t))
                    );
                }
                Status::Error => {
                    let _ = writeln!(
                        xml,
                        "      <error message=\"{}\" type=\"error\">{}</error>",
                        esc(&t.message),
                        esc(&trail_text(t))
                    );
                }
            }
            for lost in &t.lost {
                let _ = writeln!(
                    xml,
                    "      <rerunError message=\"{}\" type=\"device_lost\"/>",
                    esc(&format!("{}: {}", lost.device, lost.message))
                );
            }
            let _ = writeln!(
                xml,
                "      <system-out>{}</system-out>",
                esc(&trail_text(t))
            );
            xml.push_str("    </testcase>\n");
        }
        xml.push_str("  </testsuite>\n</testsuites>\n");
        xml
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn trail_text(t: &TestResult) -> String {
    t.trail
        .iter()
        .map(|s| format!("{}. [{}] {}\n", s.step, s.chosen_by, s.action))
        .collect()
}

/// The widest screenshot the HTML page holds: a phone's text stays legible, and a suite of
/// hundreds of steps stays a page a browser opens at once (full-size shots made it ~70 MB).
pub const THUMBNAIL_WIDTH: u32 = 360;

/// `png` shrunk by a whole factor to at most `width` pixels wide (each pixel the mean of its
/// block); `None` when it is already that small or is not a PNG this can read.
pub fn thumbnail(png: &[u8], width: u32) -> Option<Vec<u8>> {
    let decoded = atlas_device_sim::render::decode_png(png)?;
    let (pixels, channels) = (&decoded.bytes, decoded.channels);
    let (w, h) = (decoded.width, decoded.height);
    let k = w.div_ceil(width.max(1) as usize);
    if k <= 1 {
        return None;
    }
    let (sw, sh) = (w / k, h / k);
    let mut small = vec![0u8; sw * sh * 3];
    for y in 0..sh {
        for x in 0..sw {
            let mut sum = [0u32; 3];
            for dy in 0..k {
                for dx in 0..k {
                    let at = ((y * k + dy) * w + x * k + dx) * channels;
                    let px = &pixels[at..at + channels];
                    for (c, total) in sum.iter_mut().enumerate() {
                        *total += u32::from(if channels < 3 { px[0] } else { px[c] });
                    }
                }
            }
            let out = (y * sw + x) * 3;
            for c in 0..3 {
                small[out + c] = (sum[c] / (k * k) as u32) as u8;
            }
        }
    }
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, sw as u32, sh as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().ok()?.write_image_data(&small).ok()?;
    Some(bytes)
}

/// Escapes text for XML and HTML alike (attributes included); characters XML 1.0 cannot hold
/// are dropped.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `n` things in English: `1 test`, `2 tests`.
pub fn counted(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screenshot_is_shrunk_to_the_page_width_and_keeps_its_colours() {
        let (w, h) = (1080u32, 1920u32);
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        // The top half red.
        for p in rgb[..(w * h * 3 / 2) as usize].chunks_mut(3) {
            p.copy_from_slice(&[200, 0, 0]);
        }
        let mut big = Vec::new();
        let mut encoder = png::Encoder::new(&mut big, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .write_header()
            .unwrap()
            .write_image_data(&rgb)
            .unwrap();
        let small = thumbnail(&big, THUMBNAIL_WIDTH).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(&small));
        let mut reader = decoder.read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((frame.width, frame.height), (360, 640));
        assert_eq!(&pixels[..3], &[200, 0, 0]);
        assert_eq!(&pixels[pixels.len() - 3..], &[255, 255, 255]);
        assert!(
            thumbnail(&small, THUMBNAIL_WIDTH).is_none(),
            "already small"
        );
        assert!(thumbnail(b"not a png", THUMBNAIL_WIDTH).is_none());
    }

    #[test]
    fn text_is_escaped_for_xml_and_html() {
        assert_eq!(
            esc("a<b>&\"c'\u{1}d 中文"),
            "a&lt;b&gt;&amp;&quot;c&#39;d 中文"
        );
    }
}
