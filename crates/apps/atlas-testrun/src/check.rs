//! The suite against the phones, before any phone moves: a test goes to whichever phone is free,
//! so every phone must have every test's app and start. A wrong app or start found here costs
//! nothing; found when a phone runs it, it costs the tests before it and reads as an error of
//! that one test.

use std::sync::Arc;

use atlas_device::DeviceError;

use crate::phones::TestPhone;
use crate::suite::Suite;

/// Problems listed in full before the rest are counted.
const LISTED: usize = 20;

/// A suite that does not fit its phones: the first problems (`test NAME: why`), and how many
/// more there are.
#[derive(Debug, thiserror::Error)]
pub struct Misfit {
    /// The tests a phone cannot run, with why (the first [`LISTED`]); tests of one app and
    /// start share the phone's one answer.
    pub problems: Vec<(String, Arc<DeviceError>)>,
    /// How many more problems there are.
    pub more: usize,
}

impl std::fmt::Display for Misfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the suite does not fit the phones (every phone runs any test, so each needs every test's app and start):"
        )?;
        for (test, why) in &self.problems {
            write!(f, "\ntest {test:?}: {why}")?;
        }
        if self.more > 0 {
            write!(f, "\n… and {} more", self.more)?;
        }
        Ok(())
    }
}

/// Every test's app and start asked of every phone (each pair once); the problems, when there
/// are any.
pub fn check_suite(suite: &Suite, phones: &[Box<dyn TestPhone>]) -> Result<(), Misfit> {
    let mut problems = Vec::new();
    let mut more = 0;
    for phone in phones {
        let mut answers = std::collections::HashMap::new();
        for test in &suite.tests {
            let answer = answers
                .entry((test.app.as_str(), test.start.as_deref()))
                .or_insert_with(|| {
                    phone
                        .check(&test.app, test.start.as_deref())
                        .map_err(Arc::new)
                });
            if let Err(e) = answer {
                if problems.len() < LISTED {
                    problems.push((test.name.clone(), e.clone()));
                } else {
                    more += 1;
                }
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Misfit { problems, more })
}
