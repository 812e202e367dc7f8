//! The seed's templates for `search_text` (§2): the natural-language description search matches
//! by meaning, made from an entity's fields and its neighbours when the source gives none.

use super::{BusinessGraph, Node};
use crate::model::{EntityType, RelationType};

/// Joins the non-empty parts, each ending in 。.
fn sentences(parts: &[(&str, String)]) -> String {
    parts
        .iter()
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(label, v)| format!("{label}{}。", v.trim().trim_end_matches('。')))
        .collect()
}

fn unique(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The search text of a business, implementation or data resource.
pub(crate) fn generate(graph: &BusinessGraph, node: Node) -> String {
    let data = graph.data();
    match node.kind {
        EntityType::Business => {
            let b = &data.businesses[node.at];
            let steps = graph.steps_of(node);
            let systems = unique(steps.iter().flat_map(|s| {
                graph
                    .related(*s, RelationType::ImplementedBy, true)
                    .into_iter()
                    .filter_map(|(i, _)| data.implementations[i.at].system.clone())
            }));
            let step_names = unique(steps.iter().map(|s| data.steps[s.at].name.clone()));
            sentences(&[
                ("业务流程：", b.name.clone()),
                ("也叫", b.aliases.join("、")),
                ("描述：", b.description.clone().unwrap_or_default()),
                ("步骤：", step_names.join("、")),
                ("涉及系统：", systems.join("、")),
            ])
        }
        EntityType::Implementation => {
            let m = &data.implementations[node.at];
            let processes = unique(
                graph
                    .related(node, RelationType::ImplementedBy, false)
                    .into_iter()
                    .filter_map(|(step, _)| graph.process_of(step))
                    .map(|p| data.businesses[p.at].name.clone()),
            );
            sentences(&[
                ("接口：", m.name.clone()),
                ("URI：", m.uri.clone().unwrap_or_default()),
                ("所属系统：", m.system.clone().unwrap_or_default()),
                ("用途：", m.description.clone().unwrap_or_default()),
                ("常用于", processes.join("、")),
            ])
        }
        EntityType::DataResource => {
            let r = &data.data_resources[node.at];
            let table = r.table.clone().unwrap_or_else(|| r.name.clone());
            let mut also = r.aliases.clone();
            if r.name != table {
                also.insert(0, r.name.clone());
            }
            let fields: Vec<String> = r
                .fields
                .iter()
                .map(|f| match &f.description {
                    Some(d) => format!("{}（{d}）", f.name),
                    None => f.name.clone(),
                })
                .collect();
            sentences(&[
                ("表：", table),
                ("也叫", also.join("、")),
                ("所属库：", r.db.clone().unwrap_or_default()),
                ("用途：", r.description.clone().unwrap_or_default()),
                ("关键字段：", fields.join("、")),
            ])
        }
        EntityType::Step => String::new(),
    }
}
