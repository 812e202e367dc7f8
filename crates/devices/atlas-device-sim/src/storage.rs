//! The simulated phone's files: what `uiautomator dump`, `screencap FILE` and `adb push` write
//! and `cat`, `adb pull` and `rm` read, kept in memory (a simulator leaves nothing on the host).
//!
//! Paths are absolute and compared after normalising slashes, and `/storage/emulated/0` is the
//! same folder as `/sdcard`, as on a phone.

use std::collections::BTreeMap;

/// All the phone's files together may hold this much: pushes past it fail as a full phone's do.
pub const CAPACITY: usize = 256 * 1024 * 1024;

/// Folders every Android phone has, even when empty.
const FOLDERS: [&str; 5] = ["/", "/sdcard", "/data", "/data/local", "/data/local/tmp"];

/// The phone's files, in memory, within a capacity.
#[derive(Default)]
pub struct Storage {
    files: BTreeMap<String, Vec<u8>>,
    /// The files' bytes, together.
    used: usize,
}

impl Storage {
    /// A file's bytes.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(&normalise(path)).map(Vec::as_slice)
    }

    /// Writes a file, replacing one of that path; false (and nothing changed) when it would fill
    /// the phone past [`CAPACITY`].
    pub fn put(&mut self, path: &str, bytes: Vec<u8>) -> bool {
        let path = normalise(path);
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

    /// Removes a file; false when there was none.
    pub fn remove(&mut self, path: &str) -> bool {
        match self.files.remove(&normalise(path)) {
            Some(bytes) => {
                self.used -= bytes.len();
                true
            }
            None => false,
        }
    }

    /// A folder: a standard one, or one that holds a file.
    pub fn is_dir(&self, path: &str) -> bool {
        let path = normalise(path);
        FOLDERS.contains(&path.as_str())
            || self.files.keys().any(|f| {
                f.len() > path.len() && f.starts_with(&path) && f[path.len()..].starts_with('/')
            })
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
