//! Finding a page or a transition by its id without keeping the id twice.
//!
//! A `HashMap<String, u32>` would hold a second copy of every id beside the entity that already
//! has it — for a transition, a hundred bytes of the few hundred it should cost in memory. This
//! table holds only slot numbers; it hashes an id where it is asked, and compares against the id
//! the slot's entity holds.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Slots of entities, found by the ids the entities hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdIndex {
    table: HashTable<u32>,
    /// SipHash with a random key: ids come from clients, who must not be able to make every id
    /// land in one bucket.
    hasher: std::hash::RandomState,
}

impl IdIndex {
    /// The slot of the entity whose id is `id`; `id_of` reads a slot's id.
    pub(crate) fn get<'a>(&self, id: &str, id_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        self.table
            .find(self.hasher.hash_one(id), |slot| id_of(*slot) == id)
            .copied()
    }

    /// Notes that the entity at `slot` has the id `id` (not in the index yet).
    pub(crate) fn insert<'a>(&mut self, id: &str, slot: u32, id_of: impl Fn(u32) -> &'a str) {
        let hasher = &self.hasher;
        self.table.insert_unique(hasher.hash_one(id), slot, |slot| {
            hasher.hash_one(id_of(*slot))
        });
    }

    /// How many ids it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_id_it_was_given_and_no_other() {
        let ids: Vec<String> = (0..5_000).map(|i| format!("页面-{i}")).collect();
        let mut index = IdIndex::default();
        for (slot, id) in ids.iter().enumerate() {
            index.insert(id, slot as u32, |s| ids[s as usize].as_str());
        }
        assert_eq!(index.len(), ids.len());
        for (slot, id) in ids.iter().enumerate() {
            assert_eq!(
                index.get(id, |s| ids[s as usize].as_str()),
                Some(slot as u32)
            );
        }
        assert_eq!(index.get("页面-5000", |s| ids[s as usize].as_str()), None);
    }
}
