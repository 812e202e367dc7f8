//! An app's image (`.atlas/graph.image`): the service's own binary copy of an app as a checkpoint
//! folded it, so start-up copies it back instead of parsing `graph.json`.
//!
//! Key design decision: **the JSON stays the truth, and the image says which JSON it copies.**
//! Its header lists every graph file of the app (`graph.json` and its parts) with its size and
//! modification time as they were when the image was written; start-up offers the image only
//! while the folder's graph files are exactly those. A person who edits `graph.json`, a repair,
//! an older Atlas that checkpoints without writing images: each changes the list, and the JSON is
//! read. A checkpoint removes the old image before it replaces `graph.json`, so a crash between
//! the two never leaves an image beside JSON newer than it with the same size and time. A CRC-32
//! of the body catches an image torn or damaged on disk, which could otherwise read as a graph.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_store::StoreError;

/// The image's name in an app's `.atlas/` folder.
pub(crate) const IMAGE: &str = "graph.image";
const MAGIC: &[u8; 8] = b"ATLASIMG";
/// The header's layout; what follows it is the service's, which versions its own. (Version 1
/// did not say which journal segment the copied files cover.)
const HEADER_VERSION: u32 = 2;

/// A graph file as the image saw it: name, size, modification time in nanoseconds.
type Seen = (String, u64, u64);

fn image_path(app_root: &Path) -> PathBuf {
    app_root.join(".atlas").join(IMAGE)
}

/// The app's graph files as they are now, by name.
fn graph_files(app_root: &Path) -> std::io::Result<Vec<Seen>> {
    let mut seen = Vec::new();
    for entry in fs::read_dir(app_root.join(".atlas"))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().to_string();
        if !(name.starts_with("graph") && name.ends_with(".json")) {
            continue;
        }
        let meta = entry.metadata()?;
        let modified = meta
            .modified()?
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        seen.push((name, meta.len(), modified));
    }
    seen.sort();
    Ok(seen)
}

/// Writes `image` beside the app's graph files as they are now, which cover the journal before
/// segment `folded_before`, durably (a torn image could read as another graph).
pub(crate) fn keep(app_root: &Path, image: &[u8], folded_before: u64) -> Result<(), StoreError> {
    let seen = graph_files(app_root)?;
    if !seen.iter().any(|(name, _, _)| name == "graph.json") {
        return Ok(()); // nothing folded to copy
    }
    let mut w = ImageWriter::new();
    for b in MAGIC {
        w.u8(*b);
    }
    w.u32(HEADER_VERSION);
    w.u64(folded_before);
    w.u32(crc32fast::hash(image));
    w.len(seen.len());
    for (name, size, modified) in &seen {
        w.str(name);
        w.u64(*size);
        w.u64(*modified);
    }
    let mut bytes = w.into_bytes();
    bytes.extend_from_slice(image);
    let path = image_path(app_root);
    atlas_store::files::write_atomic(&path, &bytes, true)
        .map_err(|e| StoreError::caused(format!("cannot write {}", path.display()), e))
}

/// A current image: its bytes, where its body starts (the body is handed on where it lies, not
/// copied out of the header's way) and the journal segment the files it copies cover up to.
pub(crate) struct Current {
    pub(crate) bytes: Vec<u8>,
    pub(crate) body: usize,
    pub(crate) folded_before: u64,
}

/// The app's image, when there is one and the graph files are still those it copies.
pub(crate) fn current(app_root: &Path) -> Option<Current> {
    // Read only as a regular file in the folder; an image never outgrows what memory holds.
    let bytes = atlas_store::files::read_regular(&image_path(app_root), 16 << 30)
        .ok()
        .flatten()?;
    let (body, folded_before) = match header_matches(&bytes, &graph_files(app_root).ok()?) {
        Ok(Some(found)) => found,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!("{}: {e}; reading the JSON", image_path(app_root).display());
            return None;
        }
    };
    Some(Current {
        bytes,
        body,
        folded_before,
    })
}

/// Where the body starts, and the segment the files cover up to, when the header lists exactly
/// `now`; `None` when it lists other files.
fn header_matches(bytes: &[u8], now: &[Seen]) -> Result<Option<(usize, u64)>, ImageError> {
    let mut r = ImageReader::new(bytes);
    let magic: Vec<u8> = (0..MAGIC.len()).map(|_| r.u8()).collect::<Result<_, _>>()?;
    if magic != MAGIC || r.u32()? != HEADER_VERSION {
        return Err(ImageError::invalid("not an image of this Atlas"));
    }
    let folded_before = r.u64()?;
    let checksum = r.u32()?;
    let n = r.len(24)?;
    let mut seen = Vec::with_capacity(n);
    for _ in 0..n {
        seen.push((r.str()?.to_string(), r.u64()?, r.u64()?));
    }
    if seen != now {
        return Ok(None);
    }
    let body = bytes.len() - r.rest_len();
    if crc32fast::hash(&bytes[body..]) != checksum {
        return Err(ImageError::invalid("its checksum does not match: damaged"));
    }
    Ok(Some((body, folded_before)))
}

/// Removes the image, and makes its removal durable, before the graph files it copies change.
pub(crate) fn forget(app_root: &Path) -> Result<(), StoreError> {
    match fs::remove_file(image_path(app_root)) {
        Ok(()) => {
            fs::File::open(app_root.join(".atlas"))?.sync_all()?;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}
