//! How well an intent said in other words finds its page: a labelled set of paraphrases (Chinese
//! and English) over an app, asked through `query_path` (the page it would lead to: top-1) and
//! `find_similar_intents` (the pages of its best intents: top-3).

use atlas_model::{AtlasError, Result};

use atlas_service::{Atlas, QueryPathRequest, SimilarIntentsRequest};

/// The demo app's labelled paraphrases (`query,page`), written before anything was measured on
/// them: 91 requests that name no registered intent word for word ("领优惠" for 查看优惠券,
/// "my orders" for 我的订单), and 14 the app cannot serve (an empty page: "给妈妈打个电话"), for
/// which the right answer is none.
pub const DEMO_PARAPHRASES: &str = include_str!("../../labelled/intent-paraphrases.csv");

/// Hits among some of the queries.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Hits {
    /// Labelled queries asked.
    pub queries: usize,
    /// Queries whose intent came first.
    pub top1: usize,
    /// Queries whose intent came in the first three.
    pub top3: usize,
}

impl Hits {
    fn add(&mut self, top1: bool, top3: bool) {
        self.queries += 1;
        self.top1 += top1 as usize;
        self.top3 += top3 as usize;
    }

    /// The share of queries whose intent came first.
    pub fn top1_rate(&self) -> f64 {
        self.top1 as f64 / self.queries.max(1) as f64
    }

    /// The share of queries whose intent came in the first three.
    pub fn top3_rate(&self) -> f64 {
        self.top3 as f64 / self.queries.max(1) as f64
    }
}

/// Intent search quality on a labelled set, overall and by language.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IntentQuality {
    /// Over all queries.
    pub all: Hits,
    /// Requests the app cannot serve: `top1` counts those that found no page, as they should.
    pub unservable: Hits,
    /// Over the Chinese queries.
    pub chinese: Hits,
    /// Over the English queries.
    pub english: Hits,
    /// (query, expected page, page found or "")
    pub misses: Vec<(String, String, String)>,
}

/// Reads `query,page` lines (a header first).
pub fn read_labelled(text: &str) -> Result<Vec<(String, String)>> {
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let (query, page) = line.rsplit_once(',').ok_or_else(|| {
                AtlasError::invalid("labelled", format!("line {}: expected query,page", i + 2))
            })?;
            Ok((query.trim().to_string(), page.trim().to_string()))
        })
        .collect()
}

/// Asks every labelled query of `app_id`.
pub fn measure(
    atlas: &Atlas,
    app_id: &str,
    labelled: &[(String, String)],
) -> Result<IntentQuality> {
    let page_name = |id: &str| {
        atlas
            .read(|g| g.page(id).map(|p| p.page_name.clone()))
            .unwrap_or_default()
    };
    let mut quality = IntentQuality::default();
    for (query, expected) in labelled {
        let path = atlas.query_path(QueryPathRequest {
            app_id: app_id.to_string(),
            intent: query.clone(),
            current_page: None,
            max_steps: None,
            include_history: None,
        })?;
        let found = path.target_page.map(|p| p.page_name).unwrap_or_default();
        let similar = atlas.find_similar_intents(SimilarIntentsRequest {
            query: query.clone(),
            app_id: Some(app_id.to_string()),
            top_k: Some(10),
        })?;
        let mut pages: Vec<String> = Vec::new();
        for intent in similar.intents {
            let name = intent
                .target_page
                .as_deref()
                .map(page_name)
                .unwrap_or_default();
            if !name.is_empty() && !pages.contains(&name) {
                pages.push(name);
            }
        }
        let top1 = found == *expected;
        if expected.is_empty() {
            quality.unservable.add(top1, top1);
            if !top1 {
                quality.misses.push((query.clone(), String::new(), found));
            }
            continue;
        }
        let top3 = top1 || pages.iter().take(3).any(|p| p == expected);
        let english = query.is_ascii();
        quality.all.add(top1, top3);
        if english {
            quality.english.add(top1, top3);
        } else {
            quality.chinese.add(top1, top3);
        }
        if !top1 {
            quality
                .misses
                .push((query.clone(), expected.clone(), found));
        }
    }
    Ok(quality)
}
