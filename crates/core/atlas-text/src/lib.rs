//! Text for Atlas: turning Chinese and English into comparable features.
//!
//! Intents and page names in this field are mostly short Chinese phrases ("点外卖", "查找附近餐厅")
//! mixed with English ("Settings", "create a new event"). Word segmentation alone misses
//! (jieba cuts 外卖点餐 as 外/卖点/餐, losing 点餐), characters alone are noisy, so every text is
//! turned into jieba words **plus** CJK character unigrams and bigrams **plus** lower-cased English
//! words with a light stemmer. The [`Embedder`] trait is what the rest of Atlas sees: the built-in
//! [`HashEmbedder`] hashes these features into a fixed vector (no model, no network, microseconds),
//! while remote or neural embedders live in their own crates and plug in through the same trait.

mod embed;
mod irreversible;
mod memo;
mod template;
mod tokenize;
mod vector;

pub use embed::{CountingEmbedder, EmbedError, Embedder, HashEmbedder, cosine};
pub use irreversible::says_irreversible;
pub use memo::Memoized;
pub use template::{Template, VALUE, substitute};
pub use tokenize::{Feature, features, load_dictionary, words};
pub use vector::Vector;

/// Whether `text` holds control characters other than newline and tab (NUL, escapes, …): no
/// query or label means them, and they break logs, terminals and the files text ends up in.
pub fn has_control_characters(text: &str) -> bool {
    text.chars().any(is_refused_control)
}

/// A control character other than newline and tab (the C0 and C1 ranges and DEL): what no
/// text Atlas takes may hold.
pub fn is_refused_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}
