//! The suite against the phones, before any phone moves: a test goes to whichever phone is free,
//! so every phone must have every test's app and start. A wrong app or start found here costs
//! nothing; found when a phone runs it, it costs the tests before it and reads as an error of
//! that one test.

use crate::phones::TestPhone;
use crate::suite::Suite;

/// Problems listed in full before the rest are counted.
const LISTED: usize = 20;

/// Every test's app and start asked of every phone (each pair once); the problems, one a line
/// (`test NAME: why`), when there are any.
pub fn check_suite(suite: &Suite, phones: &[Box<dyn TestPhone>]) -> Result<(), String> {
    let mut problems = Vec::new();
    for phone in phones {
        let mut answers = std::collections::HashMap::new();
        for test in &suite.tests {
            let answer = answers
                .entry((test.app.as_str(), test.start.as_deref()))
                .or_insert_with(|| phone.check(&test.app, test.start.as_deref()));
            if let Err(e) = answer {
                problems.push(format!("test {:?}: {e}", test.name));
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    let more = problems.len().saturating_sub(LISTED);
    problems.truncate(LISTED);
    if more > 0 {
        problems.push(format!("… and {more} more"));
    }
    Err(format!(
        "the suite does not fit the phones (every phone runs any test, so each needs every test's app and start):\n{}",
        problems.join("\n")
    ))
}
