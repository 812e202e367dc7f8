//! This replica's own writes until the follower has seen them in the database.
//!
//! The replica changes its memory before its write commits, so the database can be *behind* its
//! memory: a follower round that reads an entity while this replica's newer write to it is still
//! in flight would put the older version back. Each write therefore stays here, with the id of
//! its transaction once known, until a follower snapshot shows that transaction committed; until
//! then it is laid over what the follower reads (a whole entity replaces the row, a report's
//! counts are added to the row's). The rule is exact because it asks the database's own
//! visibility rule—is this transaction visible in the follower's snapshot?—not a clock.
//!
//! A write that failed leaves memory ahead of the database; its entities are read again from
//! the database in the next round, so memory returns to what was committed.

use std::collections::{HashMap, VecDeque};

use atlas_model::Transition;
use atlas_store::Record;

/// An entity's key: kind, app id, id.
pub(crate) type Key = (&'static str, String, String);

pub(crate) fn key_of(record: &Record) -> Key {
    let (kind, app, id) = match record {
        Record::App(a) => ("app", &a.app_id, &a.app_id),
        Record::Page(p) => ("page", &p.app_id, &p.page_id),
        Record::Intent(i) => ("intent", &i.app_id, &i.intent_id),
        Record::Trace(t) => ("trace", &t.app_id, &t.trace_id),
        Record::Stepped(s) => ("trace", &s.app_id, &s.trace_id),
        Record::Transition(t) | Record::Counted { transition: t, .. } => {
            ("transition", &t.app_id, &t.transition_id)
        }
        Record::Added(a) => ("transition", &a.app_id, &a.transition_id),
    };
    (kind, app.clone(), id.clone())
}

struct Write {
    id: u64,
    /// The transaction's id, once the writer has begun it.
    xid: Option<u64>,
    records: Vec<Record>,
}

#[derive(Default)]
pub(crate) struct Pending {
    next: u64,
    /// Whether a follower reads the database: only then are writes kept (a process that only
    /// writes, such as `atlas migrate`, would otherwise keep every record it ever wrote).
    tracking: bool,
    writes: VecDeque<Write>,
    /// Entities of failed writes, to read again from the database.
    refresh: Vec<Key>,
}

/// A `pg_snapshot` as text (`xmin:xmax:xip,…`): which transactions it sees as committed.
pub(crate) struct Snapshot {
    xmin: u64,
    xmax: u64,
    in_progress: Vec<u64>,
}

impl Snapshot {
    pub(crate) fn parse(text: &str) -> Option<Snapshot> {
        let mut parts = text.split(':');
        let xmin = parts.next()?.parse().ok()?;
        let xmax = parts.next()?.parse().ok()?;
        let in_progress = match parts.next() {
            Some(list) if !list.is_empty() => list
                .split(',')
                .map(|x| x.parse().ok())
                .collect::<Option<Vec<u64>>>()?,
            _ => Vec::new(),
        };
        Some(Snapshot {
            xmin,
            xmax,
            in_progress,
        })
    }

    /// Whether a transaction that ended (committed or not) before this snapshot is seen by it.
    fn sees(&self, xid: u64) -> bool {
        xid < self.xmin || (xid < self.xmax && !self.in_progress.contains(&xid))
    }
}

impl Pending {
    /// Remembers a write (in the order the replica made it); answers its id.
    /// Numbers a write (in the order the replica made it) and, while a follower runs,
    /// remembers it; answers its number.
    pub(crate) fn push(&mut self, records: &[Record]) -> u64 {
        self.next += 1;
        if self.tracking {
            self.writes.push_back(Write {
                id: self.next,
                xid: None,
                records: records.to_vec(),
            });
        }
        self.next
    }

    /// From now on writes are kept until a follower's snapshot sees them.
    pub(crate) fn track(&mut self) {
        self.tracking = true;
    }

    pub(crate) fn began(&mut self, ids: &[u64], xid: u64) {
        for write in self.writes.iter_mut().filter(|w| ids.contains(&w.id)) {
            write.xid = Some(xid);
        }
    }

    /// The writes' transaction is being rolled back to be tried again: until the next attempt
    /// begins they are in no transaction, so ahead of every snapshot. Called while the
    /// transaction is still open—once it has ended, a follower's snapshot would count it as
    /// seen, forget the writes though their retry has not committed, and read their edge back
    /// without them: memory would lose them for good (the follower never adds this replica's
    /// own growth).
    pub(crate) fn unbegin(&mut self, ids: &[u64]) {
        for write in self.writes.iter_mut().filter(|w| ids.contains(&w.id)) {
            write.xid = None;
        }
    }

    /// Forgets writes that did not commit; their entities are read again next round.
    pub(crate) fn failed(&mut self, ids: &[u64]) {
        let refresh = &mut self.refresh;
        self.writes.retain(|w| {
            if ids.contains(&w.id) {
                refresh.extend(w.records.iter().map(key_of));
                false
            } else {
                true
            }
        });
    }

    pub(crate) fn refresh_later(&mut self, key: Key) {
        self.refresh.push(key);
    }

    pub(crate) fn take_refresh(&mut self) -> Vec<Key> {
        std::mem::take(&mut self.refresh)
    }

    /// What the replica should hold for the entities read in a round whose snapshot is
    /// `snapshot`: each row with this replica's writes that the snapshot does not see laid over
    /// it—except a whole entity the row already holds a newer version of (the row's `writer`
    /// is this replica, `me`, and its `wseq` not older), since this replica's transactions may
    /// commit out of order. Writes the snapshot sees are done with. `versions` are the rows'
    /// (writer, wseq), in the rows' order.
    pub(crate) fn overlay(
        &mut self,
        snapshot: &Snapshot,
        rows: Vec<Record>,
        versions: &[Version],
        me: i64,
    ) -> Vec<Record> {
        self.writes
            .retain(|w| !w.xid.is_some_and(|xid| snapshot.sees(xid)));
        if self.writes.is_empty() {
            return rows;
        }
        let mut ahead: HashMap<Key, Vec<(u64, &Record)>> = HashMap::new();
        for write in &self.writes {
            for record in &write.records {
                ahead
                    .entry(key_of(record))
                    .or_default()
                    .push((write.id, record));
            }
        }
        rows.into_iter()
            .zip(versions.iter().copied().chain(std::iter::repeat((0, 0))))
            .map(|(row, (writer, wseq))| match row {
                // Another replica's growth: added to memory, which holds this replica's writes.
                Record::Added(_) => row,
                _ => match ahead.get(&key_of(&row)) {
                    Some(writes) => writes.iter().fold(row, |row, (id, write)| {
                        let row_is_newer = writer == me && wseq >= *id as i64;
                        lay_over(row, write, row_is_newer)
                    }),
                    None => row,
                },
            })
            .collect()
    }
}

/// A row's last writer and that write's number.
pub(crate) type Version = (i64, i64);

/// `write` over `row`: a whole entity replaces it unless the row is newer; a report adds its
/// counts to the row's in any case (the row does not hold them yet).
fn lay_over(row: Record, write: &Record, row_is_newer: bool) -> Record {
    match (row, write) {
        (Record::Transition(base), Record::Counted { transition, added }) => {
            // The row's counters, as the database added them up, and this write's on top; the
            // rest of the edge from whichever is newer.
            let mut t = if row_is_newer {
                base
            } else {
                Transition {
                    success_count: base.success_count,
                    fail_count: base.fail_count,
                    latency_total_ms: base.latency_total_ms,
                    latency_samples: base.latency_samples,
                    ..transition.clone()
                }
            };
            added.add_to(&mut t);
            Record::Transition(t)
        }
        // The row does not hold the growth yet, whoever wrote it last.
        (Record::Transition(mut base), Record::Added(added)) => {
            added.apply_to(&mut base);
            Record::Transition(base)
        }
        (row, _) if row_is_newer => row,
        (_, write) => write.clone().into_whole(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_model::Action;
    use atlas_store::Counts;

    fn edge(ok: u64) -> Transition {
        Transition {
            transition_id: "t".into(),
            app_id: "a".into(),
            from_page: "p".into(),
            to_page: "q".into(),
            action: Action::default(),
            success_count: ok,
            fail_count: 0,
            latency_total_ms: 0.0,
            latency_samples: 0,
            last_failure_reason: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            ..Default::default()
        }
    }

    fn report(local: u64) -> Record {
        Record::Counted {
            transition: edge(local),
            added: Counts {
                success: 1,
                ..Default::default()
            },
        }
    }

    fn success(records: &[Record]) -> u64 {
        match &records[0] {
            Record::Transition(t) => t.success_count,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_write_the_snapshot_does_not_see_is_added_to_the_row_until_it_does() {
        let mut pending = Pending::default();
        pending.track();
        let id = pending.push(&[report(1)]);
        pending.began(&[id], 100);
        // Another replica's two reports are in the row; ours (xid 100) is still in progress.
        let before = Snapshot::parse("100:101:100").unwrap();
        assert_eq!(
            success(&pending.overlay(&before, vec![Record::Transition(edge(2))], &[], 1)),
            3
        );
        // Committed: the row has all three, and ours is not added twice.
        let after = Snapshot::parse("101:101:").unwrap();
        assert_eq!(
            success(&pending.overlay(&after, vec![Record::Transition(edge(3))], &[], 1)),
            3
        );
        assert!(pending.writes.is_empty());
    }

    #[test]
    fn a_write_not_yet_begun_is_ahead_of_every_snapshot_and_a_failed_one_is_read_again() {
        let mut pending = Pending::default();
        pending.track();
        let id = pending.push(&[report(1)]);
        let any = Snapshot::parse("500:500:").unwrap();
        assert_eq!(
            success(&pending.overlay(&any, vec![Record::Transition(edge(0))], &[], 1)),
            1
        );
        pending.failed(&[id]);
        assert_eq!(pending.take_refresh().len(), 1);
        assert_eq!(
            success(&pending.overlay(&any, vec![Record::Transition(edge(0))], &[], 1)),
            0
        );
    }

    #[test]
    fn a_write_whose_attempt_was_rolled_back_stays_ahead_until_its_retry_commits() {
        let mut pending = Pending::default();
        pending.track();
        let id = pending.push(&[report(1)]);
        pending.began(&[id], 100);
        pending.unbegin(&[id]);
        // Attempt 100 has ended (rolled back); the retry has not begun: the row lacks ours.
        let between = Snapshot::parse("101:101:").unwrap();
        let rows = vec![Record::Transition(edge(2))];
        assert_eq!(success(&pending.overlay(&between, rows, &[], 1)), 3);
        pending.began(&[id], 102);
        let running = Snapshot::parse("102:103:102").unwrap();
        let rows = vec![Record::Transition(edge(2))];
        assert_eq!(success(&pending.overlay(&running, rows, &[], 1)), 3);
        let committed = Snapshot::parse("103:103:").unwrap();
        let rows = vec![Record::Transition(edge(3))];
        assert_eq!(success(&pending.overlay(&committed, rows, &[], 1)), 3);
        assert!(pending.writes.is_empty());
    }

    #[test]
    fn an_older_write_of_ours_still_in_flight_does_not_cover_a_newer_one_committed() {
        let mut pending = Pending::default();
        pending.track();
        let older = pending.push(&[Record::Transition(edge(1))]);
        let newer = pending.push(&[Record::Transition(edge(2))]);
        pending.began(&[older], 10);
        pending.began(&[newer], 11);
        // The newer committed first (xid 11 seen, 10 still running): the row is ours, wseq 2.
        let seen = Snapshot::parse("10:12:10").unwrap();
        let rows = vec![Record::Transition(edge(2))];
        let held = pending.overlay(&seen, rows, &[(7, newer as i64)], 7);
        assert_eq!(success(&held), 2);
        // Another replica's row is older than our write in flight: ours is laid over it.
        let rows = vec![Record::Transition(edge(5))];
        assert_eq!(success(&pending.overlay(&seen, rows, &[(8, 99)], 7)), 1);
    }

    #[test]
    fn our_growth_in_flight_is_added_to_a_row_read_whole_and_anothers_growth_passes_through() {
        let mut pending = Pending::default();
        pending.track();
        let growth = |reason: &str| {
            Record::Added(atlas_store::Added {
                app_id: "a".into(),
                transition_id: "t".into(),
                added: Counts {
                    success: 1,
                    ..Default::default()
                },
                reason: Some(reason.into()),
                at: 0,
            })
        };
        let id = pending.push(&[growth("ours")]);
        pending.began(&[id], 100);
        let before = Snapshot::parse("100:101:100").unwrap();
        let held = pending.overlay(&before, vec![Record::Transition(edge(2))], &[], 1);
        assert_eq!(success(&held), 3);
        match &held[0] {
            Record::Transition(t) => assert_eq!(t.last_failure_reason, "ours"),
            other => panic!("{other:?}"),
        }
        // Another replica's growth on the same edge is left for the service to add.
        let theirs = pending.overlay(&before, vec![growth("theirs")], &[], 1);
        assert!(matches!(&theirs[0], Record::Added(a) if a.reason.as_deref() == Some("theirs")));
    }
}
