//! File primitives every durable store of Atlas writes through: the folder store of seed 001 and
//! the knowledge bases' folders alike, so "one writer" and "old or new, never a mix" mean the same
//! thing everywhere.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;
use std::sync::Arc;

/// Why [`lock_folder`] did not get the lock.
#[derive(Debug)]
pub enum LockFailure {
    /// Another process holds it; `holder` is " (pid N)" when it wrote its pid, else empty.
    Held {
        /// Who holds it.
        holder: String,
    },
    /// The lock file could not be made.
    Io(std::io::Error),
}

impl From<std::io::Error> for LockFailure {
    fn from(e: std::io::Error) -> Self {
        LockFailure::Io(e)
    }
}

/// Takes the OS lock on the file at `path` (created if missing) and writes this process's pid
/// into it for the next one's error message. The lock lasts as long as the returned file, and dies
/// with the process, so a crash never leaves a folder locked.
pub fn lock_folder(path: &Path) -> Result<File, LockFailure> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => {
            file.set_len(0)?;
            file.rewind()?;
            write!(file, "{}", std::process::id())?;
            Ok(file)
        }
        Err(fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let holder = if pid.trim().is_empty() {
                String::new()
            } else {
                format!(" (pid {})", pid.trim())
            };
            Err(LockFailure::Held { holder })
        }
        Err(fs::TryLockError::Error(e)) => Err(e.into()),
    }
}

/// Writes a file so that readers see either the old or the new content, never a mix: a temporary
/// file `.NAME.tmp` in the same folder, then a rename. With `durable`, the data is fsynced before
/// the rename.
pub fn write_atomic(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        if durable {
            f.sync_data()?;
        }
        Ok(())
    });
    // A file half written on a full disk is removed at once: it is never read, and its space
    // is what the next write needs.
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// Whether an I/O error says the disk (or the user's quota) is full.
pub fn is_no_space(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
        || e.kind() == std::io::ErrorKind::StorageFull
}

/// A write's I/O error as the store says it: [`crate::StoreError::NoSpace`] (refused for now)
/// on a full disk.
pub fn write_error(path: &Path, e: std::io::Error) -> crate::StoreError {
    match is_no_space(&e) {
        true => crate::StoreError::NoSpace {
            path: path.display().to_string(),
        },
        false => crate::StoreError::caused(format!("cannot write {}", path.display()), e),
    }
}

/// Refuses `path` when it or a folder between `root` and it (`root` included) is a symbolic
/// link: Atlas reads and writes only inside its data folder, and a link there (a page's folder
/// replaced by a link to `/etc`, say) would take its writes elsewhere. Parts not made yet are
/// fine. The links Atlas makes itself (a page's `links/`) are never read or written through.
pub fn refuse_links(root: &Path, path: &Path) -> std::io::Result<()> {
    let mut at = root.to_path_buf();
    let below = path.strip_prefix(root).unwrap_or(path);
    for part in std::iter::once(None).chain(below.components().map(Some)) {
        if let Some(part) = part {
            at.push(part);
        }
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(std::io::Error::other(format!(
                    "{} is a symbolic link: Atlas reads and writes only inside its data folder",
                    at.display()
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The bytes of the regular file at `path`, `None` when there is none: opened without following
/// a link in its last part and without waiting on a FIFO or device, and refused past `limit`
/// bytes before any is read, so that nothing a folder holds makes a reader hang, read outside
/// the folder or take memory the file's kind does not need.
pub fn read_regular(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    read_within(path, limit, false)
}

/// [`read_regular`] for a path a person named (a suite, a rule file): a link is followed, as
/// with any path given, but a FIFO, a device or a file past `limit` is refused all the same.
pub fn read_named(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    read_within(path, limit, true)
}

fn read_within(path: &Path, limit: u64, follow: bool) -> std::io::Result<Option<Vec<u8>>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let no_follow = if follow { 0 } else { libc::O_NOFOLLOW };
        options.custom_flags(no_follow | libc::O_NONBLOCK);
    }
    let mut file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(std::io::Error::other(format!(
                "{} is a symbolic link: Atlas reads only inside its data folder",
                path.display()
            )));
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if meta.len() > limit {
        return Err(std::io::Error::other(format!(
            "{} is {} bytes, over the {limit} bytes such a file may hold",
            path.display(),
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    Read::by_ref(&mut file)
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!(
            "{} grew past {limit} bytes while it was read",
            path.display()
        )));
    }
    Ok(Some(bytes))
}

/// The most a file read through [`Folder`] may hold: a knowledge base's vectors or the business
/// graph are the largest such files, and far below it.
pub const MAX_FOLDER_FILE_BYTES: u64 = 1 << 30;

/// Whole files by name (`graph.json`, `<dataset>/documents/<id>.json`), each replaced at once:
/// what the knowledge bases and the business graph keep, so that they live in the data folder or
/// in PostgreSQL alike. A write is durable once it returns.
pub trait Files: Send + Sync {
    /// The file's bytes, or `None` when there is no such file.
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, crate::StoreError>;
    /// Replaces the file `name` with `bytes`, at once and durably.
    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError>;
    /// Removes the file `name` and every file under `name/`.
    fn remove(&self, name: &str) -> Result<(), crate::StoreError>;
    /// Every file under `prefix/` (all files for ""), by full name, in no particular order.
    fn list(&self, prefix: &str) -> Result<Vec<String>, crate::StoreError>;
    /// Replaces the file `name` with `bytes` whole or not at all, without waiting for it to be
    /// durable: for what is cheap to redo (an explorer's task file, a screenshot), where a
    /// crash may bring back an older version but never half of one.
    fn write_soon(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError> {
        self.write(name, bytes)
    }
    /// Moves the file `from` to `to` (replacing it), durable as [`Files::write_soon`]. A store
    /// that cannot move at once may leave the file under both names after a crash, never under
    /// neither: readers of moved files (an explorer's task queue) settle duplicates.
    fn rename(&self, from: &str, to: &str) -> Result<(), crate::StoreError> {
        let bytes = self
            .read(from)?
            .ok_or_else(|| crate::StoreError::Io(format!("no file {from:?} to move")))?;
        self.write(to, &bytes)?;
        self.remove(from)
    }
}

/// Where the files an explorer keeps beside the graph live (seed 001 §2.2): each page's
/// screenshot, DOM snapshot, task queue, navigation scripts, test ideas and reports, and each
/// app's own (the exploration's frontier). A data folder keeps them in the page's folder for
/// people to open; a database in its files table. Implemented by the service, which knows each
/// page's name and number that its folder is named by.
pub trait Artifacts: Send + Sync {
    /// The files of a page, named relative to it (`screenshot.png`, `todos/task_001.json`).
    fn page_files(&self, app_id: &str, page_id: &str) -> Result<Arc<dyn Files>, crate::StoreError>;
    /// The files of an app, named relative to it (`.atlas/explore.json`).
    fn app_files(&self, app_id: &str) -> Result<Arc<dyn Files>, crate::StoreError>;
    /// Where a page's files are on this machine, for people to open: its folder on a data
    /// folder, none in a database.
    fn page_folder(&self, _app_id: &str, _page_id: &str) -> Option<std::path::PathBuf> {
        None
    }
}

/// [`Files`] in a folder: each name a path under it, written through [`write_atomic`] with the
/// file and its folder fsynced.
pub struct Folder {
    root: std::path::PathBuf,
}

impl Folder {
    /// The files under `root`.
    pub fn new(root: &Path) -> Folder {
        Folder {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> Result<std::path::PathBuf, crate::StoreError> {
        // Names come from the stores' own ids, but a name that climbs out is refused anyway.
        if name.split('/').any(|part| part == ".." || part.is_empty()) && !name.is_empty() {
            return Err(crate::StoreError::Io(format!("bad file name {name:?}")));
        }
        let path = self.root.join(name);
        refuse_links(&self.root, &path)?;
        Ok(path)
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Files for Folder {
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, crate::StoreError> {
        Ok(read_regular(&self.path(name)?, MAX_FOLDER_FILE_BYTES)?)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError> {
        let path = self.path(name)?;
        crate::space::refuse_under_reserve(&self.root)?;
        let dir = path.parent().expect("a file in a folder");
        fs::create_dir_all(dir)
            .and_then(|()| write_atomic(&path, bytes, true))
            .and_then(|()| sync_dir(dir))
            .map_err(|e| write_error(&path, e))
    }

    fn remove(&self, name: &str) -> Result<(), crate::StoreError> {
        let path = self.path(name)?;
        if path.is_dir() {
            fs::remove_dir_all(&path)?;
        } else if path.exists() {
            fs::remove_file(&path)?;
        }
        if let Some(parent) = path.parent().filter(|p| p.exists()) {
            sync_dir(parent)?;
        }
        Ok(())
    }

    fn write_soon(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError> {
        let path = self.path(name)?;
        crate::space::refuse_under_reserve(&self.root)?;
        fs::create_dir_all(path.parent().expect("a file in a folder"))
            .and_then(|()| write_atomic(&path, bytes, false))
            .map_err(|e| write_error(&path, e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), crate::StoreError> {
        let (from, to) = (self.path(from)?, self.path(to)?);
        fs::create_dir_all(to.parent().expect("a file in a folder"))?;
        Ok(fs::rename(from, to)?)
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, crate::StoreError> {
        fn walk(dir: &Path, name: &str, out: &mut Vec<String>) -> std::io::Result<()> {
            let Ok(entries) = fs::read_dir(dir) else {
                return Ok(());
            };
            for entry in entries {
                let entry = entry?;
                let file = entry.file_name().to_string_lossy().to_string();
                // Temporary files of a write under way, and the lock, are not files of the store.
                if file.starts_with('.') || file == "lock" {
                    continue;
                }
                let full = if name.is_empty() {
                    file
                } else {
                    format!("{name}/{file}")
                };
                if entry.file_type()?.is_dir() {
                    walk(&entry.path(), &full, out)?;
                } else {
                    out.push(full);
                }
            }
            Ok(())
        }
        let mut out = Vec::new();
        walk(&self.path(prefix)?, prefix, &mut out)?;
        Ok(out)
    }
}

/// The files of another [`Files`] under `prefix/`, named without it.
pub struct Scoped {
    inner: std::sync::Arc<dyn Files>,
    prefix: String,
}

impl Scoped {
    /// `inner`'s files under `prefix/`.
    pub fn new(inner: std::sync::Arc<dyn Files>, prefix: &str) -> Scoped {
        Scoped {
            inner,
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    fn full(&self, name: &str) -> String {
        if name.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}/{name}", self.prefix)
        }
    }
}

impl Files for Scoped {
    fn read(&self, name: &str) -> Result<Option<Vec<u8>>, crate::StoreError> {
        self.inner.read(&self.full(name))
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError> {
        self.inner.write(&self.full(name), bytes)
    }

    fn remove(&self, name: &str) -> Result<(), crate::StoreError> {
        self.inner.remove(&self.full(name))
    }

    fn write_soon(&self, name: &str, bytes: &[u8]) -> Result<(), crate::StoreError> {
        self.inner.write_soon(&self.full(name), bytes)
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), crate::StoreError> {
        self.inner.rename(&self.full(from), &self.full(to))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>, crate::StoreError> {
        let strip = format!("{}/", self.prefix);
        Ok(self
            .inner
            .list(&self.full(prefix))?
            .into_iter()
            .filter_map(|n| n.strip_prefix(&strip).map(str::to_string))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_inside_the_folder_are_read_and_within_their_limit() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "root:x:0:0").unwrap();
        fs::write(root.path().join("plain"), "ok").unwrap();
        assert_eq!(
            read_regular(&root.path().join("plain"), 10).unwrap(),
            Some(b"ok".to_vec())
        );
        assert_eq!(read_regular(&root.path().join("none"), 10).unwrap(), None);
        assert!(
            read_regular(&root.path().join("plain"), 1).is_err(),
            "over its limit"
        );

        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link"))
            .unwrap();
        let refused = read_regular(&root.path().join("link"), 100).unwrap_err();
        assert!(refused.to_string().contains("symbolic link"), "{refused}");

        // A FIFO would block a plain read until a writer came: refused at once.
        let fifo = root.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let refused = read_regular(&fifo, 100).unwrap_err();
        assert!(
            refused.to_string().contains("not a regular file"),
            "{refused}"
        );
    }

    #[test]
    fn a_folder_replaced_by_a_link_is_neither_written_nor_read_through() {
        let data = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(data.path().join("page")).unwrap();
        std::os::unix::fs::symlink(outside.path(), data.path().join("page").join("todos")).unwrap();
        let page = Folder::new(&data.path().join("page"));
        assert!(page.write("todos/task_001.json", b"{}").is_err());
        assert!(page.write("meta.json", b"{}").is_ok());
        std::os::unix::fs::symlink(outside.path(), data.path().join("linked")).unwrap();
        let linked = Folder::new(&data.path().join("linked"));
        assert!(linked.write("meta.json", b"{}").is_err());
        assert!(linked.read("meta.json").is_err());
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
