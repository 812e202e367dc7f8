//! A vector as an index keeps it: dense, or only its non-zero entries.
//!
//! The built-in embedder hashes a page name's few dozen features into 512 dimensions, so most of
//! its vector is zeros: two kilobytes a page where a tenth would do, and at fifty thousand pages
//! the biggest part of a server's memory. A model's vector has no zeros and stays dense. Either
//! way [`Vector::cosine`] gives, bit for bit, what [`crate::cosine`] gives on the dense vector:
//! the skipped terms are zeros, and adding a zero changes no sum.

/// A stored vector.
#[derive(Debug, Clone, PartialEq)]
pub enum Vector {
    /// Every entry.
    Dense(Box<[f32]>),
    /// The non-zero entries, by ascending position.
    Sparse {
        /// The full vector's length.
        dims: u32,
        /// Where each non-zero entry is.
        at: Box<[u16]>,
        /// Its value.
        values: Box<[f32]>,
    },
}

impl From<Vec<f32>> for Vector {
    /// Keeps the smaller form: sparse when fewer than a third of the entries are non-zero (an
    /// entry then costs six bytes, not four).
    fn from(dense: Vec<f32>) -> Vector {
        let non_zero = dense.iter().filter(|x| **x != 0.0).count();
        if dense.len() > usize::from(u16::MAX) || non_zero * 3 >= dense.len() {
            return Vector::Dense(dense.into_boxed_slice());
        }
        let (at, values): (Vec<u16>, Vec<f32>) = dense
            .iter()
            .enumerate()
            .filter(|(_, x)| **x != 0.0)
            .map(|(i, x)| (i as u16, *x))
            .unzip();
        Vector::Sparse {
            dims: dense.len() as u32,
            at: at.into_boxed_slice(),
            values: values.into_boxed_slice(),
        }
    }
}

impl Vector {
    /// Its length as a dense vector.
    pub fn dims(&self) -> usize {
        match self {
            Vector::Dense(v) => v.len(),
            Vector::Sparse { dims, .. } => *dims as usize,
        }
    }

    /// Cosine similarity with a dense vector: exactly [`crate::cosine`] of the dense form.
    pub fn cosine(&self, other: &[f32]) -> f32 {
        let (at, values) = match self {
            Vector::Dense(v) => return crate::cosine(v, other),
            Vector::Sparse { at, values, .. } => (at, values),
        };
        if self.dims() != other.len() {
            return 0.0;
        }
        let (mut dot, mut norm) = (0.0f32, 0.0f32);
        for (i, x) in at.iter().zip(values.iter()) {
            dot += x * other[usize::from(*i)];
            norm += x * x;
        }
        let other_norm = other.iter().fold(0.0f32, |n, y| n + y * y);
        if norm == 0.0 || other_norm == 0.0 {
            0.0
        } else {
            dot / (norm.sqrt() * other_norm.sqrt())
        }
    }

    /// Its dense form.
    pub fn to_dense(&self) -> Vec<f32> {
        match self {
            Vector::Dense(v) => v.to_vec(),
            Vector::Sparse { dims, at, values } => {
                let mut dense = vec![0.0; *dims as usize];
                for (i, x) in at.iter().zip(values.iter()) {
                    dense[usize::from(*i)] = *x;
                }
                dense
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashEmbedder;

    #[test]
    fn a_sparse_vector_scores_bit_for_bit_as_its_dense_form() {
        let e = HashEmbedder::default();
        let texts = [
            "订单列表 123",
            "Settings",
            "打开外卖详情",
            "create a new event in the calendar",
            "",
            "购物车 Checkout 历史 42",
        ];
        for a in texts {
            let dense = e.embed_one(a);
            let stored = Vector::from(dense.clone());
            if !a.is_empty() {
                assert!(matches!(stored, Vector::Sparse { .. }), "{a}");
            }
            assert_eq!(stored.to_dense(), dense);
            for b in texts {
                let query = e.embed_one(b);
                assert_eq!(
                    stored.cosine(&query).to_bits(),
                    crate::cosine(&dense, &query).to_bits(),
                    "{a} / {b}"
                );
            }
        }
        // A vector of few zeros stays dense; lengths that differ score 0.
        let full: Vec<f32> = (1..=8).map(|i| i as f32).collect();
        assert!(matches!(Vector::from(full.clone()), Vector::Dense(_)));
        let sparse = Vector::from(vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
        assert_eq!(sparse.cosine(&[1.0; 5]), 0.0);
    }
}
