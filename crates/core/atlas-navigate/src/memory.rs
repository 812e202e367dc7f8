//! Task memory: remembered ways replayed for an instruction of the same template.
//!
//! A finished session is remembered as a way ([`atlas_model::way_key`]): its steps without what
//! the session did and undid ([`clean`]). When an agent asks for the next action, the ways of
//! the sessions whose instructions share the asked one's template (values aside) are aligned
//! with what the agent's own session has done so far; the best way that continues from the
//! current page gives its next step, with the asked instruction's values put in place of the
//! remembered ones, and its own record ([`WayTrust`]): the finished runs that went it, the
//! replays that parted from it and where, and so whether the fast path may take the step.
//!
//! Key design decision: **each way is judged on its own record, read off the sessions.** A way
//! that one finished run confirmed is replayed on the next run, step by step under check; a
//! step where a replay parted is doubted until a run passes there again; the app's recent
//! record is only the prior of a way's confidence, and its breaker. Ways of other versions of
//! the app, and a sibling task's way adapted with other values, are lent: replayed under check,
//! but never through an irreversible step ([`atlas_text::says_irreversible`]).

use std::collections::HashMap;

use atlas_graph::AppGraph;
use atlas_model::{
    Action, AnswerKind, Check, PRECISION_GOAL, Trace, TraceStep, WayRun, WayTrust,
    recent_precision, seconds_of_rfc3339, way_confidence, way_key,
};
use atlas_text::{Template, says_irreversible, substitute};

/// Templates at least this alike count as the same task.
pub(crate) const SAME_TEMPLATE: f64 = 0.99;

/// What remembered sessions say to do next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recall {
    /// Take this action; it led to `expected_page` before.
    Act {
        action: Action,
        expected_page: String,
        remaining: usize,
        confidence: f64,
        /// The remembered way it is a step of, with its record.
        way: Option<WayTrust>,
        /// The state the remembered run found the tapped widget in (a switch, a box, a choice).
        checked: Option<bool>,
    },
    /// The remembered sessions ended here, the first one's agent with these words (the asked
    /// instruction's values in place of its own), when it said.
    Done {
        confidence: f64,
        message: Option<String>,
        /// The remembered way it ends, with its record.
        way: Option<WayTrust>,
    },
}

/// Whether two actions are the same step: type, widget (see [`Action::same_widget`]) and typed
/// text.
fn same_step(a: &Action, b: &Action) -> bool {
    a.action_type == b.action_type && a.same_widget(b) && a.input_text == b.input_text
}

/// The remembered step with the asked instruction's values in place. `None` when the step uses a
/// remembered value the asked instruction has no counterpart for.
fn adapt(step: &Action, map: &[(&str, &str)], labels_here: &[&str]) -> Option<Action> {
    let mut action = step.clone();
    if !action.input_text.is_empty()
        && let Some(text) = substitute(&action.input_text, map)
    {
        action.input_text = text;
    }
    // A value the asked instruction shares with the remembered one changes nothing.
    let changed = substitute(&action.widget_text, map)
        .filter(|text| !text.trim().eq_ignore_ascii_case(action.widget_text.trim()));
    if let Some(text) = changed {
        // A tap on a value ("5 minutes") becomes a tap on the asked one ("1 minute"): only if
        // the page shows such a widget, matched loosely on the value itself.
        let wanted = map
            .iter()
            .find(|(old, _)| {
                action
                    .widget_text
                    .to_lowercase()
                    .contains(&old.to_lowercase())
            })
            .map(|(_, new)| new.to_lowercase())?;
        let found = labels_here
            .iter()
            .find(|l| l.trim().eq_ignore_ascii_case(text.trim()))
            .or_else(|| {
                let mut hits = labels_here.iter().filter(|l| {
                    l.to_lowercase()
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == wanted)
                });
                let first = hits.next();
                if hits.next().is_some() { None } else { first }
            })?;
        action.widget_text = found.to_string();
        action.widget_id.clear();
    }
    Some(action)
}

/// The agent's own steps so far in `session` for `intent`.
pub(crate) fn session_steps<'a>(
    app: &'a AppGraph,
    session: Option<&str>,
    intent: &str,
) -> &'a [TraceStep] {
    let Some(session) = session else { return &[] };
    app.traces()
        .find(|t| t.session_id == session && t.intent == intent)
        .map(|t| t.steps.as_slice())
        .unwrap_or(&[])
}

/// A session's way: its steps without what it did and undid, which the next agent should not
/// repeat — a step that failed (changed nothing), unless it was the session's last; a detour:
/// steps from page to page followed by one Back to the page the first left ([`detour_start`]);
/// a needless Back followed at once by the step that leads back; a toggle set and set back (a
/// checkable widget, as `toggle` tells, tapped twice on a page that stays); text typed into a field and typed again (only the last stays, none when it
/// cleared the field). Undone steps inside undone steps go too. A tap into the field the next
/// step types into is part of the typing (an answer that types taps its field first), not a
/// step of its own.
pub(crate) fn clean(steps: &[TraceStep], toggle: &dyn Fn(&TraceStep) -> bool) -> Vec<TraceStep> {
    let mut way: Vec<TraceStep> = Vec::with_capacity(steps.len());
    // The last step stays even when the screen did not show what it did: a session's last act
    // before its finish (a choice the dump does not show) is what the task was for.
    let last_failed = steps.last().filter(|s| !s.success);
    for step in steps.iter().filter(|s| s.success).chain(last_failed) {
        let Some(last) = way.last() else {
            way.push(step.clone());
            continue;
        };
        let back = |s: &TraceStep| s.action.action_type == "back";
        let returns = last.to_page == step.from_page && last.from_page == step.to_page;
        // Steps away and Back again.
        let detour = back(step).then(|| detour_start(&way, step)).flatten();
        // A needless Back, and the way forward again to where it was.
        let needless_back = back(last) && !back(step) && returns && last.from_page != last.to_page;
        // A toggle set and set back: the same widget twice where the page stays.
        let stays = |s: &TraceStep| s.from_page == s.to_page;
        let toggled_back = stays(last)
            && stays(step)
            && last.from_page == step.from_page
            && last.action.action_type != "input"
            && same_step(&last.action, &step.action)
            && toggle(step);
        // Typed again into the same field: the last text is what it holds.
        let retyped = last.action.action_type == "input"
            && step.action.action_type == "input"
            && last.from_page == step.from_page
            && last.action.same_widget(&step.action);
        // A tap into the field the next step types into: typing taps it first.
        let readied = step.action.action_type == "input"
            && last.action.action_type != "input"
            && last.action.action_type != "back"
            && stays(last)
            && last.from_page == step.from_page
            && last.action.same_widget(&step.action);
        if let Some(start) = detour {
            way.truncate(start);
        } else if readied {
            way.pop();
            way.push(step.clone());
        } else if needless_back || toggled_back {
            way.pop();
        } else if retyped {
            way.pop();
            if !step.action.input_text.is_empty() {
                way.push(step.clone());
            }
        } else {
            way.push(step.clone());
        }
    }
    way
}

/// Where a detour `back` closes began in `way`: the last step from the page the Back returns to,
/// when every step since went from one page to another never met before (a menu opened, an
/// item of it, a page over it) and did nothing a Back leaves done — no typing, no step that
/// stayed on its page (a toggle), no commit or irreversible act, no Back of its own. Back from
/// the top of such a stack of pages lands where it began (the menu closed on the way), and
/// nothing the detour did stays. A page met twice (a list, an item deleted from it, the list)
/// is no detour: something was done there.
fn detour_start(way: &[TraceStep], back: &TraceStep) -> Option<usize> {
    if back.from_page == back.to_page || way.last()?.to_page != back.from_page {
        return None;
    }
    let start = way.iter().rposition(|s| s.from_page == back.to_page)?;
    let detour = &way[start..];
    let mut seen = std::collections::HashSet::new();
    let pages_new =
        detour.iter().all(|s| seen.insert(&s.from_page)) && !seen.contains(&back.from_page);
    let only_moves = detour.iter().all(|s| {
        let label = &s.action.widget_text;
        s.from_page != s.to_page
            && !matches!(s.action.action_type.as_str(), "input" | "back")
            && !crate::ground::facts::is_commit(label)
            && !irreversible(label, &s.action.widget_id)
    });
    (pages_new && only_moves).then_some(start)
}

/// Whether a step taps a checkable widget (a switch, a box): one the run said showed a state,
/// or one of its page's that shows one. Tapped twice, it is set back.
fn taps_toggle(app: &AppGraph, step: &TraceStep) -> bool {
    step.checked.is_some()
        || app.page(&step.from_page).is_some_and(|page| {
            page.widgets.iter().any(|w| {
                w.checked.is_some()
                    && ((!step.action.widget_id.is_empty() && w.id == step.action.widget_id)
                        || (step.action.widget_id.is_empty()
                            && !w.text.is_empty()
                            && w.text == step.action.widget_text))
            })
        })
}

/// One remembered way, gathered from the sessions that went it and the checks replays of it made.
struct Gathered<'a> {
    key: String,
    steps: Vec<TraceStep>,
    /// Its steps as they were done, detours kept: every one of them was undone, which was what
    /// the session did.
    raw: bool,
    /// The session it is read from: one of the asked task's when any went it.
    remembered: &'a Trace,
    /// The remembered task's values, each with the asked task's in its place.
    map: Vec<(String, String)>,
    similarity: f64,
    confirmed: u64,
    confirmed_here: u64,
    /// Of the confirmations, those a verdict passed.
    judged: u64,
    /// A model asked on a replay where the way ends finished there too.
    finish_agreed: bool,
    /// When it was last confirmed (ms), and the screen that run ended on.
    last_confirmed: i64,
    ends_on: Option<String>,
    passed: u64,
    /// Each parting, its step and when (ms): those since its last confirmation make that step
    /// less sure.
    parted_at: Vec<(u32, i64)>,
    /// The sessions that went the whole way.
    confirming: std::collections::HashSet<&'a str>,
    /// The runs that confirmed it, and those a verdict failed that replayed it (what
    /// `get_ways` lists; read into [`WayRun`]s only there).
    runs: Vec<&'a Trace>,
    /// Per step (its finish last): when a run last passed there, when a replay last parted
    /// there (or was undone), and when a run a verdict failed last left the passing runs there.
    last_pass: Vec<i64>,
    last_bad: Vec<i64>,
    last_failed: Vec<i64>,
}

impl Gathered<'_> {
    /// The remembered task's values, each with the asked task's in its place, as
    /// [`substitute`] takes them.
    fn value_map(&self) -> Vec<(&str, &str)> {
        self.map
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    /// Whether step `j` (its finish at the end) is doubted: a replay parted there, or a run a
    /// verdict failed left the passing runs there or at a step before, and no run has passed
    /// there since. A parting doubts its own step only: it shows the app changed where that
    /// step leads (a dialog an update put in the way), not what the way does after it, and a
    /// run that comes back onto the way goes on along the steps its runs took from there. A
    /// failed verdict doubts every step from its own on: the judge saw the run fail from there.
    fn doubts(&self, j: usize) -> bool {
        let unpassed = |at: &[i64], k: usize| at[k] > self.last_pass[k];
        j < self.last_pass.len()
            && (unpassed(&self.last_bad, j) || (0..=j).any(|k| unpassed(&self.last_failed, k)))
    }

    /// The first step it is doubted at.
    fn doubted_from(&self) -> Option<u32> {
        (0..self.last_pass.len())
            .find(|&j| self.doubts(j))
            .map(|j| j as u32)
    }

    /// Counts a replay's check of one step; a confirming session's passes are counted with its
    /// confirmation, and a session a verdict failed (`failed`) passes nothing.
    fn check(&mut self, check: &Check, confirming: bool, failed: bool) {
        let Some(j) = usize::try_from(check.step)
            .ok()
            .filter(|j| *j < self.last_pass.len())
        else {
            return;
        };
        if check.held() {
            if failed {
                return;
            }
            self.passed += u64::from(!confirming);
            self.last_pass[j] = self.last_pass[j].max(check.at);
            self.finish_agreed |= j + 1 == self.last_pass.len();
        } else {
            // A verdict's doubt holds the way from its step on; the steps before, which the
            // failed run went as the passing ones did, keep their trust.
            if check.from_verdict {
                self.last_failed[j] = self.last_failed[j].max(check.at);
            } else {
                self.parted_at.push((check.step, check.at));
                self.last_bad[j] = self.last_bad[j].max(check.at);
            }
        }
    }
}

/// When a session was last heard of, in milliseconds: its last step's, its last check's or its
/// verdict's time, whichever is latest (a run's end comes after every check it made).
fn heard_at(trace: &Trace) -> i64 {
    let updated = seconds_of_rfc3339(&trace.updated_at).map_or(0, |s| s * 1000);
    let judged = trace.verdict.as_ref().map_or(i64::MIN, |v| v.at);
    trace
        .checks
        .iter()
        .map(|c| c.at)
        .fold(updated.max(judged), i64::max)
}

/// What the traces of `app` say to do on `current_page` for `intent` on `version`, given the
/// session's steps so far.
pub(crate) fn recall(
    app: &AppGraph,
    intent: &str,
    current_page: &str,
    session: Option<&str>,
    version: Option<&str>,
) -> Option<Recall> {
    let ways = gather(app, intent, session, version);
    if ways.is_empty() {
        return None;
    }
    best_way(&ways, app, intent, current_page, session, version)
}

/// A way remembered for a task, as `get_ways` lists it: its record (judged at its first step),
/// its steps, and the runs that make its record.
#[derive(Debug, Clone, PartialEq)]
pub struct RememberedWay {
    /// Its record, at its first step.
    pub record: WayTrust,
    /// Its steps, without what its sessions did and undid.
    pub steps: Vec<TraceStep>,
    /// The runs that confirmed it (judged or claimed) and those a verdict failed that replayed
    /// it, oldest first.
    pub runs: Vec<WayRun>,
}

/// The ways `app` remembers for `intent` (every task it remembers, when none), each its own
/// task's (a sibling's way adapted is not listed twice), judged for `version`.
pub fn remembered_ways(
    app: &AppGraph,
    intent: Option<&str>,
    version: Option<&str>,
) -> Vec<RememberedWay> {
    let mut tasks: Vec<&str> = app
        .traces()
        .filter(|t| t.succeeded() && intent.is_none_or(|i| i == t.intent))
        .map(|t| t.intent.as_str())
        .collect();
    tasks.sort_unstable();
    tasks.dedup();
    let recent = app.recent(version, AnswerKind::Memory);
    let (prior, breaker) = (recent_precision(recent), recent.trips());
    let mut listed = Vec::new();
    for task in tasks {
        let ways = gather(app, task, None, version);
        let mut own: Vec<&Gathered> = ways
            .values()
            .filter(|w| w.remembered.intent == task)
            .collect();
        own.sort_by(|a, b| b.confirmed.cmp(&a.confirmed).then(a.key.cmp(&b.key)));
        for way in own {
            let first = way
                .steps
                .first()
                .is_some_and(|s| irreversible(&s.action.widget_text, &s.action.widget_id));
            let mut runs = way.runs.clone();
            runs.sort_by_key(|t| (heard_at(t), t.session_id.as_str()));
            listed.push(RememberedWay {
                record: judge_step(record_of(way, 0, prior), way.doubts(0), first, breaker),
                steps: way.steps.clone(),
                runs: runs.into_iter().map(WayRun::of).collect(),
            });
        }
    }
    listed
}

/// The ways the sessions of tasks like `intent` went (the asking `session` left out), by key,
/// with their records: the finished runs that confirmed each, and the checks replays made. A
/// forgotten way counts only what came after it was forgotten.
fn gather<'a>(
    app: &'a AppGraph,
    intent: &str,
    session: Option<&str>,
    version: Option<&str>,
) -> HashMap<String, Gathered<'a>> {
    let forgotten = |key: &str| app.app.forgotten_ways.get(key).copied().unwrap_or(i64::MIN);
    let mut memories = app
        .traces()
        .filter(|t| t.succeeded() && Some(t.session_id.as_str()) != session)
        .peekable();
    // Most apps remember nothing yet: then there is nothing to segment or compare.
    if memories.peek().is_none() {
        return HashMap::new();
    }
    let asked = Template::of(intent);
    // Each remembered task's template, once: the tasks alike to the asked one.
    let memories: Vec<&Trace> = memories.collect();
    let mut alike: HashMap<&str, Option<(f64, Template)>> = HashMap::new();
    for trace in &memories {
        alike.entry(trace.intent.as_str()).or_insert_with(|| {
            let template = Template::of(&trace.intent);
            let similarity = asked.similarity(&template);
            (similarity >= SAME_TEMPLATE).then_some((similarity, template))
        });
    }
    let mut ways: HashMap<String, Gathered> = HashMap::new();
    for trace in memories {
        let Some(Some((similarity, template))) = alike.get(trace.intent.as_str()) else {
            continue;
        };
        let Some(map) = template.value_map(&asked) else {
            continue;
        };
        let mut steps = clean(&trace.steps, &|s| taps_toggle(app, s));
        // A session whose every step was undone still did something (a chat opened and left
        // read, a dialog's choice): its way is not "nothing to do" but what it did, as it did it.
        let raw = steps.is_empty() && trace.steps.iter().any(|s| s.success);
        if raw {
            steps = done_steps(&trace.steps);
        }
        let key = way_key(intent, &steps);
        let exact = trace.intent == intent;
        let at = heard_at(trace);
        if at <= forgotten(&key) {
            continue;
        }
        let n = steps.len() + 1;
        let way = ways.entry(key.clone()).or_insert_with(|| Gathered {
            key,
            steps,
            raw,
            remembered: trace,
            map: Vec::new(),
            similarity: *similarity,
            confirmed: 0,
            confirmed_here: 0,
            judged: 0,
            finish_agreed: false,
            last_confirmed: i64::MIN,
            ends_on: None,
            passed: 0,
            parted_at: Vec::new(),
            confirming: Default::default(),
            runs: Vec::new(),
            last_pass: vec![i64::MIN; n],
            last_bad: vec![i64::MIN; n],
            last_failed: vec![i64::MIN; n],
        });
        if exact && way.remembered.intent != intent {
            way.remembered = trace;
            way.similarity = *similarity;
        }
        if way.remembered.trace_id == trace.trace_id {
            way.map = map
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
        }
        // Only a run that passed confirms its way: one a verdict passed, or where nobody judged
        // it, one its agent said it finished (a claim: see `judge_step`). A session nobody ended
        // (an agent of seed 000's, or one still going on another phone) shows a way, vouches for
        // none; one a verdict failed is not among the memories at all.
        if !(trace.judged_passed() || (trace.verdict.is_none() && trace.finished == Some(true))) {
            continue;
        }
        way.confirmed += 1;
        way.judged += u64::from(trace.judged_passed());
        way.runs.push(trace);
        way.confirming.insert(trace.trace_id.as_str());
        way.confirmed_here += u64::from(exact && trace.app_version.as_deref() == version);
        if at >= way.last_confirmed {
            way.last_confirmed = at;
            way.ends_on.clone_from(&trace.ends_on);
        }
        for pass in &mut way.last_pass {
            *pass = (*pass).max(at);
        }
    }
    // What replays of these ways showed: checks made in sessions of the asked task (a run that
    // went the whole way has its passes counted as a confirmation already).
    for trace in app.traces().filter(|t| t.intent == intent) {
        let failed = trace.judged_failed();
        for check in trace.checks.iter().filter(|c| !c.way.is_empty()) {
            if let Some(way) = ways.get_mut(&check.way)
                && check.at > forgotten(&check.way)
            {
                let confirming = way.confirming.contains(trace.trace_id.as_str());
                way.check(check, confirming, failed);
                if failed && !way.runs.iter().any(|r| r.trace_id == trace.trace_id) {
                    way.runs.push(trace);
                }
            }
        }
    }
    ways
}

/// What a failed verdict on `trace` says of the remembered ways it went (those a check of it
/// held on): each is doubted from the step where the run left the steps of the runs that
/// passed, or else at its finish — wrong checks made `at`, to keep with the run. A way the run
/// only glanced at (the model declined it) is not the run's way, and is not doubted.
pub fn doubts_of_failed_run(app: &AppGraph, trace: &Trace, at: i64) -> Vec<Check> {
    let mut followed: Vec<&str> = trace
        .checks
        .iter()
        .filter(|c| !c.way.is_empty() && c.held())
        .map(|c| c.way.as_str())
        .collect();
    followed.sort_unstable();
    followed.dedup();
    if followed.is_empty() {
        return Vec::new();
    }
    let session = Some(trace.session_id.as_str());
    let ways = gather(app, &trace.intent, session, trace.app_version.as_deref());
    let cleaned = clean(&trace.steps, &|s| taps_toggle(app, s));
    let raw = done_steps(&trace.steps);
    followed
        .into_iter()
        .filter_map(|key| {
            let way = ways.get(key)?;
            let map = way.value_map();
            let taken = if way.raw { &raw } else { &cleaned };
            let left = taken
                .iter()
                .zip(&way.steps)
                .take_while(|(mine, theirs)| same_as_way(mine, theirs, &map))
                .count();
            let (kind, page) = match way.steps.get(left) {
                Some(step) => (AnswerKind::Memory, step.from_page.clone()),
                None => (
                    AnswerKind::Finish,
                    way.steps
                        .last()
                        .map(|s| s.to_page.clone())
                        .unwrap_or_default(),
                ),
            };
            Some(Check {
                way: key.to_string(),
                step: left as u32,
                parted: true,
                from_verdict: true,
                at,
                ..Check::now(kind, false, &page)
            })
        })
        .collect()
}

/// Of the gathered `ways`, the one to go on with from `current_page` after the session's steps
/// so far, its next step judged on its record.
fn best_way(
    ways: &HashMap<String, Gathered>,
    app: &AppGraph,
    intent: &str,
    current_page: &str,
    session: Option<&str>,
    version: Option<&str>,
) -> Option<Recall> {
    let mine = session_steps(app, session, intent);
    let taken = clean(mine, &|s| taps_toggle(app, s));
    let taken_raw = done_steps(mine);
    let labels_here: Vec<&str> = app
        .page(current_page)
        .map(|p| p.widgets.iter().map(|w| w.text.as_str()).collect())
        .unwrap_or_default();
    let recent = app.recent(version, AnswerKind::Memory);
    let (prior, breaker) = (recent_precision(recent), recent.trips());
    let finish_breaker = app.recent(version, AnswerKind::Finish).trips();
    let mut answers: Vec<(&Gathered, Recall, bool)> = ways
        .values()
        .filter_map(|way| {
            let taken = if way.raw { &taken_raw } else { &taken };
            let (recall, rejoined) = continue_way(way, taken, current_page, &labels_here)?;
            Some((way, recall, rejoined))
        })
        .collect();
    // The way to replay: one not doubted here, then one the session has followed all along
    // (not rejoined), one not doubted further on, one of this version (a lent way gives way to
    // the version's own), the most confirmed (a mistake a session made and kept is confirmed
    // once, the clean way by every run that went it), the shortest, the latest.
    answers.sort_by(|(a, ra, rejoined_a), (b, rb, rejoined_b)| {
        let doubted = |w: &Gathered, r: &Recall| w.doubts(step_of(r) as usize);
        let own = |w: &Gathered| w.confirmed_here > 0;
        doubted(a, ra)
            .cmp(&doubted(b, rb))
            .then(rejoined_a.cmp(rejoined_b))
            .then(a.doubted_from().is_some().cmp(&b.doubted_from().is_some()))
            .then(own(b).cmp(&own(a)))
            .then(b.confirmed.cmp(&a.confirmed))
            .then(a.steps.len().cmp(&b.steps.len()))
            .then(b.last_confirmed.cmp(&a.last_confirmed))
            .then(a.key.cmp(&b.key))
    });
    let (way, mut recall, _) = answers.into_iter().next()?;
    let finish = matches!(recall, Recall::Done { .. });
    let record = record_of(way, step_of(&recall), prior);
    let irreversible = match &recall {
        Recall::Act { action, .. } => irreversible(&action.widget_text, &action.widget_id),
        Recall::Done { .. } => false,
    };
    let doubted = way.doubts(step_of(&recall) as usize);
    let record = judge_step(
        record,
        doubted,
        irreversible,
        if finish { finish_breaker } else { breaker },
    );
    match &mut recall {
        Recall::Act {
            confidence, way, ..
        }
        | Recall::Done {
            confidence, way, ..
        } => {
            *confidence = confidence.min(record.confidence);
            *way = Some(record);
        }
    }
    Some(recall)
}

/// The step of its way an answer is (its length for the finish).
fn step_of(recall: &Recall) -> u32 {
    match recall {
        Recall::Act { way, .. } | Recall::Done { way, .. } => way.as_ref().map_or(0, |w| w.step),
    }
}

/// A way's record as an answer shows it, at `step`.
fn record_of(way: &Gathered, step: u32, prior: f64) -> WayTrust {
    WayTrust {
        way: way.key.clone(),
        task: way.remembered.intent.clone(),
        step,
        steps: way.steps.len() as u32,
        confirmed: way.confirmed,
        confirmed_here: way.confirmed_here,
        judged: way.judged,
        finish_agreed: way.finish_agreed,
        passed: way.passed,
        parted: way.parted_at.len() as u64,
        doubted_from: way.doubted_from(),
        // Each confirmation passed every step and the finish. A parting tells against the step
        // it parted at, not the way's other steps (an update's dialog after one step says
        // nothing of the next); one a run has confirmed the way since is behind it (and no
        // longer doubts its step either).
        confidence: way_confidence(
            way.confirmed * (way.steps.len() as u64 + 1) + way.passed,
            way.parted_at
                .iter()
                .filter(|&&(at_step, at)| at_step == step && at > way.last_confirmed)
                .count() as u64,
            prior,
        ),
        replay: false,
        held: None,
        ends_on: way.ends_on.clone(),
    }
}

/// Whether an action on the widget of this text and id cannot be undone (deletes, sends, pays,
/// orders…: [`says_irreversible`]).
pub(crate) fn irreversible(widget_text: &str, widget_id: &str) -> bool {
    says_irreversible(widget_text) || says_irreversible(widget_id)
}

/// Whether the fast path may take the answer's step of its way (a `doubted` one, an
/// `irreversible` one, with the app's breaker `tripped` or not), and why not.
fn judge_step(mut record: WayTrust, doubted: bool, irreversible: bool, tripped: bool) -> WayTrust {
    let finish = record.step == record.steps;
    record.held = if record.confirmed == 0 {
        Some("no run that passed has gone this way".into())
    } else if finish && record.judged == 0 && !record.finish_agreed {
        Some(
            "that the task is done here is only its runs' agents' claim, which no verdict and \
             no second model has confirmed: the model is asked"
                .into(),
        )
    } else if doubted {
        Some(
            "this step is doubted: a replay parted from the way here, or a run that went it \
             failed its verdict here or before, and no run has passed here since"
                .into(),
        )
    } else if tripped {
        Some("the app's recent checks of this kind of answer fell below the precision goal".into())
    } else if irreversible && record.confirmed_here == 0 {
        Some("an irreversible step this way has not been seen to do on this version".into())
    } else if record.confidence < PRECISION_GOAL {
        Some(format!(
            "the way's confidence {:.3} is below the precision goal",
            record.confidence
        ))
    } else {
        None
    };
    record.replay = record.held.is_none();
    record.confidence = (record.confidence * 1000.0).round() / 1000.0;
    record
}

/// Whether the session's step `mine` is the way's step `theirs` (values aside).
fn same_as_way(mine: &TraceStep, theirs: &TraceStep, map: &[(&str, &str)]) -> bool {
    let adapted = adapt(&theirs.action, map, &[mine.action.widget_text.as_str()])
        .unwrap_or_else(|| theirs.action.clone());
    // A step that did nothing is not the way's step that did something.
    mine.from_page == theirs.from_page
        && mine.success == theirs.success
        && (same_step(&mine.action, &theirs.action) || same_step(&mine.action, &adapted))
}

/// Where on `way` a session stands after the steps `taken`, on `current_page`: after them when
/// they are its first steps; else, when the session left the way after its first `k` (a
/// replayed step that parted, a screen an update put in the way, a mistake) and has come to a
/// page the way goes on from, there — the first such step after `k` that the session's latest
/// steps lead into, so a way rejoined is followed on, never gone back along. True when rejoined.
fn position_on(
    steps: &[TraceStep],
    taken: &[TraceStep],
    current_page: &str,
    map: &[(&str, &str)],
) -> Option<(usize, bool)> {
    let k = taken
        .iter()
        .zip(steps)
        .take_while(|(mine, theirs)| same_as_way(mine, theirs, map))
        .count();
    if k == taken.len() {
        return Some((k, false));
    }
    // Rejoined: the steps from `k` on that go on from here (the finish when the session stands
    // where the way ended), the one the session's latest steps led into best. A way is not
    // walked twice: where the session has gone on along it since it left, it rejoins after the
    // furthest step it did (its steps matched in order), unless only an earlier step goes on
    // from here (a needless Back, then the step again).
    let ends_here = steps.last().is_some_and(|s| s.to_page == current_page);
    let mut furthest = k;
    for mine in &taken[k..] {
        if let Some(j) = (furthest..steps.len()).find(|&j| same_as_way(mine, &steps[j], map)) {
            furthest = j + 1;
        }
    }
    let from_here = |from: usize| {
        (from..steps.len())
            .filter(|&j| steps[j].from_page == current_page)
            .chain(ends_here.then_some(steps.len()))
    };
    let candidates: Vec<usize> = match from_here(furthest).collect::<Vec<_>>() {
        ahead if !ahead.is_empty() => ahead,
        _ => from_here(k).collect(),
    };
    let led_in = |j: usize| {
        taken[k..]
            .iter()
            .rev()
            .zip(steps[k..j].iter().rev())
            .take_while(|(mine, theirs)| same_as_way(mine, theirs, map))
            .count()
    };
    candidates
        .into_iter()
        .max_by(|&a, &b| led_in(a).cmp(&led_in(b)).then(b.cmp(&a)))
        .map(|j| (j, true))
}

/// The steps of a session that did something, as they were done.
fn done_steps(steps: &[TraceStep]) -> Vec<TraceStep> {
    steps.iter().filter(|s| s.success).cloned().collect()
}

/// Where `way` goes on after the steps `taken`, if it continues from `current_page`, and whether
/// the session rejoined it there after leaving it.
fn continue_way(
    way: &Gathered,
    taken: &[TraceStep],
    current_page: &str,
    labels_here: &[&str],
) -> Option<(Recall, bool)> {
    let map = &way.value_map();
    let steps = &way.steps;
    let (position, rejoined) = position_on(steps, taken, current_page, map)?;
    let record = Some(WayTrust {
        step: position as u32,
        ..WayTrust::default()
    });
    match steps.get(position) {
        None => {
            let ended = steps.last().map(|s| s.to_page.as_str());
            let message = way
                .remembered
                .finish_message
                .as_ref()
                .map(|m| substitute(m, map).unwrap_or_else(|| m.clone()));
            let done = Recall::Done {
                confidence: way.similarity,
                message,
                way: record,
            };
            (ended == Some(current_page) || (steps.is_empty() && taken.is_empty()))
                .then_some((done, rejoined))
        }
        Some(next) if next.from_page == current_page => {
            let action = adapt(&next.action, map, labels_here)?;
            let act = Recall::Act {
                action,
                expected_page: next.to_page.clone(),
                remaining: steps.len() - position,
                confidence: way.similarity,
                way: record,
                checked: next.checked,
            };
            Some((act, rejoined))
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(from: &str, to: &str, kind: &str, widget: &str) -> TraceStep {
        TraceStep {
            from_page: from.into(),
            to_page: to.into(),
            action: Action {
                action_type: kind.into(),
                widget_text: widget.into(),
                ..Action::default()
            },
            success: true,
            latency_ms: 0,
            checked: None,
        }
    }

    #[test]
    fn a_session_that_left_a_way_and_went_on_along_it_rejoins_after_what_it_did() {
        // The way comes back to the page it went through (a list, an item deleted, the list).
        let way = [
            step("list", "item", "click", "Alice"),
            step("item", "menu", "click", "More"),
            step("menu", "list", "click", "Delete"),
        ];
        // The session stumbled first (a detour and its Back), went the way's steps, and came
        // back to the list by another button (the app changed): the way is done, not begun again.
        let taken = [
            step("list", "help", "click", "Help"),
            step("help", "list", "back", ""),
            step("list", "item", "click", "Alice"),
            step("item", "menu", "click", "More"),
            step("menu", "list", "click", "Remove"),
        ];
        assert_eq!(position_on(&way, &taken, "list", &[]), Some((3, true)));
        // Back on the list after only the detour: the way from its start.
        assert_eq!(position_on(&way, &taken[..2], "list", &[]), Some((0, true)));
    }

    #[test]
    fn a_detour_and_its_back_leave_the_way_and_toggles_stay() {
        let steps = [
            step("home", "menu", "click", "More"),
            step("menu", "about", "click", "About"),
            step("about", "menu", "back", ""),
            step("menu", "home", "back", ""),
            step("home", "home", "click", "Dark mode"),
            step("home", "list", "click", "Notes"),
        ];
        let way = clean(&steps, &|_| true);
        let labels: Vec<&str> = way.iter().map(|s| s.action.widget_text.as_str()).collect();
        assert_eq!(labels, ["Dark mode", "Notes"]);
        // A Back that returns somewhere else is a step of the way.
        let steps = [step("a", "b", "click", "Go"), step("b", "c", "back", "")];
        assert_eq!(clean(&steps, &|_| true).len(), 2);
    }

    #[test]
    fn a_detour_of_several_pages_left_by_one_back_leaves_the_way() {
        let no_toggle = |_: &TraceStep| false;
        let labels = |steps: &[TraceStep]| -> Vec<String> {
            clean(steps, &no_toggle)
                .iter()
                .map(|s| s.action.widget_text.clone())
                .collect()
        };
        // A menu, one of its items, and Back past the closed menu to the notes list.
        let steps = [
            step("notes", "menu", "click", "More options"),
            step("menu", "about", "click", "About"),
            step("about", "notes", "back", ""),
            step("notes", "menu", "click", "More options"),
            step("menu", "sort", "click", "Sort by"),
        ];
        assert_eq!(labels(&steps), ["More options", "Sort by"]);
        // An item deleted on the way (the list met again) is no detour: it stays.
        let steps = [
            step("home", "list", "click", "Notes"),
            step("list", "item", "click", "Shopping"),
            step("item", "list2", "click", "Delete"),
            step("list2", "home", "back", ""),
        ];
        assert_eq!(labels(&steps).len(), 4);
        // Nor is one that saved, typed or set something on the pages it went through.
        let steps = [
            step("home", "settings", "click", "Settings"),
            step("settings", "saved", "click", "Save"),
            step("saved", "home", "back", ""),
        ];
        assert_eq!(labels(&steps).len(), 3);
    }

    #[test]
    fn steps_that_undo_each_other_leave_the_way() {
        // A step on the editor's title field, named by its id.
        let on_title = |kind: &str, text: &str| TraceStep {
            action: Action {
                action_type: kind.into(),
                widget_id: "title".into(),
                input_text: text.into(),
                ..Action::default()
            },
            ..step("edit", "edit", kind, "")
        };
        let typed = |text: &str| on_title("input", text);
        let steps = [
            step("home", "home", "click", "Wi-Fi"),
            step("home", "home", "click", "Wi-Fi"),
            step("home", "list", "click", "Notes"),
            step("list", "home", "back", ""),
            step("home", "list", "click", "Notes"),
            step("list", "edit", "click", "New"),
            on_title("click", ""),
            typed("shoping"),
            typed("shopping"),
            step("edit", "list", "click", "Save"),
        ];
        let toggle = |s: &TraceStep| s.action.widget_text == "Wi-Fi";
        let way = clean(&steps, &toggle);
        let labels: Vec<String> = way
            .iter()
            .map(|s| format!("{}{}", s.action.widget_text, s.action.input_text))
            .collect();
        assert_eq!(labels, ["Notes", "New", "shopping", "Save"]);
        // "+" tapped twice is two steps, not one undone; text typed and cleared is nothing.
        let steps = [
            step("cart", "cart", "click", "+"),
            step("cart", "cart", "click", "+"),
            typed("x"),
            typed(""),
        ];
        assert_eq!(clean(&steps, &toggle).len(), 2);
    }
}
