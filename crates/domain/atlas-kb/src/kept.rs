//! A dataset's vectors kept beside its documents (`<dataset>/vectors.image`, in
//! [`atlas_search::kept`]'s format), so that opening a knowledge base with a model embeds only
//! the segments that changed since. The documents stay the truth: a missing, damaged or foreign
//! file only costs the embedding.

use atlas_search::Vectors;
pub(crate) use atlas_search::kept::{Kept, Texts};
use atlas_store::files::Files;

use crate::KbError;

/// The file's name among the knowledge base's files.
pub(crate) fn file(dataset: &str) -> String {
    format!("{dataset}/vectors.image")
}

/// The vectors a dataset's file holds for `embedder`; empty when there is no usable file.
pub(crate) fn read(files: &dyn Files, dataset: &str, embedder: &str) -> Kept {
    match files.read(&file(dataset)) {
        Ok(Some(bytes)) => Kept::parse(&bytes, embedder),
        _ => Kept::default(),
    }
}

/// Writes the vectors of `segments` (id, texts, vectors) as made by `embedder`, durably.
pub(crate) fn write<'a>(
    files: &dyn Files,
    dataset: &str,
    embedder: &str,
    segments: impl ExactSizeIterator<Item = (&'a str, Texts<'a>, Vectors)>,
) -> Result<(), KbError> {
    let bytes = atlas_search::kept::encode(embedder, segments);
    files.write(&file(dataset), &bytes).map_err(KbError::Store)
}
