//! Values many transitions share, kept once.
//!
//! A tab bar's "首页", a back key, a list's "OK": the same action is taken from many pages, so an
//! app has far fewer distinct actions than transitions. Each distinct value is kept once and
//! counted; a transition holds its number. A value no transition holds any more is dropped and its
//! number reused, so a label that keeps changing (a badge's "3 条新消息") does not pile up.

use std::hash::Hash;

use crate::id_index::IdIndex;

/// Distinct values, each with the number of holders.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interner<T> {
    values: Vec<T>,
    holders: Vec<u32>,
    free: Vec<u32>,
    index: IdIndex,
}

impl<T: Hash + Eq + Clone + Default> Interner<T> {
    /// The number of `value`, counting one more holder.
    pub(crate) fn acquire(&mut self, value: &T) -> u32 {
        let values = &self.values;
        if let Some(slot) = self.index.get(value, |s| &values[s as usize]) {
            self.holders[slot as usize] += 1;
            return slot;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.values[slot as usize] = value.clone();
                self.holders[slot as usize] = 1;
                slot
            }
            None => {
                self.values.push(value.clone());
                self.holders.push(1);
                (self.values.len() - 1) as u32
            }
        };
        let values = &self.values;
        self.index.insert(value, slot, |s| &values[s as usize]);
        slot
    }

    /// One holder of `slot` fewer; the value goes with its last.
    pub(crate) fn release(&mut self, slot: u32) {
        let holders = &mut self.holders[slot as usize];
        *holders -= 1;
        if *holders == 0 {
            let value = std::mem::take(&mut self.values[slot as usize]);
            self.index.remove(&value, slot);
            self.free.push(slot);
        }
    }

    /// The value numbered `slot`.
    pub(crate) fn get(&self, slot: u32) -> &T {
        &self.values[slot as usize]
    }

    /// Every value by its number, a released number's value empty (for an image).
    pub(crate) fn values(&self) -> &[T] {
        &self.values
    }

    /// The interner of `values` whose holders are `holders` (numbers with none are free): an
    /// image's values, counted again from the rows that hold them.
    pub(crate) fn rebuild(mut values: Vec<T>, holders: Vec<u32>) -> Interner<T> {
        debug_assert_eq!(values.len(), holders.len());
        let mut index = IdIndex::default();
        let mut free = Vec::new();
        index.reserve(values.len(), |s| &values[s as usize]);
        for (slot, held) in holders.iter().enumerate() {
            if *held == 0 {
                values[slot] = T::default();
                free.push(slot as u32);
            } else {
                index.insert(&values[slot], slot as u32, |s| &values[s as usize]);
            }
        }
        free.reverse();
        Interner {
            values,
            holders,
            free,
            index,
        }
    }

    /// Distinct values held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.holders.iter().filter(|h| **h > 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_a_number_until_their_last_holder_lets_go() {
        let mut words: Interner<String> = Interner::default();
        let a = words.acquire(&"首页".to_string());
        let b = words.acquire(&"OK".to_string());
        assert_eq!(words.acquire(&"首页".to_string()), a);
        assert_ne!(a, b);
        assert_eq!(words.len(), 2);
        words.release(a);
        assert_eq!(words.get(a), "首页");
        words.release(a);
        assert_eq!(words.len(), 1);
        // The number is reused, and the old value is not found under it.
        let c = words.acquire(&"3 条新消息".to_string());
        assert_eq!(c, a);
        assert_eq!(words.get(c), "3 条新消息");
        assert_eq!(words.acquire(&"OK".to_string()), b);
        assert_eq!(words.len(), 2);
    }
}
