//! The write-ahead journal: numbered segment files of frames (`entry.rs`), one frame per atomic
//! append, written by one thread that fsyncs each batch once (group commit). Segments of JSON
//! lines, as Atlas wrote them before its frames, are still read.
//!
//! Key design decision: **a segment is zero-filled ahead of its writes**, a few megabytes at a
//! time, so a group commit overwrites bytes the file already has instead of growing it. Growing
//! a file changes its size, and `fdatasync` must then commit the filesystem's own journal as
//! well as the data (on ext4 this doubles its cost); overwriting needs the data flushed alone —
//! what SQLite's reused write-ahead log gets too. A frame's length is never zero, so a zero
//! length is the untouched rest of the segment: reading stops there.
//!
//! A batch that cannot be written (a full disk, a failing `fsync`) is **undone**: the segment is
//! cut back to where its durable frames end, every waiter is told, and the journal refuses
//! writes — never writing after a failed frame in the same segment — until its caller, having
//! read again what is durable ([`Journal::replay`] reads no further than the last durable frame),
//! asks it to resume in a new segment.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use atlas_store::{Commit, CommitSender, Record, StoreError};
use parking_lot::Mutex;

use crate::layout::{Layout, atomic_write};
use atlas_store::files::is_no_space;
use atlas_store::space::Space;

/// Most appends folded into one fsync; bounds the latency one slow batch adds.
const MAX_BATCH: usize = 8192;
/// How far ahead of its writes a segment is zero-filled: as far as it holds records already,
/// within these bounds, so a size change (a commit of the filesystem's journal) comes every few
/// thousand reports instead of every group commit, and a quiet folder's segment stays small.
const ZEROED_AHEAD: std::ops::RangeInclusive<u64> = (256 << 10)..=(8 << 20);

enum Command {
    Append(Vec<u8>, CommitSender),
    Rotate(mpsc::SyncSender<Result<u64, StoreError>>),
    Resume(mpsc::SyncSender<Result<(), StoreError>>),
}

/// What the writer and the journal's callers share.
struct Shared {
    /// Why writes are refused, after a batch failed; none while they are taken.
    broken: Mutex<Option<StoreError>>,
    /// How many batches have failed since the journal opened.
    failures: AtomicU64,
    /// Where the durable frames end: the segment being written and the byte its last durable
    /// frame ends at. Replay reads no further.
    durable: Mutex<(u64, u64)>,
    space: Space,
    /// Makes the next batch's `fsync` fail, in tests.
    #[cfg(test)]
    fail_next_sync: std::sync::atomic::AtomicBool,
}

pub(crate) struct Journal {
    dir: PathBuf,
    layout: Layout,
    sender: Mutex<Option<mpsc::Sender<Command>>>,
    shared: Arc<Shared>,
    /// Bytes appended since the last rotation (a checkpoint's cut).
    appended: AtomicU64,
    /// Damaged frames replay skipped (each a line for the log and `fsck`).
    damage: Mutex<Vec<String>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// A segment of frames, as this Atlas writes them.
const FRAMES: &str = "wal";
/// A segment of JSON lines, as Atlas wrote them before frames.
const LINES: &str = "jsonl";

fn segment_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("{n:020}.{FRAMES}"))
}

/// The segments in `dir`, in order: each one's number and path.
fn list_segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>, StoreError> {
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().to_string();
        let Some((number, kind)) = name.split_once('.') else {
            continue;
        };
        if let (Ok(n), FRAMES | LINES) = (number.parse::<u64>(), kind) {
            segments.push((n, dir.join(&name)));
        }
    }
    segments.sort_unstable();
    Ok(segments)
}

/// The segment being written: its file, where its records end, and how far it is zero-filled.
struct Segment {
    file: File,
    number: u64,
    end: u64,
    zeroed: u64,
    #[cfg(test)]
    fail_next_sync: bool,
}

impl Segment {
    /// A new, empty segment, zero-filled ahead and durable with its directory entry.
    fn create(dir: &Path, number: u64) -> std::io::Result<Segment> {
        let file = OpenOptions::new()
            .create_new(true)
            .read(true)
            .write(true)
            .open(segment_path(dir, number))?;
        let mut segment = Segment {
            file,
            number,
            end: 0,
            zeroed: 0,
            #[cfg(test)]
            fail_next_sync: false,
        };
        segment.zero_ahead(1)?;
        segment.file.sync_all()?;
        File::open(dir)?.sync_all()?;
        Ok(segment)
    }

    /// Zero-fills the segment far enough ahead for `more` bytes of records.
    fn zero_ahead(&mut self, more: u64) -> std::io::Result<()> {
        if self.end + more <= self.zeroed {
            return Ok(());
        }
        let ahead = self.end.clamp(*ZEROED_AHEAD.start(), *ZEROED_AHEAD.end());
        let target = self.end + more + ahead;
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        while self.zeroed < target {
            let chunk = ZEROS.len().min((target - self.zeroed) as usize);
            self.file.write_all_at(&ZEROS[..chunk], self.zeroed)?;
            self.zeroed += chunk as u64;
        }
        Ok(())
    }

    /// `fsync`'s data half; a test can make the next one fail as a dying disk's does (the bytes
    /// written, their durability unknown).
    fn sync_data(&mut self) -> std::io::Result<()> {
        #[cfg(test)]
        if std::mem::take(&mut self.fail_next_sync) {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
        self.file.sync_data()
    }

    /// Writes `bytes` after the records and makes them durable; on failure, cuts the segment
    /// back to where its durable records end, so that nothing of the batch is read back
    /// (returned: the write's error, and the cut's if it failed too).
    fn write_durably(
        &mut self,
        bytes: &[u8],
    ) -> Result<(), (std::io::Error, Option<std::io::Error>)> {
        let durable = self.end;
        let written = self
            .zero_ahead(bytes.len() as u64)
            .and_then(|()| self.file.write_all_at(bytes, durable))
            .and_then(|()| self.sync_data());
        match written {
            Ok(()) => {
                self.end = durable + bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Shortening a file needs no space; what an fsync that failed left is unknown,
                // so the cut is made durable too.
                let cut = self
                    .file
                    .set_len(durable)
                    .and_then(|()| self.file.sync_all());
                self.zeroed = durable;
                Err((e, cut.err()))
            }
        }
    }
}

impl Journal {
    pub(crate) fn open(dir: PathBuf, layout: Layout) -> Result<Journal, StoreError> {
        let folded_before = read_checkpoint(&layout.checkpoint_file())?;
        let segments = list_segments(&dir)?;
        // Never append to a segment that may end in a torn line: always start a fresh one.
        let first_live = segments
            .last()
            .map(|(n, _)| n + 1)
            .unwrap_or(0)
            .max(folded_before);
        let segment = Segment::create(&dir, first_live)?;
        let (sender, receiver) = mpsc::channel();
        let shared = Arc::new(Shared {
            broken: Mutex::new(None),
            failures: AtomicU64::new(0),
            durable: Mutex::new((first_live, 0)),
            space: Space::new(layout.root()),
            #[cfg(test)]
            fail_next_sync: Default::default(),
        });
        let writer = {
            let writer = Writer {
                segment,
                next: first_live + 1,
                dir: dir.clone(),
                shared: shared.clone(),
                layout: layout.clone(),
            };
            std::thread::Builder::new()
                .name("atlas-journal".into())
                .spawn(move || writer.run(receiver))?
        };
        Ok(Journal {
            dir,
            layout,
            sender: Mutex::new(Some(sender)),
            shared,
            appended: AtomicU64::new(0),
            damage: Mutex::new(Vec::new()),
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Whether a write now would be taken: not after a failed batch until [`Journal::resume`],
    /// nor while the disk's free space is under the reserve.
    pub(crate) fn writable(&self) -> Result<(), StoreError> {
        if let Some(e) = self.shared.broken.lock().clone() {
            return Err(e);
        }
        self.shared.space.check()
    }

    /// How many batches have failed since the journal opened.
    pub(crate) fn failures(&self) -> u64 {
        self.shared.failures.load(Ordering::Acquire)
    }

    /// After a failed batch, starts a new segment and takes writes again; an error (and still
    /// refusing) while the disk cannot take the segment or is under the reserve.
    pub(crate) fn resume(&self) -> Result<(), StoreError> {
        if self.shared.broken.lock().is_none() {
            return Ok(());
        }
        self.shared.space.check()?;
        self.ask(Command::Resume)
    }

    /// Sends the writer `command` and waits for its answer.
    fn ask<T>(
        &self,
        command: impl FnOnce(mpsc::SyncSender<Result<T, StoreError>>) -> Command,
    ) -> Result<T, StoreError> {
        let stopped = || StoreError::Failed("journal writer stopped".into());
        let (tx, rx) = mpsc::sync_channel(1);
        let sent = self
            .sender
            .lock()
            .as_ref()
            .is_some_and(|s| s.send(command(tx)).is_ok());
        if !sent {
            return Err(stopped());
        }
        rx.recv().map_err(|_| stopped())?
    }

    /// The disk under the folder, measured now.
    pub(crate) fn disk(&self) -> Option<atlas_store::DiskSpace> {
        self.shared.space.disk()
    }

    pub(crate) fn append(&self, records: &[Record]) -> Commit {
        // Only a failure refuses here, which the caller learns of by the failure count and
        // undoes; the reserve is asked before the caller changes anything ([`Journal::writable`]),
        // and a write it let through is taken.
        if let Some(e) = self.shared.broken.lock().clone() {
            return Commit::refused(e);
        }
        let frame = match crate::entry::frame(records) {
            Ok(frame) => frame,
            Err(e) => return Commit::failed(format!("the records cannot be written: {e}")),
        };
        let (tx, commit) = Commit::new();
        self.appended
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
        match self.sender.lock().as_ref() {
            Some(s) if s.send(Command::Append(frame, tx)).is_ok() => commit,
            _ => Commit::failed("journal writer stopped".into()),
        }
    }

    /// Bytes appended since the last [`Journal::rotate`].
    pub(crate) fn appended(&self) -> u64 {
        self.appended.load(Ordering::Relaxed)
    }

    /// Starts a new segment; returns its number. Everything appended before is in older
    /// segments, durable: an error if a batch before it failed. While writes are refused after a
    /// failure, the number is the segment [`Journal::resume`] will start, and no file is made
    /// (a checkpoint then folds what is durable, and may free the space to resume).
    pub(crate) fn rotate(&self) -> Result<u64, StoreError> {
        self.appended.store(0, Ordering::Relaxed);
        self.ask(Command::Rotate)
    }

    /// Records the files as covering every segment before `cut`, then deletes those segments.
    pub(crate) fn trim_before(&self, cut: u64) -> Result<(), StoreError> {
        let body = serde_json::json!({ "folded_before": cut, "at": atlas_model::now_rfc3339() });
        atomic_write(
            &self.layout.checkpoint_file(),
            &serde_json::to_vec_pretty(&body).expect("json"),
            true,
        )?;
        for (n, path) in list_segments(&self.dir)? {
            if n < cut {
                fs::remove_file(path)?;
            }
        }
        Ok(())
    }

    /// The damaged frames the last replay skipped, as lines for the log.
    pub(crate) fn damage(&self) -> Vec<String> {
        self.damage.lock().clone()
    }

    /// Calls `apply` with every durable record not yet folded into the files, in append order,
    /// with the number of the segment it is in: at start-up the segments before the writer's,
    /// later also the writer's own up to its last durable frame. A torn last frame (a crash
    /// mid-write, never acknowledged) ends its segment.
    pub(crate) fn replay(&self, apply: impl FnMut(u64, Vec<Record>)) -> Result<(), StoreError> {
        let folded_before = read_checkpoint(&self.layout.checkpoint_file())?;
        let durable = *self.shared.durable.lock();
        read_segments(
            &self.dir,
            (folded_before..durable.0 + 1, Some(durable)),
            |path, what| {
                let line = format!("journal {} {what}", path.display());
                if let Unreadable::Skipped { .. } = what {
                    tracing::error!("{line}");
                    self.damage.lock().push(line.clone());
                }
                self.layout.log_root("errors.log", &line)
            },
            apply,
        )
    }
}

/// What reading a segment found that it could not read.
pub(crate) enum Unreadable {
    /// The segment's last frame is torn (a crash while it was written, so never acknowledged)
    /// or damaged with no whole frame after it; reading stopped there.
    Tail {
        /// Where, for the log.
        at: String,
        /// Why.
        error: String,
    },
    /// A damaged frame with whole frames after it: those were read. The frames lost had been
    /// acknowledged (a later frame was written after them).
    Skipped {
        /// Where the damage starts.
        at: u64,
        /// Bytes skipped to the next whole frame.
        bytes: u64,
        /// Frames lost: exactly one when the damaged frame's length was intact and the next
        /// frame begins where it says, else at least one (`exact` false).
        frames: u64,
        /// Whether `frames` is exact.
        exact: bool,
    },
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Tail { at, error } => {
                write!(
                    f,
                    "at {at}: unreadable record, the segment ends there: {error}"
                )
            }
            Unreadable::Skipped {
                at,
                bytes,
                frames,
                exact,
            } => write!(
                f,
                "at byte {at}: a damaged frame; {bytes} bytes skipped to the next whole frame, \
                 {}{frames} acknowledged write{} lost, the frames after it read",
                if *exact { "" } else { "at least " },
                if *frames == 1 && *exact { "" } else { "s" }
            ),
        }
    }
}

/// The records of the segments numbered in `range`, in order, each with its segment's number,
/// and `cut`'s segment no further than its byte (where a running writer's durable frames end).
/// A segment's damaged frame is skipped to the next whole one; a torn or damaged end ends it
/// (`unreadable` is told of either), and a segment deleted meanwhile (folded by a checkpoint of
/// a running writer) is skipped.
pub(crate) fn read_segments(
    dir: &Path,
    (range, cut): (std::ops::Range<u64>, Option<(u64, u64)>),
    mut unreadable: impl FnMut(&Path, &Unreadable),
    mut apply: impl FnMut(u64, Vec<Record>),
) -> Result<(), StoreError> {
    for (n, path) in list_segments(dir)? {
        if !range.contains(&n) {
            continue;
        }
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            unreadable(
                &path,
                &Unreadable::Tail {
                    at: "its start".into(),
                    error: "not a regular file".into(),
                },
            );
            continue;
        }
        let size = match cut {
            Some((segment, end)) if segment == n => meta.len().min(end),
            _ => meta.len(),
        };
        let mut apply = |records| apply(n, records);
        match path.extension().and_then(|e| e.to_str()) {
            Some(LINES) => {
                if let Err((at, error)) = read_lines(&mut BufReader::new(file), &mut apply) {
                    unreadable(&path, &Unreadable::Tail { at, error });
                }
            }
            _ => read_frames(&file, size, &mut apply, &mut |u| unreadable(&path, &u)),
        }
    }
    Ok(())
}

/// The whole frame at `at`, if one is there: its records and where it ends.
fn frame_at(file: &File, size: u64, at: u64) -> Option<(Vec<Record>, u64)> {
    use crate::entry::FRAME_HEAD;
    let mut head = [0u8; FRAME_HEAD];
    if size.checked_sub(at)? < FRAME_HEAD as u64 || file.read_exact_at(&mut head, at).is_err() {
        return None;
    }
    let (length, checksum) = crate::entry::head(head);
    let end = at + FRAME_HEAD as u64 + u64::from(length);
    if length == 0 || end > size {
        return None;
    }
    let mut payload = vec![0u8; length as usize];
    file.read_exact_at(&mut payload, at + FRAME_HEAD as u64)
        .ok()?;
    let records = crate::entry::records(&payload, checksum).ok()?;
    Some((records, end))
}

/// Where the next whole frame after a damaged one at `at` begins: where the damaged frame's
/// length says it ends, if a whole frame is there, else the first position after `at` where one
/// is (its checksum matches and its entries read).
fn next_whole_frame(file: &File, size: u64, at: u64) -> Option<(u64, bool)> {
    use crate::entry::FRAME_HEAD;
    let mut head = [0u8; FRAME_HEAD];
    if file.read_exact_at(&mut head, at).is_ok() {
        let (length, _) = crate::entry::head(head);
        let after = at + FRAME_HEAD as u64 + u64::from(length);
        if length > 0 && frame_at(file, size, after).is_some() {
            return Some((after, true));
        }
    }
    // Scanned a window at a time; a frame's length and first entry tag are checked in the
    // window before its checksum is computed.
    const WINDOW: u64 = 1 << 20;
    let mut window = vec![0u8; (WINDOW as usize) + FRAME_HEAD + 1];
    let mut from = at + 1;
    while size.saturating_sub(from) >= FRAME_HEAD as u64 {
        let take = (size - from).min(window.len() as u64) as usize;
        file.read_exact_at(&mut window[..take], from).ok()?;
        let last = take.saturating_sub(FRAME_HEAD);
        if window[..take].iter().all(|b| *b == 0) {
            return None; // the zero-filled rest of the segment
        }
        for offset in 0..=last.min(WINDOW as usize - 1) {
            let (length, _) = crate::entry::head(
                window[offset..offset + FRAME_HEAD]
                    .try_into()
                    .expect("a frame head"),
            );
            let position = from + offset as u64;
            let plausible = length > 0
                && position + FRAME_HEAD as u64 + u64::from(length) <= size
                && window
                    .get(offset + FRAME_HEAD)
                    .is_none_or(|tag| crate::entry::is_tag(*tag));
            if plausible && frame_at(file, size, position).is_some() {
                return Some((position, false));
            }
        }
        from += WINDOW;
    }
    None
}

/// A segment's frames, up to the zero-filled rest; a damaged frame is skipped to the next whole
/// one, and a torn or damaged end (no whole frame after it) ends the segment. Read through one
/// buffer, as start-up replays hundreds of thousands of frames; only a damaged frame's search
/// reads at positions.
fn read_frames(
    file: &File,
    size: u64,
    apply: &mut dyn FnMut(Vec<Record>),
    unreadable: &mut dyn FnMut(Unreadable),
) {
    use crate::entry::FRAME_HEAD;
    use std::io::{Read, Seek, SeekFrom};
    let mut reader = BufReader::new(file);
    let mut at = 0u64;
    let mut payload = Vec::new();
    loop {
        let mut head = [0u8; FRAME_HEAD];
        if size.saturating_sub(at) < FRAME_HEAD as u64 || reader.read_exact(&mut head).is_err() {
            return;
        }
        let (length, checksum) = crate::entry::head(head);
        if length == 0 {
            return; // the zero-filled rest: no frame was written here
        }
        let end = at + FRAME_HEAD as u64 + u64::from(length);
        let whole = end <= size && {
            payload.resize(length as usize, 0);
            reader.read_exact(&mut payload).is_ok()
        };
        if let Some(records) = whole
            .then(|| crate::entry::records(&payload, checksum).ok())
            .flatten()
        {
            apply(records);
            at = end;
            continue;
        }
        match next_whole_frame(file, size, at) {
            Some((next, exact)) if reader.seek(SeekFrom::Start(next)).is_ok() => {
                unreadable(Unreadable::Skipped {
                    at,
                    bytes: next - at,
                    frames: 1,
                    exact,
                });
                at = next;
            }
            _ => {
                let error = if end > size {
                    format!("a frame of {length} bytes past the end")
                } else {
                    "checksum mismatch (a torn write)".to_string()
                };
                unreadable(Unreadable::Tail {
                    at: format!("byte {at}"),
                    error,
                });
                return;
            }
        }
    }
}

/// A segment of JSON lines, as Atlas wrote them before frames.
fn read_lines(
    reader: &mut BufReader<File>,
    apply: &mut dyn FnMut(Vec<Record>),
) -> Result<(), (String, String)> {
    let mut line = Vec::new();
    for number in 1.. {
        let place = || format!("line {number}");
        // A NUL where a line would begin is the zero-filled rest of the segment: no record
        // was written there, and it is not read (megabytes of it, at every start-up).
        let next = reader.fill_buf().map_err(|e| (place(), e.to_string()))?;
        if next.first().is_none_or(|b| *b == 0) {
            break;
        }
        line.clear();
        reader
            .read_until(b'\n', &mut line)
            .map_err(|e| (place(), e.to_string()))?;
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line.is_empty() {
            continue;
        }
        let records =
            serde_json::from_slice::<Vec<Record>>(&line).map_err(|e| (place(), e.to_string()))?;
        apply(records);
    }
    Ok(())
}

/// Where the folded files end and the journal begins, as the last checkpoint recorded.
pub(crate) fn folded_before(layout: &Layout) -> Result<u64, StoreError> {
    read_checkpoint(&layout.checkpoint_file())
}

impl Drop for Journal {
    fn drop(&mut self) {
        self.sender.lock().take();
        if let Some(writer) = self.writer.lock().take() {
            let _ = writer.join();
        }
    }
}

fn read_checkpoint(path: &Path) -> Result<u64, StoreError> {
    match fs::read(path) {
        Ok(bytes) => {
            let value: serde_json::Value =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })?;
            Ok(value
                .get("folded_before")
                .and_then(|v| v.as_u64())
                .unwrap_or(0))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// The writer thread: group-commits appends into the live segment, undoes a batch that fails,
/// and refuses writes after it until resumed.
struct Writer {
    segment: Segment,
    /// The number the next segment takes.
    next: u64,
    dir: PathBuf,
    shared: Arc<Shared>,
    layout: Layout,
}

impl Writer {
    fn run(mut self, receiver: mpsc::Receiver<Command>) {
        let mut buffer = Vec::with_capacity(1 << 20);
        let mut waiters = Vec::new();
        while let Ok(first) = receiver.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match receiver.try_recv() {
                    Ok(command) => batch.push(command),
                    Err(_) => break,
                }
            }
            for command in batch {
                match command {
                    Command::Append(frame, waiter) => match self.refusal() {
                        // Never written after a failed frame: it may rest on it.
                        Some(e) => drop(waiter.send(Err(e))),
                        None => {
                            buffer.extend_from_slice(&frame);
                            waiters.push(waiter);
                        }
                    },
                    Command::Rotate(reply) => {
                        self.flush(&mut buffer, &mut waiters);
                        let _ = reply.send(self.rotate());
                    }
                    Command::Resume(reply) => {
                        let _ = reply.send(self.resume());
                    }
                }
            }
            self.flush(&mut buffer, &mut waiters);
        }
    }

    fn refusal(&self) -> Option<StoreError> {
        self.shared.broken.lock().clone()
    }

    /// A new segment after the live one; while refusing, only its number (see
    /// [`Journal::rotate`]).
    fn rotate(&mut self) -> Result<u64, StoreError> {
        let next = self.next;
        if self.refusal().is_some() {
            return Ok(next);
        }
        let segment = self.create(next)?;
        self.start(segment);
        Ok(next)
    }

    /// Segment `number`, made whole or not at all: a segment half made is removed, so that the
    /// next attempt makes it again.
    fn create(&self, number: u64) -> Result<Segment, StoreError> {
        Segment::create(&self.dir, number).map_err(|e| {
            let _ = fs::remove_file(segment_path(&self.dir, number));
            self.failure(&e, None)
        })
    }

    /// Takes writes again, in a new segment.
    fn resume(&mut self) -> Result<(), StoreError> {
        if self.refusal().is_none() {
            return Ok(());
        }
        let next = self.next;
        let segment = self.create(next)?;
        self.start(segment);
        *self.shared.broken.lock() = None;
        tracing::info!("journal writes resumed in segment {next}");
        self.layout.log_root(
            "operations.log",
            &format!("journal writes resumed in segment {next}"),
        );
        Ok(())
    }

    fn start(&mut self, segment: Segment) {
        *self.shared.durable.lock() = (segment.number, 0);
        self.next = segment.number + 1;
        self.segment = segment;
    }

    /// The refusal for an I/O error of the journal: the disk is full, or the write failed.
    fn failure(&self, e: &std::io::Error, cut: Option<std::io::Error>) -> StoreError {
        let folder = self.layout.root().display().to_string();
        if is_no_space(e) {
            let free = self.shared.space.measure().unwrap_or(0);
            return self.shared.space.full(free);
        }
        let cause = match cut {
            Some(cut) => format!("{e}; cutting the journal back failed too: {cut}"),
            None => e.to_string(),
        };
        StoreError::WriteFailed { folder, cause }
    }

    fn flush(&mut self, buffer: &mut Vec<u8>, waiters: &mut Vec<CommitSender>) {
        if buffer.is_empty() {
            return;
        }
        #[cfg(test)]
        if self.shared.fail_next_sync.swap(false, Ordering::AcqRel) {
            self.segment.fail_next_sync = true;
        }
        let result = self.segment.write_durably(buffer);
        buffer.clear();
        let outcome = match result {
            Ok(()) => {
                *self.shared.durable.lock() = (self.segment.number, self.segment.end);
                Ok(())
            }
            Err((e, cut)) => {
                let error = self.failure(&e, cut);
                // Logged once: every write after it is refused up front until writes resume.
                tracing::error!("journal writes stopped: {error}");
                self.layout
                    .log_root("errors.log", &format!("journal writes stopped: {error}"));
                *self.shared.broken.lock() = Some(error.clone());
                self.shared.failures.fetch_add(1, Ordering::AcqRel);
                Err(error)
            }
        };
        for waiter in waiters.drain(..) {
            let _ = waiter.send(outcome.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_whose_fsync_fails_is_cut_away_and_writes_resume_in_a_new_segment() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::new(root.path());
        layout.create_root().unwrap();
        let dir = layout.journal_dir();
        let journal = Journal::open(dir.clone(), layout).unwrap();
        let wait = |commit: Commit| commit.wait_blocking();
        wait(journal.append(&[app(0)])).unwrap();
        journal.shared.fail_next_sync.store(true, Ordering::Release);
        // Its bytes land in the file; its fsync fails: refused, and cut back.
        let refused = wait(journal.append(&[app(1)])).unwrap_err();
        assert!(
            matches!(refused, StoreError::WriteFailed { .. }),
            "{refused}"
        );
        assert_eq!(journal.failures(), 1);
        assert!(
            wait(journal.append(&[app(2)])).is_err(),
            "taken after a failure"
        );
        assert!(journal.writable().is_err());
        // What the service reads again while refusing: the durable record only.
        let mut replayed = Vec::new();
        journal
            .replay(|_, records| replayed.extend(records))
            .unwrap();
        assert_eq!(replayed, vec![app(0)]);
        journal.resume().unwrap();
        wait(journal.append(&[app(3)])).unwrap();
        drop(journal);
        let (ids, unreadable) = read_back(&dir);
        assert_eq!(ids, ["app.0", "app.3"]);
        assert_eq!(unreadable, 0, "a cut segment reads whole");
        assert_eq!(
            list_segments(&dir).unwrap().len(),
            2,
            "resumed in a new segment"
        );
    }
    use atlas_model::App;

    fn app(n: usize) -> Record {
        Record::App(App {
            app_id: format!("app.{n}"),
            home_page: None,
            created_at: String::new(),
            updated_at: String::new(),
            ..Default::default()
        })
    }

    fn read_back(dir: &Path) -> (Vec<String>, usize) {
        let (mut ids, mut unreadable) = (Vec::new(), 0);
        read_segments(
            dir,
            (0..u64::MAX, None),
            |_, _| unreadable += 1,
            |_, records| {
                ids.extend(records.into_iter().map(|r| r.app_id().to_string()));
            },
        )
        .unwrap();
        (ids, unreadable)
    }

    #[test]
    fn segments_are_zero_filled_ahead_and_read_back_to_their_last_record() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::new(root.path());
        let dir = layout.journal_dir();
        fs::create_dir_all(&dir).unwrap();
        let journal = Journal::open(dir.clone(), layout).unwrap();
        for n in 0..500 {
            journal.append(&[app(n)]).wait_blocking().unwrap();
        }
        let second = journal.rotate().unwrap();
        journal.append(&[app(500)]).wait_blocking().unwrap();
        drop(journal);

        let first = fs::read(segment_path(&dir, second - 1)).unwrap();
        let end: usize = (0..500)
            .map(|n| crate::entry::frame(&[app(n)]).unwrap().len())
            .sum();
        assert!(
            first.len() > end
                && first.len() >= *ZEROED_AHEAD.start() as usize
                && first[end..].iter().all(|b| *b == 0),
            "{} bytes of records, {} in the file",
            end,
            first.len()
        );
        let (ids, unreadable) = read_back(&dir);
        assert_eq!(ids.len(), 501);
        assert_eq!((ids[0].as_str(), ids[500].as_str()), ("app.0", "app.500"));
        assert_eq!(unreadable, 0, "the zero-filled rest is not a torn record");

        // A write torn by a crash ends its segment; the records before it stay.
        let mut torn = first.clone();
        let half = crate::entry::frame(&[app(501)]).unwrap();
        torn[end..end + half.len() / 2].copy_from_slice(&half[..half.len() / 2]);
        fs::write(segment_path(&dir, second - 1), &torn).unwrap();
        let (ids, unreadable) = read_back(&dir);
        assert_eq!((ids.len(), unreadable), (501, 1));
    }

    #[test]
    fn a_torn_frame_the_cut_could_not_remove_is_no_lost_write_when_a_new_segment_follows() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::new(root.path());
        layout.create_root().unwrap();
        let dir = layout.journal_dir();
        let journal = Journal::open(dir.clone(), layout.clone()).unwrap();
        for n in 0..3 {
            journal.append(&[app(n)]).wait_blocking().unwrap();
        }
        drop(journal);
        // What a batch that failed leaves when cutting it away failed too: its first half.
        let torn = crate::entry::frame(&[app(3)]).unwrap();
        let end = (0..3)
            .map(|k| crate::entry::frame(&[app(k)]).unwrap().len())
            .sum::<usize>();
        let file = OpenOptions::new()
            .write(true)
            .open(segment_path(&dir, 0))
            .unwrap();
        file.write_all_at(&torn[..torn.len() / 2], end as u64)
            .unwrap();
        // Writes go on in the next segment, as after a resume.
        let journal = Journal::open(dir.clone(), layout).unwrap();
        journal.append(&[app(4)]).wait_blocking().unwrap();
        let mut replayed = Vec::new();
        journal
            .replay(|_, records| replayed.extend(records))
            .unwrap();
        assert_eq!(replayed, [app(0), app(1), app(2), app(4)]);
        assert!(journal.damage().is_empty(), "{:?}", journal.damage());
    }

    #[test]
    fn a_damaged_frame_is_skipped_to_the_next_whole_one_and_told() {
        let root = tempfile::tempdir().unwrap();
        let layout = Layout::new(root.path());
        let dir = layout.journal_dir();
        fs::create_dir_all(&dir).unwrap();
        let journal = Journal::open(dir.clone(), layout).unwrap();
        for n in 0..300 {
            journal.append(&[app(n)]).wait_blocking().unwrap();
        }
        drop(journal);
        let path = segment_path(&dir, 0);
        let whole = fs::read(&path).unwrap();
        let start_of = |n: usize| -> usize {
            (0..n)
                .map(|k| crate::entry::frame(&[app(k)]).unwrap().len())
                .sum()
        };
        let read = || {
            let (mut ids, mut told) = (Vec::new(), Vec::new());
            read_segments(
                &dir,
                (0..u64::MAX, None),
                |_, what| told.push(what.to_string()),
                |_, records| ids.extend(records.into_iter().map(|r| r.app_id().to_string())),
            )
            .unwrap();
            (ids, told)
        };

        // One byte of frame 100's payload flipped: that frame alone is lost, exactly.
        let mut bytes = whole.clone();
        bytes[start_of(100) + crate::entry::FRAME_HEAD + 3] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let (ids, told) = read();
        assert_eq!(ids.len(), 299);
        assert!(!ids.contains(&"app.100".to_string()) && ids[299 - 1] == "app.299");
        assert_eq!(told.len(), 1);
        assert!(told[0].contains("1 acknowledged write lost"), "{told:?}");

        // Frame 50's length and frames 51 and 52 overwritten: the reader finds frame 53.
        let mut bytes = whole.clone();
        for b in &mut bytes[start_of(50)..start_of(53) - 5] {
            *b = 0xA5;
        }
        fs::write(&path, &bytes).unwrap();
        let (ids, told) = read();
        assert_eq!(ids.len(), 297, "{told:?}");
        assert_eq!(ids[50], "app.53");
        assert!(told[0].contains("at least 1"), "{told:?}");
    }

    #[test]
    fn segments_of_json_lines_from_before_frames_are_read() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("journal");
        fs::create_dir_all(&dir).unwrap();
        let mut lines = Vec::new();
        for n in 0..3 {
            lines.extend(serde_json::to_vec(&vec![app(n)]).unwrap());
            lines.push(b'\n');
        }
        lines.extend([0u8; 64]);
        fs::write(dir.join(format!("{:020}.jsonl", 4)), &lines).unwrap();
        fs::write(
            dir.join(format!("{:020}.wal", 5)),
            crate::entry::frame(&[app(3)]).unwrap(),
        )
        .unwrap();
        let (ids, unreadable) = read_back(&dir);
        assert_eq!(ids, ["app.0", "app.1", "app.2", "app.3"]);
        assert_eq!(unreadable, 0);
    }
}
