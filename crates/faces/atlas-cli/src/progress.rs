//! Long work shown to the person at the terminal: a bar (or a spinner when the work cannot say
//! how much is left) on standard error, and one summary line when it ends.
//!
//! The bar is drawn only when standard error is a terminal: a CI log or a file gets no control
//! characters, only the notes and the summary, one line each. Standard output keeps the
//! command's answer (JSON, figures) whatever happens here.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use atlas_progress::Progress;
use indicatif::{ProgressBar, ProgressStyle};

/// A bar with `template` on standard error if it is a terminal, else none.
pub(crate) fn terminal_bar(template: &str) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(style(template));
        bar
    })
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

const COUNTED: &str = "{bar:30} {pos}/{len} {elapsed_precise} (eta {eta}) {wide_msg}";
const UNCOUNTED: &str = "{spinner} {elapsed_precise} {wide_msg}";

/// [`Progress`] for a command: a bar when standard error is a terminal, the notes on standard
/// error either way.
pub(crate) struct Shown {
    bar: Option<ProgressBar>,
    started: Instant,
}

impl Shown {
    /// Progress of work that starts now.
    pub(crate) fn start() -> Arc<Shown> {
        let bar = terminal_bar(UNCOUNTED);
        if let Some(bar) = &bar {
            // A spinner turns while a stage without units goes on.
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
        }
        Arc::new(Shown {
            bar,
            started: Instant::now(),
        })
    }

    /// Clears the bar until the next stage, so lines written to standard output (the same
    /// terminal) do not run into it.
    pub(crate) fn pause(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Clears the bar and writes `summary` with the time the work took, on standard error.
    pub(crate) fn finish(&self, summary: &str) {
        self.pause();
        eprintln!(
            "{summary} in {}",
            seconds(self.started.elapsed().as_secs_f64())
        );
    }
}

/// Work that ends in an error leaves no bar behind for the error to be written through.
impl Drop for Shown {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar
            && !bar.is_finished()
        {
            bar.finish_and_clear();
        }
    }
}

/// "0.4 s", "12.3 s", "2 min 05 s".
fn seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

impl Progress for Shown {
    fn stage(&self, what: &str, total: Option<u64>) {
        let Some(bar) = &self.bar else { return };
        match total {
            Some(n) => {
                bar.set_style(style(COUNTED));
                bar.set_length(n);
            }
            None => {
                bar.set_style(style(UNCOUNTED));
                bar.unset_length();
            }
        }
        // After a pause the bar is finished: resetting starts it again.
        bar.reset();
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        bar.set_message(what.to_string());
    }

    fn advance(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(done);
        }
    }

    fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::seconds;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(seconds(0.42), "0.4 s");
        assert_eq!(seconds(59.94), "59.9 s");
        assert_eq!(seconds(125.2), "2 min 05 s");
    }
}
