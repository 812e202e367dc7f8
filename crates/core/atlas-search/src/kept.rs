//! Vectors kept beside what they were made from, so that opening an index with a model embeds
//! only the texts that changed since, not every one it holds (4,000 Markdown sections cost e5
//! four minutes on two cores, at every opening of a knowledge base).
//!
//! Key design decision: **the texts stay the truth; the kept vectors are a cache of what one
//! model made of them.** Each entry is an id, a digest of the texts the model embedded for it,
//! and its vectors; an entry serves only an id whose texts have that digest, and only when the
//! bytes name the embedder at hand. Bytes that are missing, torn, damaged (their CRC-32), of
//! another format or of another model are passed over and their texts embedded again, so
//! deleting a kept file is always safe. A lexical embedder makes no vectors and keeps none.
//! Where the bytes are kept is the caller's (a knowledge base's dataset, the business graph).

use std::collections::HashMap;

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use sha2::{Digest, Sha256};

use crate::Vectors;

const MAGIC: &[u8; 8] = b"ATLASKBV";
const VERSION: u32 = 1;

/// What a model was given for an entry: its searched text and the answer it embeds apart.
pub type Texts<'a> = (&'a str, Option<&'a str>);

/// A digest of `texts`: an entry whose digest is unchanged embeds to the same vectors.
pub fn digest((searched, answer): Texts<'_>) -> [u8; 16] {
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

/// The vectors kept bytes hold for one embedder, by id with the digest they were made from;
/// empty when the bytes are not usable.
#[derive(Default)]
pub struct Kept {
    by_id: HashMap<String, ([u8; 16], Vectors)>,
}

impl Kept {
    /// What `bytes` (from [`encode`]) keep for `embedder`; empty when they are not usable.
    pub fn parse(bytes: &[u8], embedder: &str) -> Kept {
        parse(bytes, embedder).unwrap_or_default()
    }

    /// Takes out the entry of `id`: its vectors if they were made from `texts`.
    pub fn take(&mut self, id: &str, texts: Texts<'_>) -> Option<Vectors> {
        let (made_from, vectors) = self.by_id.remove(id)?;
        (made_from == digest(texts)).then_some(vectors)
    }

    /// Whether every entry was taken.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
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
    let mut by_id = HashMap::new();
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
        by_id.insert(id, (made_from, vectors));
    }
    Ok(Kept { by_id })
}

/// The bytes that keep the vectors of `entries` (id, texts, vectors) as made by `embedder`.
pub fn encode<'a>(
    embedder: &str,
    entries: impl ExactSizeIterator<Item = (&'a str, Texts<'a>, Vectors)>,
) -> Vec<u8> {
    let mut w = ImageWriter::new();
    w.str(embedder);
    w.len(entries.len());
    for (id, texts, (vector, answer)) in entries {
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
    bytes
}
