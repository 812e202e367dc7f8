//! Finding an entity's slot by its key without keeping the key twice.
//!
//! A `HashMap<String, u32>` would hold a second copy of every id beside the entity that already
//! has it — for a transition, more than the rest of what it costs in memory. This table holds only
//! slot numbers; it hashes a key where it is asked, and compares against the key the slot's entity
//! holds.

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;

/// Slots of entities, found by the keys the entities hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdIndex {
    table: HashTable<u32>,
    /// SipHash with a random key: keys come from clients, who must not be able to make every key
    /// land in one bucket.
    hasher: std::hash::RandomState,
}

impl IdIndex {
    /// The slot of the entity whose key is `key`; `key_of` reads a slot's key.
    pub(crate) fn get<'a, K: Hash + Eq + ?Sized + 'a>(
        &self,
        key: &K,
        key_of: impl Fn(u32) -> &'a K,
    ) -> Option<u32> {
        self.table
            .find(self.hasher.hash_one(key), |slot| key_of(*slot) == key)
            .copied()
    }

    /// Notes that the entity at `slot` has the key `key` (not in the index yet).
    pub(crate) fn insert<'a, K: Hash + ?Sized + 'a>(
        &mut self,
        key: &K,
        slot: u32,
        key_of: impl Fn(u32) -> &'a K,
    ) {
        let hasher = &self.hasher;
        self.table
            .insert_unique(hasher.hash_one(key), slot, |slot| {
                hasher.hash_one(key_of(*slot))
            });
    }

    /// Forgets `slot`, whose key is `key`.
    pub(crate) fn remove<K: Hash + ?Sized>(&mut self, key: &K, slot: u32) {
        if let Ok(entry) = self
            .table
            .find_entry(self.hasher.hash_one(key), |s| *s == slot)
        {
            entry.remove();
        }
    }

    /// How many keys it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// Room for `more` keys beyond those it holds, made at once.
    pub(crate) fn reserve<'a, K: Hash + ?Sized + 'a>(
        &mut self,
        more: usize,
        key_of: impl Fn(u32) -> &'a K,
    ) {
        let hasher = &self.hasher;
        self.table
            .reserve(more, |slot| hasher.hash_one(key_of(*slot)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_key_it_was_given_and_no_other() {
        let ids: Vec<String> = (0..5_000).map(|i| format!("页面-{i}")).collect();
        let mut index = IdIndex::default();
        for (slot, id) in ids.iter().enumerate() {
            index.insert(id.as_str(), slot as u32, |s| ids[s as usize].as_str());
        }
        assert_eq!(index.len(), ids.len());
        for (slot, id) in ids.iter().enumerate() {
            assert_eq!(
                index.get(id.as_str(), |s| ids[s as usize].as_str()),
                Some(slot as u32)
            );
        }
        assert_eq!(index.get("页面-5000", |s| ids[s as usize].as_str()), None);
        index.remove("页面-7", 7);
        assert_eq!(index.get("页面-7", |s| ids[s as usize].as_str()), None);
        assert_eq!(index.len(), ids.len() - 1);
    }
}
