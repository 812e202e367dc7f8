//! A dataset's vectors kept beside its documents (`<dataset>/vectors.image`), so that opening a
//! knowledge base with a model embeds only the segments that changed since, not every one it
//! holds (4,000 Markdown sections cost e5 four minutes on two cores, at every opening).
//!
//! Key design decision: **the documents stay the truth; the file is a cache of what one model
//! made of them.** Each entry is a segment's id, a digest of the texts the model embedded for it,
//! and its vectors; an entry serves only a segment of that id whose texts have that digest, and
//! only when the file names the embedder at hand. A file that is missing, torn, damaged (its
//! CRC-32), of another format or of another model is passed over and its segments embedded
//! again, so deleting it is always safe. A lexical embedder (the default) makes no vectors and
//! keeps no file.

use std::collections::HashMap;

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_search::Vectors;
use atlas_store::files::Files;
use sha2::{Digest, Sha256};

use crate::KbError;

const MAGIC: &[u8; 8] = b"ATLASKBV";
const VERSION: u32 = 1;

/// The file's name among the knowledge base's files.
pub(crate) fn file(dataset: &str) -> String {
    format!("{dataset}/vectors.image")
}

/// What a model was given for a segment: its searched text and the answer it embeds apart.
pub(crate) type Texts<'a> = (&'a str, Option<&'a str>);

/// A digest of `texts`: a segment whose digest is unchanged embeds to the same vectors.
pub(crate) fn digest((searched, answer): Texts<'_>) -> [u8; 16] {
    let mut hash = Sha256::new();
    for text in [Some(searched), answer] {
        match text {
            // Lengths first, so ("ab", "c") and ("a", "bc") differ.
            Some(text) => {
                hash.update([1]);
                hash.update((text.len() as u64).to_le_bytes());
                hash.update(text.as_bytes());
            }
            None => hash.update([0]),
        }
    }
    let mut short = [0; 16];
    short.copy_from_slice(&hash.finalize()[..16]);
    short
}

/// The vectors a dataset's file holds for `embedder`, by segment id with the digest they were
/// made from; empty when there is no usable file.
#[derive(Default)]
pub(crate) struct Kept {
    by_segment: HashMap<String, ([u8; 16], Vectors)>,
}

impl Kept {
    pub(crate) fn read(files: &dyn Files, dataset: &str, embedder: &str) -> Kept {
        let Ok(Some(bytes)) = files.read(&file(dataset)) else {
            return Kept::default();
        };
        parse(&bytes, embedder).unwrap_or_default()
    }

    /// Takes out the entry of segment `id`: its vectors if they were made from `texts`.
    pub(crate) fn take(&mut self, id: &str, texts: Texts<'_>) -> Option<Vectors> {
        let (made_from, vectors) = self.by_segment.remove(id)?;
        (made_from == digest(texts)).then_some(vectors)
    }

    /// Whether every entry was taken.
    pub(crate) fn is_empty(&self) -> bool {
        self.by_segment.is_empty()
    }
}

fn parse(bytes: &[u8], embedder: &str) -> Result<Kept, ImageError> {
    let body_at = MAGIC.len() + 8;
    if bytes.len() < body_at || &bytes[..MAGIC.len()] != MAGIC {
        return Err(ImageError::invalid("not a vectors file"));
    }
    let mut header = ImageReader::new(&bytes[MAGIC.len()..body_at]);
    let (version, crc) = (header.u32()?, header.u32()?);
    if version != VERSION || crc != crc32fast::hash(&bytes[body_at..]) {
        return Err(ImageError::invalid("another version, or damaged"));
    }
    let mut r = ImageReader::new(&bytes[body_at..]);
    if r.str()? != embedder {
        return Err(ImageError::invalid("made by another embedder"));
    }
    let mut by_segment = HashMap::new();
    for _ in 0..r.len(1)? {
        let id = r.str()?.to_string();
        let made_from: [u8; 16] = r
            .bytes()?
            .try_into()
            .map_err(|_| ImageError::invalid("a digest of another length"))?;
        let mut vector = || -> Result<Option<Vec<f32>>, ImageError> {
            Ok(match r.u8()? {
                0 => None,
                _ => Some(r.f32s()?),
            })
        };
        let vectors = (vector()?, vector()?);
        by_segment.insert(id, (made_from, vectors));
    }
    Ok(Kept { by_segment })
}

/// Writes the vectors of `segments` (id, texts, vectors) as made by `embedder`, durably.
pub(crate) fn write<'a>(
    files: &dyn Files,
    dataset: &str,
    embedder: &str,
    segments: impl ExactSizeIterator<Item = (&'a str, Texts<'a>, Vectors)>,
) -> Result<(), KbError> {
    let mut w = ImageWriter::new();
    w.str(embedder);
    w.len(segments.len());
    for (id, texts, (vector, answer)) in segments {
        w.str(id);
        w.bytes(&digest(texts));
        for v in [vector, answer] {
            match v {
                Some(v) => {
                    w.u8(1);
                    w.f32s(&v);
                }
                None => w.u8(0),
            }
        }
    }
    let body = w.into_bytes();
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    files
        .write(&file(dataset), &bytes)
        .map_err(|e| KbError::Io(e.to_string()))
}
