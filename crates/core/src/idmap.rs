//! [`IdMap`]: values kept per number a trace gives (a CPU, a stream, a
//! task), with no memory sized by the number itself.
//!
//! A damaged file can name CPU 3,221,225,471; a sink that keeps its state
//! in a `Vec` indexed by the CPU would ask for gigabytes. An `IdMap` keeps
//! numbers below [`IdMap::DENSE`] in a vector (as fast as indexing one)
//! and the others in a sorted map, so its size follows the numbers that
//! occur, not their values.

use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct IdMap<T> {
    dense: Vec<Option<T>>,
    sparse: BTreeMap<u32, T>,
}

impl<T> Default for IdMap<T> {
    fn default() -> Self {
        IdMap {
            dense: Vec::new(),
            sparse: BTreeMap::new(),
        }
    }
}

impl<T> IdMap<T> {
    /// Numbers below this are kept in a vector (grown up to the largest
    /// such number seen); the others in a sorted map.
    pub const DENSE: u32 = 1 << 12;

    pub fn new() -> Self {
        Self::default()
    }

    /// The value for `id`, made by `make` if there is none yet.
    #[inline]
    pub fn get_or_insert_with(&mut self, id: u32, make: impl FnOnce() -> T) -> &mut T {
        if id < Self::DENSE {
            let i = id as usize;
            if self.dense.len() <= i {
                self.dense.resize_with(i + 1, || None);
            }
            self.dense[i].get_or_insert_with(make)
        } else {
            self.sparse.entry(id).or_insert_with(make)
        }
    }

    /// The value for `id`, the default if there is none yet.
    #[inline]
    pub fn slot(&mut self, id: u32) -> &mut T
    where
        T: Default,
    {
        self.get_or_insert_with(id, T::default)
    }

    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        if id < Self::DENSE {
            self.dense.get(id as usize).and_then(|v| v.as_ref())
        } else {
            self.sparse.get(&id)
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        if id < Self::DENSE {
            self.dense.get_mut(id as usize).and_then(|v| v.as_mut())
        } else {
            self.sparse.get_mut(&id)
        }
    }

    /// The numbers that have a value, in ascending order.
    pub fn ids(&self) -> Vec<u32> {
        self.iter().map(|(i, _)| i).collect()
    }

    /// Every value with its number, in ascending order of the numbers.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.dense
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i as u32, v)))
            .chain(self.sparse.iter().map(|(&i, v)| (i, v)))
    }

    /// How many numbers have a value.
    pub fn len(&self) -> usize {
        self.dense.iter().filter(|v| v.is_some()).count() + self.sparse.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_numbers_take_no_room_and_keep_their_order() {
        let mut m: IdMap<u64> = IdMap::new();
        *m.slot(3_221_225_471) += 5;
        *m.slot(2) += 1;
        *m.slot(u32::MAX) += 7;
        *m.slot(2) += 1;
        assert!(
            m.dense.capacity() < 64,
            "the vector follows small numbers only"
        );
        assert_eq!(m.ids(), vec![2, 3_221_225_471, u32::MAX]);
        assert_eq!(m.get(2), Some(&2));
        assert_eq!(m.get(3_221_225_471), Some(&5));
        assert_eq!(m.get(7), None);
        assert_eq!(m.get(IdMap::<u64>::DENSE), None);
        assert_eq!(m.len(), 3);
        *m.get_mut(u32::MAX).unwrap() = 1;
        assert_eq!(m.iter().map(|(_, v)| *v).collect::<Vec<_>>(), vec![2, 5, 1]);
    }
}
