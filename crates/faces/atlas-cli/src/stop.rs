//! Stopping on SIGTERM and Ctrl-C, from the process's first instant to its last.
//!
//! Operators stop a process whenever they must: a deploy, a pod's grace period, a newcomer's
//! Ctrl-C during the first start. A signal whose default action applies kills the process where
//! it stands and says nothing, so every command takes both signals from [`Stop::install`], which
//! `main` calls before anything else, and each command says what a signal does to it
//! ([`OnSignal`]) and what an end at this instant would leave ([`Stop::leaves`]).
//!
//! Key design decision: **a thread of its own takes the signals, not the async runtime.** The
//! runtime's workers may be busy in blocking work (a large folder opening, a checkpoint) for
//! seconds; the thread answers at once, and a second signal ends the process even then. What it
//! ends is never half written: every write of Atlas is whole or absent on disk (journal frames,
//! files renamed into place, setups written as one append), so ending at once loses nothing
//! acknowledged — it only skips the orderly shutdown, and the next start recovers the rest.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// What the first signal does to the command running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnSignal {
    /// End at once with status 128 + the signal's number, saying what is left: for commands
    /// whose every write is whole, so that an end at any instant leaves them whole.
    End,
    /// End at once with status 0: a server that keeps nothing (a simulated phone, a scripted
    /// model, the demo website) has nothing to finish.
    EndServing,
    /// Ask the command to wind down ([`Stop::requested`]): it finishes what is under way and
    /// stops cleanly. A second signal ends it at once.
    WindDown,
}

/// What a signal does now, and what is said with it.
struct Plan {
    on_signal: OnSignal,
    /// Said when winding down starts: what the command does before it stops.
    winding: String,
    /// Said when the process ends at once: the state it leaves the data in.
    leaves: String,
}

/// The process's stop: which signal came, and what the command wants done with it.
#[derive(Clone)]
pub(crate) struct Stop(Arc<Inner>);

struct Inner {
    /// What a signal does now, read and changed as one (a signal between two changes must
    /// not find half of each).
    plan: Mutex<Plan>,
    /// The first signal's number, 0 before any.
    signal: AtomicI32,
    /// Set with the first signal, for work on threads that polls (a phone agent's steps).
    flag: Arc<AtomicBool>,
    requested: tokio::sync::watch::Sender<bool>,
}

impl Stop {
    /// Takes SIGTERM and SIGINT from now on, on a thread of its own. Until a command says
    /// otherwise ([`Stop::begin`]), a signal ends the process at once.
    pub(crate) fn install() -> std::io::Result<Stop> {
        let mut signals = Signals::new([SIGTERM, SIGINT])?;
        let stop = Stop(Arc::new(Inner {
            plan: Mutex::new(Plan {
                on_signal: OnSignal::End,
                winding: "stopping".into(),
                leaves: "the command had not begun".into(),
            }),
            signal: AtomicI32::new(0),
            flag: Arc::new(AtomicBool::new(false)),
            requested: tokio::sync::watch::Sender::new(false),
        }));
        let inner = stop.0.clone();
        std::thread::Builder::new()
            .name("atlas-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    inner.take(signal);
                }
            })?;
        Ok(stop)
    }

    /// What the first signal does from now on, the command being known: nothing said of what
    /// it leaves until it says ([`Stop::leaves`]).
    pub(crate) fn begin(&self, on_signal: OnSignal) {
        let mut plan = lock(&self.0.plan);
        plan.on_signal = on_signal;
        plan.leaves.clear();
    }

    /// Winds down on the first signal ([`OnSignal::WindDown`]), saying `how` (what is finished
    /// before the command stops).
    pub(crate) fn wind_down(&self, how: &str) {
        let mut plan = lock(&self.0.plan);
        plan.winding = how.to_string();
        plan.on_signal = OnSignal::WindDown;
    }

    /// What an end at this instant leaves, said if the process ends at once.
    pub(crate) fn leaves(&self, state: impl Into<String>) {
        lock(&self.0.plan).leaves = state.into();
    }

    /// Whether a signal came.
    pub(crate) fn is_requested(&self) -> bool {
        self.0.signal.load(Ordering::SeqCst) != 0
    }

    /// Resolves once a signal came (at once if one did already).
    pub(crate) async fn requested(&self) {
        let mut seen = self.0.requested.subscribe();
        let _ = seen.wait_for(|requested| *requested).await;
    }

    /// A flag set by the first signal, for work on threads that checks it between steps.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.flag.clone()
    }

    /// The status of a command that stopped short of its end on a signal: 128 + its number, as
    /// a shell reports a command a signal ended (130 for Ctrl-C, 143 for SIGTERM).
    pub(crate) fn status(&self) -> std::process::ExitCode {
        let signal = self.0.signal.load(Ordering::SeqCst);
        std::process::ExitCode::from((128 + signal.clamp(0, 127)) as u8)
    }

    /// The signal's name, for what a command says as it stops.
    pub(crate) fn signal_name(&self) -> &'static str {
        name(self.0.signal.load(Ordering::SeqCst))
    }
}

impl Inner {
    fn take(&self, signal: i32) {
        let first = self
            .signal
            .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        let plan = lock(&self.plan);
        let name = name(signal);
        match (first, plan.on_signal) {
            (true, OnSignal::WindDown) => {
                eprintln!(
                    "atlas: {name}: {}; a second signal stops at once",
                    plan.winding
                );
                self.flag.store(true, Ordering::SeqCst);
                self.requested.send_replace(true);
            }
            (true, OnSignal::EndServing) => {
                eprintln!("atlas: {name}: stopped");
                std::process::exit(0);
            }
            (first, _) => {
                let again = if first { "" } else { " again" };
                let leaves = if plan.leaves.is_empty() {
                    String::new()
                } else {
                    format!(": {}", plan.leaves)
                };
                eprintln!("atlas: {name}{again}: stopped at once{leaves}");
                std::process::exit(128 + signal);
            }
        }
    }
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGTERM => "SIGTERM",
        SIGINT => "Ctrl-C (SIGINT)",
        _ => "a signal",
    }
}

/// A poisoned lock still holds a string or a mode worth reading: a panic elsewhere must not
/// stop the process from saying how it stops.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
