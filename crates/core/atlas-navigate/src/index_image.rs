//! One app's documents as a binary image: their vectors and postings as they are, so start-up
//! neither segments every page name again nor—far slower—asks a model to embed it again.
//!
//! An image is only as good as the embedder that made its vectors: it names that embedder, and
//! a reader with another one refuses the image (the caller then indexes the app's texts anew).

use std::collections::HashMap;

use atlas_model::image::{ImageError, ImageReader, ImageWriter};
use atlas_text::{Embedder, Vector};

use crate::index::{AppDocs, Doc, DocKind, TextIndex, normalize};

fn write_vector(w: &mut ImageWriter, v: &Vector) {
    match v {
        Vector::Dense(values) => {
            w.u8(0);
            w.f32s(values);
        }
        Vector::Sparse { dims, at, values } => {
            w.u8(1);
            w.u32(*dims);
            w.u16s(at);
            w.f32s(values);
        }
    }
}

fn read_vector(r: &mut ImageReader) -> Result<Vector, ImageError> {
    match r.u8()? {
        0 => Ok(Vector::Dense(r.f32s()?.into_boxed_slice())),
        1 => {
            let dims = r.u32()?;
            let at = r.u16s()?;
            let values = r.f32s()?;
            let ascending = at.windows(2).all(|w| w[0] < w[1]);
            if at.len() != values.len()
                || !ascending
                || at.last().is_some_and(|i| u32::from(*i) >= dims)
            {
                return Err(ImageError::invalid("a sparse vector out of shape"));
            }
            Ok(Vector::Sparse {
                dims,
                at: at.into_boxed_slice(),
                values: values.into_boxed_slice(),
            })
        }
        _ => Err(ImageError::invalid("a vector of no known form")),
    }
}

fn write_lists(w: &mut ImageWriter, lists: &HashMap<String, Vec<u32>>) {
    let mut sorted: Vec<_> = lists.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    w.len(sorted.len());
    for (key, docs) in sorted {
        w.str(key);
        w.u32s(docs);
    }
}

fn read_lists(r: &mut ImageReader, docs: usize) -> Result<HashMap<String, Vec<u32>>, ImageError> {
    let n = r.len(16)?;
    let mut lists = HashMap::with_capacity(n);
    for _ in 0..n {
        let key = r.str()?.to_string();
        let list = r.u32s()?;
        if list.iter().any(|d| *d as usize >= docs) {
            return Err(ImageError::invalid("a posting names no document"));
        }
        lists.insert(key, list);
    }
    Ok(lists)
}

impl TextIndex {
    /// Writes `app_id`'s documents, and the name of the embedder their vectors are of.
    pub fn write_app_image(&self, app_id: &str, embedder: &dyn Embedder, w: &mut ImageWriter) {
        w.str(&embedder.name());
        let empty = AppDocs::default();
        let app = self.apps.get(app_id).unwrap_or(&empty);
        let mut keys = vec![""; app.docs.len()];
        for (key, at) in &app.by_key {
            keys[*at as usize] = key;
        }
        w.len(app.docs.len());
        for (doc, key) in app.docs.iter().zip(keys) {
            w.str(key);
            match &doc.kind {
                DocKind::Page => w.u8(0),
                DocKind::Intent { intent_id } => {
                    w.u8(1);
                    w.str(intent_id);
                }
            }
            match &doc.target_page {
                None => w.u8(0),
                Some(page) => {
                    w.u8(1);
                    w.str(page);
                }
            }
            w.str(&doc.text);
            w.strs(&doc.keywords);
            write_vector(w, &doc.vector);
            w.len(doc.facets.len());
            doc.facets.iter().for_each(|f| write_vector(w, f));
            match &doc.words_vector {
                None => w.u8(0),
                Some(v) => {
                    w.u8(1);
                    write_vector(w, v);
                }
            }
            w.u64(doc.embedded);
        }
        write_lists(w, &app.postings);
        write_lists(w, &app.exact);
    }

    /// Reads what [`TextIndex::write_app_image`] wrote into `app_id`'s documents; refused, the
    /// index unchanged, when the image is damaged or its vectors are another embedder's.
    pub fn read_app_image(
        &mut self,
        app_id: &str,
        embedder: &dyn Embedder,
        r: &mut ImageReader,
    ) -> Result<(), ImageError> {
        let made_by = r.str()?;
        if made_by != embedder.name() {
            return Err(ImageError::invalid(format!(
                "vectors of embedder {made_by}, not of {}",
                embedder.name()
            )));
        }
        let n = r.len(16)?;
        let mut app = AppDocs::default();
        for at in 0..n as u32 {
            let key = r.str()?.to_string();
            let kind = match r.u8()? {
                0 => DocKind::Page,
                1 => DocKind::Intent {
                    intent_id: r.str()?.to_string(),
                },
                _ => return Err(ImageError::invalid("a document of no known kind")),
            };
            let target_page = match r.u8()? {
                0 => None,
                _ => Some(r.str()?.to_string()),
            };
            let text = r.str()?.to_string();
            let keywords = r.strings()?;
            let vector = read_vector(r)?;
            let facets = (0..r.len(5)?)
                .map(|_| read_vector(r))
                .collect::<Result<Vec<_>, _>>()?;
            let words_vector = match r.u8()? {
                0 => None,
                _ => Some(read_vector(r)?),
            };
            let embedded = r.u64()?;
            let doc = Doc {
                kind,
                target_page,
                normalized: normalize(&text),
                normalized_keywords: keywords.iter().map(|k| normalize(k)).collect(),
                text,
                keywords,
                vector,
                facets,
                words_vector,
                embedded,
            };
            if app.by_key.insert(key, at).is_some() {
                return Err(ImageError::invalid("two documents under one key"));
            }
            app.docs.push(doc);
        }
        app.postings = read_lists(r, n)?;
        app.exact = read_lists(r, n)?;
        self.lexical = embedder.is_lexical();
        self.apps.insert(app_id.to_string(), app);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use atlas_model::image::{ImageReader, ImageWriter};
    use atlas_model::{Intent, Page};
    use atlas_text::HashEmbedder;

    use crate::index::{Query, TextIndex};

    fn page(name: &str, description: &str) -> Page {
        Page {
            description: description.into(),
            intents: vec!["查看订单".into()],
            ..Page::named("a", name)
        }
    }

    fn indexed() -> TextIndex {
        let e = HashEmbedder::default();
        let mut index = TextIndex::default();
        for (name, description) in [
            ("订单列表", "全部订单"),
            ("Settings", "dark mode"),
            ("首页", ""),
        ] {
            index.index_page(&page(name, description), &e).unwrap();
        }
        let intent = Intent {
            intent_id: atlas_model::intent_id("a", "打开设置"),
            app_id: "a".into(),
            intent_text: "打开设置".into(),
            keywords: vec!["设置".into(), "settings".into()],
            target_page: Some(atlas_model::page_id("a", "Settings")),
            created_at: String::new(),
            ..Default::default()
        };
        index.index_intent(&intent, &e).unwrap();
        // Indexed again with new texts: a replaced document keeps its old postings.
        index.index_page(&page("首页", "推荐"), &e).unwrap();
        index
    }

    fn ranked(index: &TextIndex, text: &str) -> Vec<(String, String)> {
        let q = Query::new(text, &HashEmbedder::default()).unwrap();
        index
            .search(Some("a"), &q, 0.0, |_| true)
            .into_iter()
            .map(|(_, hit)| (hit.doc.text.clone(), format!("{:.6}", hit.score)))
            .collect()
    }

    #[test]
    fn documents_read_back_from_an_image_rank_as_before() {
        let e = HashEmbedder::default();
        let index = indexed();
        let mut w = ImageWriter::new();
        index.write_app_image("a", &e, &mut w);
        let bytes = w.into_bytes();
        let mut back = TextIndex::default();
        let mut r = ImageReader::new(&bytes);
        back.read_app_image("a", &e, &mut r).unwrap();
        assert!(r.is_done());
        for q in [
            "订单",
            "settings",
            "打开设置",
            "首页推荐",
            "nothing like it",
        ] {
            assert_eq!(ranked(&back, q), ranked(&index, q), "{q}");
        }
        let mut again = ImageWriter::new();
        back.write_app_image("a", &e, &mut again);
        assert_eq!(again.into_bytes(), bytes);
    }

    #[test]
    fn an_image_of_another_embedder_or_damaged_is_refused() {
        let index = indexed();
        let mut w = ImageWriter::new();
        index.write_app_image("a", &HashEmbedder::new(64), &mut w);
        let bytes = w.into_bytes();
        let mut back = TextIndex::default();
        let e = HashEmbedder::default();
        assert!(
            back.read_app_image("a", &e, &mut ImageReader::new(&bytes))
                .is_err()
        );
        assert!(ranked(&back, "订单").is_empty());
        for cut in 0..bytes.len() {
            let mut r = ImageReader::new(&bytes[..cut]);
            assert!(
                back.read_app_image("a", &HashEmbedder::new(64), &mut r)
                    .is_err()
            );
        }
    }
}
