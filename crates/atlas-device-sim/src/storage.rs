//! The simulated phone's files: what `uiautomator dump`, `screencap FILE` and `adb push` write
//! and `cat`, `adb pull` and `rm` read, kept in memory (a simulator leaves nothing on the host).
//!
//! Paths are absolute and compared after normalising slashes, and `/storage/emulated/0` is the
//! same folder as `/sdcard`, as on a phone.

use std::collections::BTreeMap;

/// Folders every Android phone has, even when empty.
const FOLDERS: [&str; 5] = ["/", "/sdcard", "/data", "/data/local", "/data/local/tmp"];

#[derive(Default)]
pub struct Storage {
    files: BTreeMap<String, Vec<u8>>,
}

impl Storage {
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(&normalise(path)).map(Vec::as_slice)
    }

    pub fn put(&mut self, path: &str, bytes: Vec<u8>) {
        self.files.insert(normalise(path), bytes);
    }

    /// Removes a file; false when there was none.
    pub fn remove(&mut self, path: &str) -> bool {
        self.files.remove(&normalise(path)).is_some()
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
        storage.put("/sdcard//shot.png", vec![1, 2, 3]);
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
}
