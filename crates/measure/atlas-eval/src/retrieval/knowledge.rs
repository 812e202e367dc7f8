//! Retrieval quality on a labelled set: queries phrased differently from the stored questions,
//! each with the stored question whose answer is right; top-1 and top-3 hit rates.

use serde::Serialize;

use atlas_kb::{KbError, KnowledgeBase, SearchMethod, SearchOptions};

/// The demo dataset's labelled set (`demo/paraphrases.csv`: query, question).
pub const DEMO_PARAPHRASES: &str = include_str!("../../labelled/kb-paraphrases.csv");
/// A second labelled set (`demo/heldout.csv`, one query per pair), written later and more
/// indirectly. The answer and hybrid weights were kept only where both sets agreed, so it checks
/// that a choice is not fitted to one set's phrasings rather than being a blind test.
pub const DEMO_HELD_OUT: &str = include_str!("../../labelled/kb-heldout.csv");

/// How well one search method answered a labelled set.
#[derive(Debug, Clone, Serialize)]
pub struct Quality {
    /// The search method measured.
    pub method: String,
    /// Queries asked.
    pub queries: usize,
    /// The share whose right answer came first.
    pub top1: f64,
    /// The share whose right answer was among the first three.
    pub top3: f64,
    /// Queries whose right answer was not first: (query, expected question, first question found).
    pub misses: Vec<(String, String, String)>,
}

/// Reads a labelled set: CSV with `query` and `question` columns.
pub fn read_labelled(text: &str) -> Result<Vec<(String, String)>, KbError> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| KbError::InvalidParam(e.to_string()))?
        .clone();
    let q = headers
        .iter()
        .position(|h| h == "query")
        .ok_or_else(|| KbError::InvalidParam("the labelled set needs a query column".into()))?;
    let a = headers
        .iter()
        .position(|h| h == "question")
        .ok_or_else(|| KbError::InvalidParam("the labelled set needs a question column".into()))?;
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| KbError::InvalidParam(e.to_string()))?;
        out.push((
            row.get(q).unwrap_or_default().to_string(),
            row.get(a).unwrap_or_default().to_string(),
        ));
    }
    Ok(out)
}

/// Asks every query of `labelled` with `method` and scores where the expected question ranks.
pub fn measure(
    kb: &KnowledgeBase,
    dataset: &str,
    labelled: &[(String, String)],
    method: SearchMethod,
) -> Result<Quality, KbError> {
    let options = SearchOptions {
        method,
        top_k: 3,
        ..Default::default()
    };
    let (mut top1, mut top3, mut misses) = (0, 0, Vec::new());
    for (query, expected) in labelled {
        let hits = kb.search(dataset, query, &options)?;
        let rank = hits
            .iter()
            .position(|h| h.segment.question.as_deref() == Some(expected.as_str()));
        top1 += (rank == Some(0)) as usize;
        top3 += rank.is_some() as usize;
        if rank != Some(0) {
            let found = hits
                .first()
                .and_then(|h| h.segment.question.clone())
                .unwrap_or_default();
            misses.push((query.clone(), expected.clone(), found));
        }
    }
    let n = labelled.len().max(1) as f64;
    Ok(Quality {
        method: format!("{method:?}").to_lowercase(),
        queries: labelled.len(),
        top1: top1 as f64 / n,
        top3: top3 as f64 / n,
        misses,
    })
}
