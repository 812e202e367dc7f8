//! Features of a text: words for meaning, character n-grams for robustness.

use std::sync::LazyLock;

use jieba_rs::Jieba;
use rust_stemmers::{Algorithm, Stemmer};

static JIEBA: LazyLock<Jieba> = LazyLock::new(|| {
    let mut jieba = Jieba::new();
    // Words of the app-testing domain that jieba's general dictionary cuts badly.
    for word in [
        "外卖",
        "点餐",
        "下单",
        "登录",
        "注册",
        "搜索",
        "收藏",
        "购物车",
        "订单",
        "优惠券",
        "扫一扫",
    ] {
        jieba.add_word(word, Some(100_000), None);
    }
    jieba
});

/// Loads the Chinese dictionary now (a fifth of a second, some 40 MB) rather than in the first
/// request that segments a text: a server calls it while it opens, on a thread of its own.
pub fn load_dictionary() {
    LazyLock::force(&JIEBA);
}

/// Function words that carry no intent ("我想点外卖" is about 外卖, not 我).
const STOP_WORDS: &[&str] = &[
    "的", "了", "我", "要", "想", "请", "一下", "帮", "帮我", "吗", "呢", "吧", "把", "和", "在",
    "去", "a", "an", "the", "to", "of", "and", "or", "in", "on", "for", "is", "it", "me", "my",
    "i", "please", "with", "this", "that", "as", "at", "by", "be", "are", "was", "will", "you",
    "your", "its", "from", "into",
];

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// A weighted feature of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// The feature: a jieba word, a stemmed English word, or a CJK bigram or unigram.
    pub token: String,
    /// How much it counts: 1 for a word, 0.6 for a CJK bigram, 0.3 for a unigram.
    pub weight: f32,
}

/// Snowball's English stemmer, so an instruction's "closing", "vibration" and "types" meet a
/// label's "Close", "Vibrate" and "Type"; a suffix list alone cannot undo English spelling.
static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

fn stem(word: &str) -> String {
    if word.chars().any(|c| c.is_ascii_digit()) {
        return word.to_string();
    }
    // Snowball's known over-reach: "settings" is a place, not the verb "set".
    if word.starts_with("setting") {
        return "setting".into();
    }
    STEMMER.stem(word).into_owned()
}

/// Content words of a text: jieba's cut of each CJK run, and lower-cased stemmed English words and
/// numbers, with stop words removed.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let lower = text.to_lowercase();
    for token in JIEBA.cut(&lower, true) {
        let token = token.word.trim();
        if token.is_empty() || !token.chars().any(char::is_alphanumeric) {
            continue;
        }
        if token.chars().any(is_cjk) {
            if !STOP_WORDS.contains(&token) {
                out.push(token.to_string());
            }
        } else {
            for part in token
                .split(|c: char| !c.is_alphanumeric())
                .filter(|p| !p.is_empty())
            {
                if !STOP_WORDS.contains(&part) {
                    out.push(stem(part));
                }
            }
        }
    }
    out
}

/// All features of a text: words (weight 1), CJK bigrams (0.6) and unigrams (0.3) of every CJK
/// run, so 点餐 matches inside 外卖点餐 even when the segmenter cut it elsewhere.
pub fn features(text: &str) -> Vec<Feature> {
    let mut out: Vec<Feature> = words(text)
        .into_iter()
        .map(|token| Feature { token, weight: 1.0 })
        .collect();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_cjk(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_cjk(chars[i]) {
            i += 1;
        }
        let run = &chars[start..i];
        for (k, c) in run.iter().enumerate() {
            let unigram = c.to_string();
            if !STOP_WORDS.contains(&unigram.as_str()) {
                out.push(Feature {
                    token: format!("#{unigram}"),
                    weight: 0.3,
                });
            }
            if k + 1 < run.len() {
                out.push(Feature {
                    token: format!("#{}{}", c, run[k + 1]),
                    weight: 0.6,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_words_and_ngrams() {
        let w = words("我想点外卖");
        assert!(w.contains(&"外卖".to_string()), "{w:?}");
        assert!(!w.contains(&"我".to_string()));
        let f = features("外卖点餐");
        assert!(
            f.iter().any(|f| f.token == "#点餐"),
            "bigram 点餐 must be present"
        );
    }

    #[test]
    fn english_is_lowercased_and_stemmed() {
        assert_eq!(words("Create new Events"), words("creating a new event"));
        assert_eq!(words("searching the Categories"), words("search category"));
        assert_eq!(words("closing"), words("Close"));
        assert_eq!(words("vibration"), words("Vibrate"));
        assert_ne!(words("set"), words("settings"));
        assert_eq!(words("12345678900 apps"), vec!["12345678900", "app"]);
    }
}
