//! The simulated phone's files: what `uiautomator dump`, `screencap FILE` and `adb push` write
//! and `cat`, `adb pull` and `rm` read, kept in memory (a simulator leaves nothing on the host).
//!
//! Paths are absolute and compared after normalising slashes, and `/storage/emulated/0` is the
//! same folder as `/sdcard`, as on a phone.

use std::collections::{BTreeMap, BTreeSet};

/// All the phone's files together may hold this much: pushes past it fail as a full phone's do.
pub const CAPACITY: usize = 256 * 1024 * 1024;

/// The phone's null device: it reads as nothing and takes anything written to it.
const NULL: &str = "/dev/null";

/// Folders every Android phone has, even when empty.
const FOLDERS: [&str; 5] = ["/", "/sdcard", "/data", "/data/local", "/data/local/tmp"];

/// The phone's files, in memory, within a capacity.
#[derive(Default)]
pub struct Storage {
    files: BTreeMap<String, Vec<u8>>,
    /// Folders made (`mkdir`), beside the standard ones and those holding files.
    made: BTreeSet<String>,
    /// The files' bytes, together.
    used: usize,
}

impl Storage {
    /// A file's bytes.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        let path = normalise(path);
        if path == NULL {
            return Some(&[]);
        }
        self.files.get(&path).map(Vec::as_slice)
    }

    /// Whether `path` is the null device (there, but not a regular file).
    pub fn is_device(&self, path: &str) -> bool {
        normalise(path) == NULL
    }

    /// Writes a file, replacing one of that path; false (and nothing changed) when it would fill
    /// the phone past [`CAPACITY`].
    pub fn put(&mut self, path: &str, bytes: Vec<u8>) -> bool {
        let path = normalise(path);
        if path == NULL {
            return true;
        }
        let replaced = self.files.get(&path).map_or(0, Vec::len);
        if self.used - replaced + bytes.len() > CAPACITY {
            return false;
        }
        self.used = self.used - replaced + bytes.len();
        self.files.insert(path, bytes);
        true
    }

    /// Bytes a new file may still take.
    pub fn free(&self) -> usize {
        CAPACITY - self.used
    }

    /// Removes a file; false when there was none. The folder it was in stays, as on a phone,
    /// though it now holds nothing.
    pub fn remove(&mut self, path: &str) -> bool {
        let path = normalise(path);
        match self.files.remove(&path) {
            Some(bytes) => {
                self.used -= bytes.len();
                if let Some((parent, _)) = path.rsplit_once('/')
                    && !parent.is_empty()
                {
                    self.made.insert(parent.to_string());
                }
                true
            }
            None => false,
        }
    }

    /// Removes a folder and everything in it (`rm -r`); false when there was no such folder.
    /// The standard folders stay (removing `/sdcard` empties it).
    pub fn remove_tree(&mut self, path: &str) -> bool {
        if !self.is_dir(path) {
            return false;
        }
        let path = normalise(path);
        let prefix = format!("{}/", path.trim_end_matches('/'));
        let inside = |f: &String| f == &path || f.starts_with(&prefix);
        let gone: Vec<String> = self.files.keys().filter(|f| inside(f)).cloned().collect();
        for file in gone {
            if let Some(bytes) = self.files.remove(&file) {
                self.used -= bytes.len();
            }
        }
        self.made.retain(|f| !inside(f));
        true
    }

    /// A folder: a standard one, one made, or one that holds a file or folder.
    pub fn is_dir(&self, path: &str) -> bool {
        let path = normalise(path);
        let inside = |f: &String| {
            f.len() > path.len() && f.starts_with(&path) && f[path.len()..].starts_with('/')
        };
        FOLDERS.contains(&path.as_str())
            || self.made.contains(&path)
            || self.files.keys().any(inside)
            || self.made.iter().any(inside)
    }

    /// Makes a folder (`mkdir`; with `parents`, `mkdir -p`, those above it too and no error
    /// when it is there). The error is `mkdir`'s words.
    pub fn make_dir(&mut self, path: &str, parents: bool) -> Result<(), &'static str> {
        let path = normalise(path);
        if self.files.contains_key(&path) {
            return Err("File exists");
        }
        if self.is_dir(&path) {
            return if parents { Ok(()) } else { Err("File exists") };
        }
        let parent = path
            .rsplit_once('/')
            .map_or("/", |(p, _)| if p.is_empty() { "/" } else { p });
        if !parents && !self.is_dir(parent) {
            return Err("No such file or directory");
        }
        self.made.insert(path);
        Ok(())
    }

    /// The names directly in a folder, files and folders, sorted as `ls` lists them.
    pub fn entries(&self, folder: &str) -> Vec<String> {
        let folder = normalise(folder);
        let prefix = if folder == "/" {
            folder
        } else {
            format!("{folder}/")
        };
        let mut names: BTreeSet<String> = BTreeSet::new();
        let standard = FOLDERS.iter().map(|f| f.to_string());
        for path in self.files.keys().chain(&self.made).cloned().chain(standard) {
            if let Some(rest) = path.strip_prefix(&prefix)
                && let Some(name) = rest.split('/').next().filter(|n| !n.is_empty())
            {
                names.insert(name.to_string());
            }
        }
        names.into_iter().collect()
    }

    /// The files directly in a folder, by name, with their sizes.
    pub fn list(&self, folder: &str) -> Vec<(String, usize)> {
        let folder = normalise(folder);
        let prefix = if folder == "/" {
            folder
        } else {
            format!("{folder}/")
        };
        self.files
            .iter()
            .filter_map(|(path, bytes)| {
                let name = path.strip_prefix(&prefix)?;
                (!name.contains('/')).then(|| (name.to_string(), bytes.len()))
            })
            .collect()
    }
}

fn normalise(path: &str) -> String {
    let path = path.trim();
    let path = match path.strip_prefix("/storage/emulated/0") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("/sdcard{rest}"),
        _ => path.to_string(),
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_found_by_any_spelling_of_their_path_and_folders_list_them() {
        let mut storage = Storage::default();
        assert!(storage.put("/sdcard//shot.png", vec![1, 2, 3]));
        assert_eq!(
            storage.get("/storage/emulated/0/shot.png"),
            Some(&[1u8, 2, 3][..])
        );
        assert!(storage.is_dir("/sdcard/") && storage.is_dir("/data/local/tmp"));
        assert!(!storage.is_dir("/sdcard/shot.png") && !storage.is_dir("/nowhere"));
        assert_eq!(storage.list("/sdcard"), [("shot.png".to_string(), 3)]);
        assert!(storage.remove("/sdcard/shot.png") && !storage.remove("/sdcard/shot.png"));
        assert_eq!(storage.get("/sdcard/shot.png"), None);
        // Folders made are folders, listed beside files.
        assert_eq!(
            storage.make_dir("/sdcard/a/b", false),
            Err("No such file or directory")
        );
        assert_eq!(storage.make_dir("/sdcard/a/b", true), Ok(()));
        assert!(storage.is_dir("/sdcard/a") && storage.is_dir("/sdcard/a/b"));
        assert_eq!(storage.make_dir("/sdcard/a", false), Err("File exists"));
        assert!(storage.put("/sdcard/z.txt", vec![1]));
        assert_eq!(storage.entries("/sdcard"), ["a", "z.txt"]);
    }

    #[test]
    fn the_phone_fills_up_and_frees_what_is_removed() {
        let mut storage = Storage::default();
        let big = CAPACITY / 4 + 1;
        for i in 0..3 {
            assert!(storage.put(&format!("/sdcard/{i}"), vec![0; big]));
        }
        assert!(!storage.put("/sdcard/3", vec![0; big]), "past the capacity");
        assert_eq!(storage.get("/sdcard/3"), None);
        // Replacing a file counts only the difference.
        assert!(storage.put("/sdcard/0", vec![0; big]));
        assert!(storage.remove("/sdcard/0"));
        assert!(storage.put("/sdcard/3", vec![0; big]));
        assert_eq!(storage.free(), CAPACITY - 3 * big);
    }
}
