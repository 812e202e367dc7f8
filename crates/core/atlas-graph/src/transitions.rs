//! An app's transitions, kept compactly: what one costs in memory decides how big a graph one
//! server holds.
//!
//! A [`Transition`] as the model has it is eleven strings and four numbers — some 600 bytes with
//! its allocations. Here a transition is a row of 32 bytes and its id's bytes in one shared text:
//! its pages are the link's ends (`links.rs` holds them anyway), its app is the app, its action a
//! number in the app's table of distinct actions (`intern.rs`), its times seconds and its counters
//! 32-bit numbers (a time written another way than Atlas writes times, or a count past four
//! billion, is kept aside whole), and a failure's reason sits beside the rows, since most
//! transitions have none. [`TransitionRef`] reads a row as the transition it stands for, and
//! [`TransitionRef::to_transition`] makes the model's value again, field for field what was
//! stored.

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_model::{Action, Counts, Transition, rfc3339_of_seconds, seconds_of_rfc3339};
use std::collections::HashMap;

use crate::intern::Interner;

/// Times are kept as seconds since 2000-01-01 in 32 bits (until 2136); this one means the time
/// is kept as text (see [`TransitionTable::odd_times`]).
const ODD_TIME: u32 = u32::MAX;
const TIME_BASE: i64 = 946_684_800;

/// Seconds since 1970 as a row keeps them, when they fit.
fn compact_time(seconds: i64) -> Option<u32> {
    u32::try_from(seconds - TIME_BASE)
        .ok()
        .filter(|s| *s != ODD_TIME)
}

/// Counters are kept in 32 bits; a row whose `success` is this keeps them in
/// [`TransitionTable::big_counts`] (an edge reported four billion times, or an import's).
const BIG_COUNTS: u32 = u32::MAX;

/// The two times of a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Which {
    Created,
    Updated,
}

/// 32 bytes: most transitions fit, and the few that do not keep the rest aside.
#[derive(Debug, Clone)]
struct Row {
    action: u32,
    created: u32,
    updated: u32,
    success: u32,
    fail: u32,
    latency_samples: u32,
    latency_total_ms: f64,
}

/// Every transition of one app but its ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct TransitionTable {
    rows: Vec<Row>,
    /// Every transition's id, one after another; `id_ends[i]` is where the `i`-th ends.
    ids: String,
    id_ends: Vec<u32>,
    actions: Interner<Action>,
    /// The last failure's reason, of the transitions that have one.
    reasons: HashMap<u32, Box<str>>,
    /// Times not written as Atlas writes them (an import's `+08:00`) or out of the rows' range,
    /// kept as given.
    odd_times: HashMap<(u32, Which), Box<str>>,
    /// The counters of rows whose counts do not fit 32 bits: success, fail, latency samples.
    big_counts: HashMap<u32, [u64; 3]>,
    /// The versions seen in and gone in ([`atlas_model::Versioned`]), of the transitions of an
    /// app whose versions are known.
    lifetimes: HashMap<u32, Lifetime>,
}

/// A transition's versions: those it was seen in, and the one it was found gone in.
#[derive(Debug, Clone, Default, PartialEq)]
struct Lifetime {
    seen_in: Vec<String>,
    gone_in: Option<String>,
}

/// Why a transition was not added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdsFull;

impl TransitionTable {
    /// Transitions.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Room for `more` transitions, made at once.
    pub(crate) fn reserve(&mut self, more: usize) {
        self.rows.reserve_exact(more);
        self.id_ends.reserve_exact(more);
    }

    /// Adds a transition; returns its slot.
    pub(crate) fn push(&mut self, t: &Transition) -> Result<u32, IdsFull> {
        let end = u32::try_from(self.ids.len() + t.transition_id.len()).map_err(|_| IdsFull)?;
        let slot = self.rows.len() as u32;
        self.ids.push_str(&t.transition_id);
        self.id_ends.push(end);
        let row = Row {
            action: self.actions.acquire(&t.action),
            created: self.time(slot, Which::Created, &t.created_at),
            updated: self.time(slot, Which::Updated, &t.updated_at),
            success: 0,
            fail: 0,
            latency_samples: 0,
            latency_total_ms: 0.0,
        };
        self.rows.push(row);
        self.set_counts(slot, Counts::of(t));
        self.set_reason(slot, &t.last_failure_reason);
        self.set_lifetime(slot, t);
        Ok(slot)
    }

    /// Replaces what the transition at `slot` holds (its id and ends stay).
    pub(crate) fn replace(&mut self, slot: u32, t: &Transition) {
        let action = if *self.action(slot) == t.action {
            self.rows[slot as usize].action
        } else {
            self.actions.release(self.rows[slot as usize].action);
            self.actions.acquire(&t.action)
        };
        let created = self.time(slot, Which::Created, &t.created_at);
        let updated = self.time(slot, Which::Updated, &t.updated_at);
        let row = &mut self.rows[slot as usize];
        (row.action, row.created, row.updated) = (action, created, updated);
        self.set_counts(slot, Counts::of(t));
        self.set_reason(slot, &t.last_failure_reason);
        self.set_lifetime(slot, t);
    }

    fn set_lifetime(&mut self, slot: u32, t: &Transition) {
        if t.seen_in.is_empty() && t.gone_in.is_none() {
            self.lifetimes.remove(&slot);
        } else {
            let lifetime = Lifetime {
                seen_in: t.seen_in.clone(),
                gone_in: t.gone_in.clone(),
            };
            self.lifetimes.insert(slot, lifetime);
        }
    }

    /// The versions the transition at `slot` was seen in.
    pub(crate) fn seen_in(&self, slot: u32) -> &[String] {
        self.lifetimes.get(&slot).map_or(&[], |l| &l.seen_in)
    }

    /// The version the transition at `slot` was found gone in.
    pub(crate) fn gone_in(&self, slot: u32) -> Option<&str> {
        self.lifetimes.get(&slot)?.gone_in.as_deref()
    }

    /// Adds a report's counters to the transition at `slot` in place: its reason, when given,
    /// replaces the one it had, and `at` (seconds since 1970) becomes its `updated_at`.
    pub(crate) fn add_counts(&mut self, slot: u32, added: Counts, reason: Option<&str>, at: i64) {
        let mut counts = self.counts(slot);
        counts.add(added);
        self.set_counts(slot, counts);
        if let Some(reason) = reason {
            self.set_reason(slot, reason);
        }
        self.rows[slot as usize].updated = self.time_of_seconds(slot, Which::Updated, at);
    }

    fn set_counts(&mut self, slot: u32, counts: Counts) {
        let small = |n: u64| u32::try_from(n).ok().filter(|n| *n != BIG_COUNTS);
        let row = &mut self.rows[slot as usize];
        row.latency_total_ms = counts.latency_total_ms;
        match (
            small(counts.success),
            small(counts.fail),
            small(counts.latency_samples),
        ) {
            (Some(success), Some(fail), Some(samples)) => {
                (row.success, row.fail, row.latency_samples) = (success, fail, samples);
                if !self.big_counts.is_empty() {
                    self.big_counts.remove(&slot);
                }
            }
            _ => {
                row.success = BIG_COUNTS;
                self.big_counts
                    .insert(slot, [counts.success, counts.fail, counts.latency_samples]);
            }
        }
    }

    /// A time given as text, as a row keeps it: seconds when the text is as Atlas writes times
    /// and within the rows' range, else [`ODD_TIME`] with the text kept aside.
    fn time(&mut self, slot: u32, which: Which, text: &str) -> u32 {
        match seconds_of_rfc3339(text).and_then(compact_time) {
            Some(seconds) => self.plain_time(slot, which, seconds),
            None => {
                self.odd_times.insert((slot, which), text.into());
                ODD_TIME
            }
        }
    }

    /// A time given in seconds since 1970, as a row keeps it (see [`TransitionTable::time`]).
    fn time_of_seconds(&mut self, slot: u32, which: Which, seconds: i64) -> u32 {
        match compact_time(seconds) {
            Some(compact) => self.plain_time(slot, which, compact),
            None => self.time(slot, which, &rfc3339_of_seconds(seconds)),
        }
    }

    /// A time that fits the row: nothing kept aside for it any more.
    fn plain_time(&mut self, slot: u32, which: Which, compact: u32) -> u32 {
        if !self.odd_times.is_empty() {
            self.odd_times.remove(&(slot, which));
        }
        compact
    }

    fn set_reason(&mut self, slot: u32, reason: &str) {
        if reason.is_empty() {
            if !self.reasons.is_empty() {
                self.reasons.remove(&slot);
            }
        } else if self.reason(slot) != reason {
            self.reasons.insert(slot, reason.into());
        }
    }

    /// The id of the transition at `slot`.
    pub(crate) fn id(&self, slot: u32) -> &str {
        let end = self.id_ends[slot as usize] as usize;
        let start = match slot {
            0 => 0,
            _ => self.id_ends[slot as usize - 1] as usize,
        };
        &self.ids[start..end]
    }

    pub(crate) fn action(&self, slot: u32) -> &Action {
        self.actions.get(self.rows[slot as usize].action)
    }

    pub(crate) fn counts(&self, slot: u32) -> Counts {
        let row = &self.rows[slot as usize];
        let [success, fail, latency_samples] = match row.success {
            BIG_COUNTS => self.big_counts.get(&slot).copied().unwrap_or_default(),
            _ => [row.success, row.fail, row.latency_samples].map(u64::from),
        };
        Counts {
            success,
            fail,
            latency_total_ms: row.latency_total_ms,
            latency_samples,
        }
    }

    pub(crate) fn reason(&self, slot: u32) -> &str {
        self.reasons.get(&slot).map_or("", |r| r)
    }

    /// The greatest `updated_at` as text. Times kept as seconds compare as their text does (the
    /// text is fixed-width, years 2000 to 2136), so only the greatest of them is written out.
    pub(crate) fn latest_update(&self) -> Option<String> {
        let latest = self
            .rows
            .iter()
            .map(|row| row.updated)
            .filter(|seconds| *seconds != ODD_TIME)
            .max()
            .map(|seconds| rfc3339_of_seconds(TIME_BASE + i64::from(seconds)));
        let odd = self
            .odd_times
            .iter()
            .filter(|((_, which), _)| *which == Which::Updated)
            .map(|(_, text)| text.to_string());
        latest.into_iter().chain(odd).max()
    }

    fn time_text(&self, slot: u32, which: Which) -> String {
        let row = &self.rows[slot as usize];
        let seconds = match which {
            Which::Created => row.created,
            Which::Updated => row.updated,
        };
        if seconds == ODD_TIME {
            self.odd_times
                .get(&(slot, which))
                .map_or_else(String::new, |t| t.to_string())
        } else {
            rfc3339_of_seconds(TIME_BASE + i64::from(seconds))
        }
    }
}

/// The table as an image writes it: rows as they are in memory, ids as one text, the distinct
/// actions once each, then what is kept aside. Reading it builds no index but the actions'.
impl TransitionTable {
    pub(crate) fn write_image(&self, w: &mut ImageWriter) {
        w.len(self.rows.len());
        for row in &self.rows {
            for n in [
                row.action,
                row.created,
                row.updated,
                row.success,
                row.fail,
                row.latency_samples,
            ] {
                w.u32(n);
            }
            w.f64(row.latency_total_ms);
        }
        w.str(&self.ids);
        w.u32s(&self.id_ends);
        w.len(self.actions.values().len());
        for a in self.actions.values() {
            for text in [
                &a.action_type,
                &a.widget_id,
                &a.widget_text,
                &a.widget_xpath,
                &a.input_text,
            ] {
                w.str(text);
            }
        }
        let mut reasons: Vec<_> = self.reasons.iter().collect();
        reasons.sort_unstable_by_key(|(slot, _)| **slot);
        w.len(reasons.len());
        for (slot, reason) in reasons {
            w.u32(*slot);
            w.str(reason);
        }
        let mut odd: Vec<_> = self.odd_times.iter().collect();
        odd.sort_unstable_by_key(|((slot, which), _)| (*slot, *which == Which::Updated));
        w.len(odd.len());
        for ((slot, which), text) in odd {
            w.u32(*slot);
            w.u8(u8::from(*which == Which::Updated));
            w.str(text);
        }
        let mut big: Vec<_> = self.big_counts.iter().collect();
        big.sort_unstable_by_key(|(slot, _)| **slot);
        w.len(big.len());
        for (slot, counts) in big {
            w.u32(*slot);
            counts.iter().for_each(|c| w.u64(*c));
        }
        let mut lifetimes: Vec<_> = self.lifetimes.iter().collect();
        lifetimes.sort_unstable_by_key(|(slot, _)| **slot);
        w.len(lifetimes.len());
        for (slot, lifetime) in lifetimes {
            w.u32(*slot);
            w.len(lifetime.seen_in.len());
            lifetime.seen_in.iter().for_each(|v| w.str(v));
            w.str(lifetime.gone_in.as_deref().unwrap_or_default());
        }
    }

    pub(crate) fn read_image(r: &mut ImageReader) -> Result<TransitionTable, ImageError> {
        const ROW_BYTES: usize = 6 * 4 + 8;
        let n = r.len(ROW_BYTES)?;
        let mut rows = Vec::with_capacity(n);
        for _ in 0..n {
            rows.push(Row {
                action: r.u32()?,
                created: r.u32()?,
                updated: r.u32()?,
                success: r.u32()?,
                fail: r.u32()?,
                latency_samples: r.u32()?,
                latency_total_ms: r.f64()?,
            });
        }
        let ids = r.str()?.to_string();
        let id_ends = r.u32s()?;
        if id_ends.len() != n {
            return Err(ImageError::invalid("ids and rows differ in number"));
        }
        let mut start = 0usize;
        for end in &id_ends {
            let end = *end as usize;
            if end < start || end > ids.len() || !ids.is_char_boundary(end) {
                return Err(ImageError::invalid("an id's end is out of place"));
            }
            start = end;
        }
        let action_count = r.len(5 * 8)?;
        let mut actions = Vec::with_capacity(action_count);
        for _ in 0..action_count {
            actions.push(Action {
                action_type: r.str()?.into(),
                widget_id: r.str()?.into(),
                widget_text: r.str()?.into(),
                widget_xpath: r.str()?.into(),
                input_text: r.str()?.into(),
            });
        }
        let mut holders = vec![0u32; action_count];
        for row in &rows {
            let held = holders
                .get_mut(row.action as usize)
                .ok_or_else(|| ImageError::invalid("a row's action is not in the table"))?;
            *held += 1;
        }
        let slot = |r: &mut ImageReader| -> Result<u32, ImageError> {
            let slot = r.u32()?;
            if slot as usize >= n {
                return Err(ImageError::invalid("an entry aside names no row"));
            }
            Ok(slot)
        };
        let mut reasons = HashMap::new();
        for _ in 0..r.len(12)? {
            reasons.insert(slot(r)?, r.str()?.into());
        }
        let mut odd_times = HashMap::new();
        for _ in 0..r.len(13)? {
            let at = slot(r)?;
            let which = match r.u8()? {
                0 => Which::Created,
                1 => Which::Updated,
                _ => {
                    return Err(ImageError::invalid(
                        "a time that is neither created nor updated",
                    ));
                }
            };
            odd_times.insert((at, which), r.str()?.into());
        }
        let mut big_counts = HashMap::new();
        for _ in 0..r.len(28)? {
            let at = slot(r)?;
            big_counts.insert(at, [r.u64()?, r.u64()?, r.u64()?]);
        }
        let mut lifetimes = HashMap::new();
        for _ in 0..r.len(16)? {
            let at = slot(r)?;
            let seen_in = (0..r.len(8)?)
                .map(|_| r.str().map(str::to_string))
                .collect::<Result<Vec<_>, _>>()?;
            let gone_in = Some(r.str()?.to_string()).filter(|v| !v.is_empty());
            lifetimes.insert(at, Lifetime { seen_in, gone_in });
        }
        Ok(TransitionTable {
            rows,
            ids,
            id_ends,
            actions: Interner::rebuild(actions, holders),
            reasons,
            odd_times,
            big_counts,
            lifetimes,
        })
    }
}

/// One transition of an app, read where the app keeps it.
#[derive(Clone, Copy)]
pub struct TransitionRef<'a> {
    app: &'a crate::AppGraph,
    slot: u32,
}

impl std::fmt::Debug for TransitionRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_transition().fmt(f)
    }
}

impl<'a> TransitionRef<'a> {
    pub(crate) fn new(app: &'a crate::AppGraph, slot: u32) -> TransitionRef<'a> {
        TransitionRef { app, slot }
    }

    fn table(&self) -> &'a TransitionTable {
        &self.app.transitions
    }

    /// Its slot in the app: what a [`crate::Plan`]'s steps are.
    pub fn slot(&self) -> usize {
        self.slot as usize
    }

    /// Its id.
    pub fn transition_id(&self) -> &'a str {
        self.table().id(self.slot)
    }

    /// The app it belongs to.
    pub fn app_id(&self) -> &'a str {
        self.app.app_id()
    }

    /// The page it starts from.
    pub fn from_page(&self) -> &'a str {
        let [from, _] = self.app.links.ends(self.slot);
        &self.app.page_at(from).page_id
    }

    /// The page it leads to.
    pub fn to_page(&self) -> &'a str {
        let [_, to] = self.app.links.ends(self.slot);
        &self.app.page_at(to).page_id
    }

    /// Its action.
    pub fn action(&self) -> &'a Action {
        self.table().action(self.slot)
    }

    /// Its counters, and through them its rates.
    pub fn counts(&self) -> Counts {
        self.table().counts(self.slot)
    }

    /// Reports that it worked.
    pub fn success_count(&self) -> u64 {
        self.counts().success
    }

    /// Reports that it failed.
    pub fn fail_count(&self) -> u64 {
        self.counts().fail
    }

    /// Why it last failed, as reported.
    pub fn last_failure_reason(&self) -> &'a str {
        self.table().reason(self.slot)
    }

    /// When it was first reported.
    pub fn created_at(&self) -> String {
        self.table().time_text(self.slot, Which::Created)
    }

    /// When it last changed.
    pub fn updated_at(&self) -> String {
        self.table().time_text(self.slot, Which::Updated)
    }

    /// The transition as the model has it, field for field what was stored.
    pub fn to_transition(&self) -> Transition {
        let counts = self.counts();
        Transition {
            transition_id: self.transition_id().to_string(),
            app_id: self.app_id().to_string(),
            from_page: self.from_page().to_string(),
            to_page: self.to_page().to_string(),
            action: self.action().clone(),
            success_count: counts.success,
            fail_count: counts.fail,
            latency_total_ms: counts.latency_total_ms,
            latency_samples: counts.latency_samples,
            last_failure_reason: self.last_failure_reason().to_string(),
            created_at: self.created_at(),
            updated_at: self.updated_at(),
            seen_in: self.seen_in().to_vec(),
            gone_in: self.gone_in().map(str::to_string),
        }
    }

    /// The versions of its app it was seen in.
    pub fn seen_in(&self) -> &'a [String] {
        self.table().seen_in(self.slot)
    }

    /// The version a release was found without it in.
    pub fn gone_in(&self) -> Option<&'a str> {
        self.table().gone_in(self.slot)
    }

    /// Whether a release was found without it: routes leave it out.
    pub fn is_gone(&self) -> bool {
        self.gone_in().is_some()
    }

    /// Whether it was seen in `version` (one with no versions, in the app's first).
    pub fn seen_in_version(&self, version: &str) -> bool {
        atlas_model::versions::seen_in_version(self.seen_in(), version, &self.app.app.versions)
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{edge, empty_app, page};

    #[test]
    fn a_transition_reads_back_field_for_field_as_it_was_stored() {
        let mut g = empty_app("a");
        for (i, name) in ["首页", "外卖", "订单"].iter().enumerate() {
            g.upsert_page(page("a", name, i as u32));
        }
        let mut plain = edge("a", "首页", "外卖", "外卖", 3, 1);
        plain.created_at = "2026-11-26T08:00:00Z".into();
        plain.updated_at = "2026-11-26T09:30:15Z".into();
        plain.latency_total_ms = 1234.5;
        plain.latency_samples = 4;
        // Another writing of a time, a reason, an input and an XPath: all kept as given.
        let mut odd = edge("a", "外卖", "订单", "下单", 0, 2);
        odd.created_at = "2026-11-26T16:00:00+08:00".into();
        odd.updated_at = "yesterday".into();
        odd.last_failure_reason = "找不到控件 'submit'".into();
        odd.action.input_text = "laundry".into();
        odd.action.widget_xpath = "//button[2]".into();
        // The same action from another page shares the first one's entry.
        let mut again = edge("a", "订单", "外卖", "外卖", 1, 0);
        again.created_at = "2000-01-01T00:00:00Z".into();
        again.updated_at = "2136-02-07T06:28:14Z".into();
        // Times and counts past what a row holds are kept aside whole.
        let mut big = edge("a", "订单", "首页", "返回", u64::from(u32::MAX), 3);
        big.created_at = "1999-12-31T23:59:59Z".into();
        big.updated_at = "2200-01-01T00:00:00Z".into();
        big.latency_samples = 1 << 40;
        for t in [&plain, &odd, &again, &big] {
            assert!(g.upsert_transition(t).unwrap());
        }
        assert_eq!(g.transitions.big_counts.len(), 1);
        for t in [&plain, &odd, &again, &big] {
            let stored = g.transition(&t.transition_id).unwrap();
            assert_eq!(&stored.to_transition(), t);
            assert_eq!(stored.from_page(), t.from_page);
            assert_eq!(stored.to_page(), t.to_page);
        }
        assert_eq!(g.transitions.actions.len(), 3);

        // A report changes the counters, the reason, a time and the action's text.
        let mut changed = odd.clone();
        changed.success_count += 1;
        changed.last_failure_reason.clear();
        changed.updated_at = "2026-11-27T00:00:00Z".into();
        changed.action.widget_xpath = "//button[3]".into();
        assert!(!g.upsert_transition(&changed).unwrap());
        assert_eq!(
            g.transition(&odd.transition_id).unwrap().to_transition(),
            changed
        );
        assert_eq!(g.transitions.actions.len(), 3, "the old action was let go");
        assert_eq!(g.transitions.odd_times.len(), 3);
        assert!(g.transitions.reasons.is_empty());
        // Counts that fit again go back into the row.
        let mut small = big.clone();
        small.latency_samples = 7;
        small.success_count = 9;
        g.upsert_transition(&small).unwrap();
        assert!(g.transitions.big_counts.is_empty());
        assert_eq!(
            g.transition(&big.transition_id).unwrap().to_transition(),
            small
        );
        let slots: Vec<usize> = g.transitions().map(|t| t.slot()).collect();
        assert_eq!(slots, vec![0, 1, 2, 3]);
        // The latest update, found without writing out every time, is the latest of them all.
        let every = g.transitions().map(|t| t.to_transition().updated_at).max();
        assert_eq!(g.latest_transition_update(), every);
        assert_eq!(every.as_deref(), Some("2200-01-01T00:00:00Z"));
        let into_takeout: Vec<&str> = g
            .incoming(&plain.to_page)
            .map(|t| t.transition_id())
            .collect();
        assert_eq!(
            into_takeout,
            vec![again.transition_id.as_str(), plain.transition_id.as_str()]
        );
    }

    #[test]
    fn a_report_adds_to_the_row_in_place_with_its_time_even_one_the_row_cannot_hold() {
        let mut g = empty_app("a");
        for (i, name) in ["首页", "外卖"].iter().enumerate() {
            g.upsert_page(page("a", name, i as u32));
        }
        let mut t = edge("a", "首页", "外卖", "外卖", 3, 1);
        t.updated_at = "yesterday".into();
        g.upsert_transition(&t).unwrap();
        let added = atlas_model::Counts {
            success: 0,
            fail: 1,
            latency_total_ms: 250.0,
            latency_samples: 1,
        };
        let seconds = atlas_model::seconds_of_rfc3339("2026-11-27T01:00:00Z").unwrap();
        assert!(g.add_counts(&t.transition_id, added, Some("超时"), seconds));
        let mut expected = t.clone();
        added.add_to(&mut expected);
        expected.last_failure_reason = "超时".into();
        expected.updated_at = "2026-11-27T01:00:00Z".into();
        assert_eq!(
            g.transition(&t.transition_id).unwrap().to_transition(),
            expected
        );
        let updated_aside = (0, super::Which::Updated);
        assert!(
            !g.transitions.odd_times.contains_key(&updated_aside),
            "the odd time was replaced"
        );

        // Past 2136 the row cannot hold the time: it is kept aside, and read back as given.
        let later = atlas_model::seconds_of_rfc3339("2200-01-01T00:00:00Z").unwrap();
        assert!(g.add_counts(&t.transition_id, added, None, later));
        let stored = g.transition(&t.transition_id).unwrap().to_transition();
        assert_eq!(stored.updated_at, "2200-01-01T00:00:00Z");
        assert_eq!(
            stored.last_failure_reason, "超时",
            "no reason given: the old one stays"
        );
        assert_eq!(stored.fail_count, 3);
        assert!(!g.add_counts("no such transition", added, None, later));
    }
}
