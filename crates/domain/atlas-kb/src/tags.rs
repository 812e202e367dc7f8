//! Knowledge tags (Dify's "knowledge type" tags): named labels kept for the whole knowledge base
//! in `tags.json`, bound to datasets by id in each dataset's file.

use atlas_store::files::Files;
use serde::{Deserialize, Serialize};

use crate::{KbError, KnowledgeBase, error, model, store};

/// A knowledge tag, bound to datasets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tag {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
}

/// The file of the tags, in the knowledge base's folder.
pub(crate) const TAGS_FILE: &str = "tags.json";

/// The knowledge tags kept (none before the first is made).
pub(crate) fn load(files: &dyn Files) -> Result<Vec<Tag>, KbError> {
    Ok(store::read_json(files, TAGS_FILE)?.unwrap_or_default())
}

fn valid_name(name: &str) -> Result<&str, KbError> {
    error::valid_name(name, "a tag's name", atlas_api::dify::limits::TAG_NAME)
}

impl KnowledgeBase {
    /// Every tag, each with how many datasets it is bound to.
    pub fn tags(&self) -> Vec<(Tag, usize)> {
        let datasets = self.datasets.read();
        self.tags
            .read()
            .iter()
            .map(|t| {
                let bound = datasets
                    .values()
                    .filter(|s| s.dataset.tag_ids.contains(&t.id))
                    .count();
                (t.clone(), bound)
            })
            .collect()
    }

    /// A new tag.
    pub fn create_tag(&self, name: &str) -> Result<Tag, KbError> {
        let name = valid_name(name)?;
        self.edit_tags(|tags| {
            if tags.iter().any(|t| t.name == name) {
                return Err(KbError::Conflict(format!("tag {name:?} exists")));
            }
            let tag = Tag {
                id: model::new_id(),
                name: name.to_string(),
            };
            tags.push(tag.clone());
            Ok(tag)
        })
    }

    /// Renames a tag.
    pub fn rename_tag(&self, id: &str, name: &str) -> Result<Tag, KbError> {
        let name = valid_name(name)?;
        self.edit_tags(|tags| {
            if tags.iter().any(|t| t.name == name && t.id != id) {
                return Err(KbError::Conflict(format!("tag {name:?} exists")));
            }
            let tag = tags
                .iter_mut()
                .find(|t| t.id == id)
                .ok_or(KbError::TagNotFound)?;
            tag.name = name.to_string();
            Ok(tag.clone())
        })
    }

    /// Deletes a tag and unbinds it from every dataset.
    pub fn delete_tag(&self, id: &str) -> Result<(), KbError> {
        self.edit_tags(|tags| {
            let at = tags
                .iter()
                .position(|t| t.id == id)
                .ok_or(KbError::TagNotFound)?;
            tags.remove(at);
            Ok(())
        })?;
        let bound: Vec<String> = self
            .datasets
            .read()
            .values()
            .filter(|s| s.dataset.tag_ids.iter().any(|t| t == id))
            .map(|s| s.dataset.id.clone())
            .collect();
        for dataset in bound {
            self.unbind_tag(&dataset, id)?;
        }
        Ok(())
    }

    /// Binds tags to a dataset (those already bound stay once).
    pub fn bind_tags(&self, dataset: &str, ids: &[String]) -> Result<(), KbError> {
        {
            let tags = self.tags.read();
            if let Some(unknown) = ids.iter().find(|id| !tags.iter().any(|t| &t.id == *id)) {
                return Err(error::invalid(format!("no tag {unknown}")));
            }
        }
        self.edit_dataset(dataset, |d, _| {
            for id in ids {
                if !d.tag_ids.contains(id) {
                    d.tag_ids.push(id.clone());
                }
            }
            Ok(())
        })
    }

    /// Unbinds a tag from a dataset.
    pub fn unbind_tag(&self, dataset: &str, id: &str) -> Result<(), KbError> {
        self.edit_dataset(dataset, |d, _| {
            d.tag_ids.retain(|t| t != id);
            Ok(())
        })
    }

    /// The tags bound to a dataset.
    pub fn dataset_tags(&self, dataset: &str) -> Result<Vec<Tag>, KbError> {
        let bound = self.snapshot(dataset)?.dataset.tag_ids.clone();
        Ok(self
            .tags
            .read()
            .iter()
            .filter(|t| bound.contains(&t.id))
            .cloned()
            .collect())
    }

    /// Applies `edit` to the tags under the write lock and writes them.
    fn edit_tags<T>(
        &self,
        edit: impl FnOnce(&mut Vec<Tag>) -> Result<T, KbError>,
    ) -> Result<T, KbError> {
        let _writing = self.write_turn()?;
        let mut tags = self.tags.read().clone();
        let value = edit(&mut tags)?;
        store::write_json(self.files.as_ref(), TAGS_FILE, &tags)?;
        *self.tags.write() = tags;
        Ok(value)
    }
}
