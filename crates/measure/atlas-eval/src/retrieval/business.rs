//! Search quality on a labelled set: questions people ask about the graph, each with the search
//! tool an LLM would call and the entity it should find; top-1 and top-3 hit rates.

use serde::Serialize;

use atlas_biz::{
    BizError, BizSnapshot, SearchBusinessesRequest, SearchDataResourcesRequest,
    SearchImplementationsRequest,
};

/// The demo graph's labelled set (`demo/labelled.csv`: tool, query, expected id), Chinese and
/// English, written before the search was measured on it.
pub const DEMO_LABELLED: &str = include_str!("../../labelled/biz-questions.csv");

/// One labelled question.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// The search tool an LLM would call for it.
    pub tool: String,
    /// The question as a person asks it.
    pub query: String,
    /// The id of the entity it should find.
    pub expected: String,
}

/// Hit rates over a set of labelled questions.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    /// How many questions.
    pub queries: usize,
    /// The share whose entity came first.
    pub top1: f64,
    /// The share whose entity came in the first three.
    pub top3: f64,
}

/// Search quality on a labelled set: the total, per tool, and the questions missed.
#[derive(Debug, Clone, Serialize)]
pub struct Quality {
    /// Over all questions.
    pub total: Score,
    /// Per search tool.
    pub by_tool: Vec<(String, Score)>,
    /// Questions whose entity was not first: (tool, query, expected, first found).
    pub misses: Vec<(String, String, String, String)>,
}

/// Reads a labelled set: CSV with `tool`, `query` and `expected` columns.
pub fn read_labelled(text: &str) -> Result<Vec<Labelled>, BizError> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| BizError::Invalid(e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| BizError::Invalid(format!("the labelled set needs a {name} column")))
    };
    let (t, q, e) = (column("tool")?, column("query")?, column("expected")?);
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| BizError::Invalid(e.to_string()))?;
        let get = |i: usize| row.get(i).unwrap_or_default().to_string();
        out.push(Labelled {
            tool: get(t),
            query: get(q),
            expected: get(e),
        });
    }
    Ok(out)
}

/// The ids a search tool returns for `query`, best first.
fn ranked(graph: &BizSnapshot, tool: &str, query: &str) -> Result<Vec<String>, BizError> {
    let query = query.to_string();
    let limit = Some(3);
    Ok(match tool {
        "search_businesses" => graph
            .search_businesses(&SearchBusinessesRequest { query, limit })?
            .candidates
            .into_iter()
            .map(|c| c.entity.process_id)
            .collect(),
        "search_implementations" => graph
            .search_implementations(&SearchImplementationsRequest {
                query,
                system: None,
                uri_contains: None,
                limit,
            })?
            .candidates
            .into_iter()
            .map(|c| c.entity.impl_id)
            .collect(),
        "search_data_resources" => graph
            .search_data_resources(&SearchDataResourcesRequest {
                query,
                db: None,
                limit,
            })?
            .candidates
            .into_iter()
            .map(|c| c.entity.resource_id)
            .collect(),
        other => return Err(BizError::Invalid(format!("{other} is not a search tool"))),
    })
}

/// Asks every labelled question and scores where the expected entity ranks.
pub fn measure(graph: &BizSnapshot, labelled: &[Labelled]) -> Result<Quality, BizError> {
    let mut tools: Vec<(String, usize, usize, usize)> = Vec::new();
    let mut misses = Vec::new();
    for item in labelled {
        let found = ranked(graph, &item.tool, &item.query)?;
        let rank = found.iter().position(|id| *id == item.expected);
        let at = match tools.iter().position(|(t, ..)| *t == item.tool) {
            Some(at) => at,
            None => {
                tools.push((item.tool.clone(), 0, 0, 0));
                tools.len() - 1
            }
        };
        let entry = &mut tools[at];
        entry.1 += 1;
        entry.2 += (rank == Some(0)) as usize;
        entry.3 += rank.is_some() as usize;
        if rank != Some(0) {
            misses.push((
                item.tool.clone(),
                item.query.clone(),
                item.expected.clone(),
                found.first().cloned().unwrap_or_default(),
            ));
        }
    }
    let score = |n: usize, one: usize, three: usize| Score {
        queries: n,
        top1: one as f64 / n.max(1) as f64,
        top3: three as f64 / n.max(1) as f64,
    };
    let (n, one, three) = tools
        .iter()
        .fold((0, 0, 0), |(n, a, b), t| (n + t.1, a + t.2, b + t.3));
    Ok(Quality {
        total: score(n, one, three),
        by_tool: tools
            .into_iter()
            .map(|(t, n, a, b)| (t, score(n, a, b)))
            .collect(),
        misses,
    })
}
