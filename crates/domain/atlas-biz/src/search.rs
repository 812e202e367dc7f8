//! Hybrid entity search (seed 003 §4): the meaning of `search_text` through the shared
//! [`SegmentIndex`], merged with LIKE-style matches on the fields people quote verbatim (a name,
//! an alias, a URI, a system, a database or table name), de-duplicated per entity, scored 0..1.
//!
//! Why both: a question like "用户资料表" is answered by meaning, but "/api/order/detail 报 500"
//! or "user_profile" is a literal the user copied from a log; a literal that matches a field
//! exactly is the strongest evidence there is, and no embedding should outrank it.

use std::cell::{Cell, RefCell};

use atlas_search::kept::Kept;
use atlas_search::{SearchMethod, SegmentIndex, default_semantic_weight};
use atlas_text::Embedder;

use crate::error::BizError;
use crate::graph::{BusinessGraph, Node};
use crate::model::EntityType;

/// One searchable kind: the index of its search texts and each entity's literal fields,
/// normalised; entry `i` is the `i`-th entity of that kind.
struct KindIndex {
    index: SegmentIndex,
    literals: Vec<Vec<String>>,
}

/// The three searchable kinds' indexes.
pub(crate) struct SearchIndex {
    businesses: KindIndex,
    implementations: KindIndex,
    data_resources: KindIndex,
}

/// The id an entity's vectors are kept under: its kind and place. Its search text's digest
/// decides whether they still serve (see [`atlas_search::kept`]).
fn kept_id(kind: EntityType, at: usize) -> String {
    format!("{kind:?}/{at}")
}

fn build_one(
    graph: &BusinessGraph,
    kind: EntityType,
    count: usize,
    embedder: &dyn Embedder,
    kept: &RefCell<Kept>,
    (missing, defer): (&Cell<usize>, bool),
) -> Result<KindIndex, BizError> {
    let texts: Vec<(&str, Option<&str>)> = (0..count)
        .map(|at| (graph.search_text_of(Node { kind, at }), None))
        .collect();
    let known = |at: usize| {
        let found = kept.borrow_mut().take(&kept_id(kind, at), texts[at]);
        if found.is_none() {
            missing.set(missing.get() + 1);
            // Deferred: found by its words alone for now.
            return defer.then_some((None, None));
        }
        found
    };
    let index = SegmentIndex::build(&texts, embedder, &known).map_err(BizError::Embed)?;
    let literals = (0..count)
        .map(|at| literal_fields(graph, Node { kind, at }))
        .collect();
    Ok(KindIndex { index, literals })
}

impl SearchIndex {
    /// The index of `graph`'s searchable entities, their vectors taken from `kept` where it holds
    /// them for the same texts and embedded otherwise (or, with `defer`, left to their words);
    /// also how many were not in `kept` (none for a lexical embedder).
    pub(crate) fn build(
        graph: &BusinessGraph,
        embedder: &dyn Embedder,
        kept: Kept,
        defer: bool,
    ) -> Result<(SearchIndex, usize), BizError> {
        let data = graph.data();
        let (kept, embedded) = (RefCell::new(kept), Cell::new(0));
        let defer = defer && !embedder.is_lexical();
        let one = |kind, count| build_one(graph, kind, count, embedder, &kept, (&embedded, defer));
        let index = SearchIndex {
            businesses: one(EntityType::Business, data.businesses.len())?,
            implementations: one(EntityType::Implementation, data.implementations.len())?,
            data_resources: one(EntityType::DataResource, data.data_resources.len())?,
        };
        let embedded = if embedder.is_lexical() {
            0
        } else {
            embedded.get()
        };
        Ok((index, embedded))
    }

    /// Every entity's vectors, in [`atlas_search::kept`]'s bytes, for the next opening.
    pub(crate) fn kept_bytes(&self, graph: &BusinessGraph, embedder: &str) -> Vec<u8> {
        let kinds = [
            (EntityType::Business, &self.businesses),
            (EntityType::Implementation, &self.implementations),
            (EntityType::DataResource, &self.data_resources),
        ];
        let entries: Vec<(String, &str, atlas_search::Vectors)> = kinds
            .iter()
            .flat_map(|(kind, index)| {
                (0..index.literals.len()).filter_map(move |at| {
                    let vectors = index.index.vectors(at)?;
                    let text = graph.search_text_of(Node { kind: *kind, at });
                    Some((kept_id(*kind, at), text, vectors))
                })
            })
            .collect();
        atlas_search::kept::encode(
            embedder,
            entries
                .iter()
                .map(|(id, text, vectors)| (id.as_str(), (*text, None), vectors.clone())),
        )
    }

    /// The best `limit` entities of `kind` that `admits` lets through, best first.
    pub(crate) fn search(
        &self,
        embedder: &dyn Embedder,
        kind: EntityType,
        query: &str,
        admits: &dyn Fn(Node) -> bool,
        limit: usize,
    ) -> Result<Vec<(Node, f64)>, BizError> {
        let kind_index = match kind {
            EntityType::Business => &self.businesses,
            EntityType::Implementation => &self.implementations,
            EntityType::DataResource => &self.data_resources,
            EntityType::Step => return Ok(Vec::new()),
        };
        let count = kind_index.literals.len();
        let mut scores = vec![0f64; count];
        let allowed = |at: usize| admits(Node { kind, at });
        let semantic = kind_index
            .index
            .search(
                query,
                embedder,
                SearchMethod::Hybrid,
                default_semantic_weight(embedder),
                &allowed,
                count,
                0.0,
            )
            .map_err(BizError::Embed)?;
        for hit in semantic {
            scores[hit.entry] = hit.score;
        }
        let needle = normalise(query);
        for (at, score) in scores.iter_mut().enumerate() {
            if !allowed(at) {
                continue;
            }
            let literal = kind_index.literals[at]
                .iter()
                .map(|field| like_score(&needle, field))
                .fold(0.0, f64::max);
            // A literal match decides; meaning orders the entities that match equally well.
            if literal > 0.0 {
                *score = literal * 0.9 + *score * 0.1;
            }
        }
        let mut ranked: Vec<(Node, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(at, s)| (Node { kind, at }, s.min(1.0)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.at.cmp(&b.0.at)));
        ranked.truncate(limit);
        Ok(ranked)
    }
}

fn normalise(text: &str) -> String {
    text.trim().to_lowercase()
}

/// The fields a user may quote verbatim, normalised.
fn literal_fields(graph: &BusinessGraph, node: Node) -> Vec<String> {
    let data = graph.data();
    let mut fields: Vec<String> = vec![graph.id_of(node).into(), graph.name_of(node).into()];
    match node.kind {
        EntityType::Business => fields.extend(data.businesses[node.at].aliases.iter().cloned()),
        EntityType::Implementation => {
            let m = &data.implementations[node.at];
            fields.extend(m.uri.clone());
            fields.extend(m.code_ref.clone());
        }
        EntityType::DataResource => {
            let r = &data.data_resources[node.at];
            fields.extend(r.table.clone());
            fields.extend(r.aliases.iter().cloned());
            if let (Some(db), Some(table)) = (&r.db, &r.table) {
                // "user_db.user_profile" is how a table is often written.
                fields.push(format!("{db}.{table}"));
            }
        }
        EntityType::Step => {}
    }
    fields
        .into_iter()
        .map(|f| normalise(&f))
        .filter(|f| f.chars().count() >= 2)
        .collect()
}

/// How well `query` and one field match literally: the same text; the query inside the field (a
/// URI fragment); the field inside the query ("订单详情查询接口报 500"), counting more the more of
/// the query it covers.
fn like_score(query: &str, field: &str) -> f64 {
    if query.is_empty() || field.is_empty() {
        return 0.0;
    }
    if query == field {
        return 1.0;
    }
    let (q, f) = (query.chars().count() as f64, field.chars().count() as f64);
    if field.contains(query) && q >= 3.0 {
        return 0.75 + 0.2 * q / f;
    }
    if query.contains(field) {
        return 0.7 + 0.25 * f / q;
    }
    0.0
}
