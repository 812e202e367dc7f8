//! Reading business graphs: Atlas's own JSON document ([`BusinessData`]) and the line-delimited
//! JSON that Neo4j's `apoc.export.json.all` writes, since the seed's users keep the graph there.
//!
//! A Neo4j node becomes an entity by its labels (Business/Process, Step, Implementation/API/
//! Interface/Service, DataResource/Table) and keeps its properties as fields; its id is the
//! entity's own id property when it has one (`process_id`, `step_id`, `impl_id`,
//! `resource_id`, or `id`), else `neo4j:<node id>`. Relationship types map to
//! [`RelationType`]s, with READS and WRITES read as ACCESSES of that access type.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{BizError, invalid};
use crate::model::*;

/// The lists of Atlas's JSON document.
const DOCUMENT_LISTS: [&str; 5] = [
    "businesses",
    "steps",
    "implementations",
    "data_resources",
    "relations",
];

/// Atlas's JSON document: `{"businesses", "steps", "implementations", "data_resources", "relations"}`.
///
/// The document replaces the whole graph, so what looks like a mistake is refused rather than
/// read as "empty": a document that is not an object, names none of the lists (`{}`), or names
/// something else (a typo would otherwise drop that list). An empty graph is a document with
/// its lists given empty.
pub fn from_json(text: &str) -> Result<BusinessData, BizError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("not a business graph document: {e}")))?;
    let Some(document) = value.as_object() else {
        return Err(invalid(
            "a business graph document is a JSON object with the lists businesses, steps, implementations, data_resources and relations",
        ));
    };
    check_lists(document.keys().map(String::as_str))?;
    serde_json::from_value(value)
        .map_err(|e| invalid(format!("not a business graph document: {e}")))
}

/// The names at the top of a document: some of its lists and nothing else.
pub fn check_lists<'a>(names: impl Iterator<Item = &'a str>) -> Result<(), BizError> {
    let names: Vec<&str> = names.collect();
    if let Some(unknown) = names.iter().find(|k| !DOCUMENT_LISTS.contains(k)) {
        return Err(invalid(format!(
            "a business graph document has no {unknown:?}: its lists are {}",
            DOCUMENT_LISTS.join(", ")
        )));
    }
    if names.is_empty() {
        return Err(invalid(format!(
            "the document names none of the lists ({}); to empty the graph, give them as empty lists",
            DOCUMENT_LISTS.join(", ")
        )));
    }
    Ok(())
}

fn entity_type(labels: &[String]) -> Option<EntityType> {
    labels.iter().find_map(|l| match l.to_lowercase().as_str() {
        "business" | "process" | "businessprocess" => Some(EntityType::Business),
        "step" | "processstep" => Some(EntityType::Step),
        "implementation" | "api" | "interface" | "service" => Some(EntityType::Implementation),
        "dataresource" | "table" | "resource" => Some(EntityType::DataResource),
        _ => None,
    })
}

fn relation_type(label: &str) -> Option<(RelationType, Option<&'static str>)> {
    Some(match label.to_uppercase().as_str() {
        "HAS_STEP" | "CONTAINS" => (RelationType::HasStep, None),
        "NEXT" | "NEXT_STEP" => (RelationType::Next, None),
        "IMPLEMENTED_BY" | "IMPLEMENTS" => (RelationType::ImplementedBy, None),
        "ACCESSES" => (RelationType::Accesses, None),
        "READS" => (RelationType::Accesses, Some("read")),
        "WRITES" => (RelationType::Accesses, Some("write")),
        "USES" => (RelationType::Uses, None),
        "CALLS" => (RelationType::Calls, None),
        _ => return None,
    })
}

const ID_FIELDS: [(EntityType, &str); 4] = [
    (EntityType::Business, "process_id"),
    (EntityType::Step, "step_id"),
    (EntityType::Implementation, "impl_id"),
    (EntityType::DataResource, "resource_id"),
];

/// Lines of `apoc.export.json.all`: nodes and relationships. Lines of other labels and types
/// are skipped and counted in the second value, so an export of a larger database imports its
/// business part.
pub fn from_apoc_jsonl(text: &str) -> Result<(BusinessData, usize), BizError> {
    let mut data = BusinessData::default();
    let mut ids: HashMap<String, (EntityType, String)> = HashMap::new();
    let mut relationships = Vec::new();
    let mut skipped = 0;
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let at = |e: String| invalid(format!("line {}: {e}", n + 1));
        let item: Value = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
        match item["type"].as_str() {
            Some("node") => {
                let labels: Vec<String> =
                    serde_json::from_value(item["labels"].clone()).unwrap_or_default();
                let Some(kind) = entity_type(&labels) else {
                    skipped += 1;
                    continue;
                };
                let neo_id = item["id"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| item["id"].to_string());
                let mut properties: Map<String, Value> =
                    item["properties"].as_object().cloned().unwrap_or_default();
                let id_field = ID_FIELDS
                    .iter()
                    .find(|(k, _)| *k == kind)
                    .map(|(_, f)| *f)
                    .unwrap_or("id");
                let id = [id_field, "id"]
                    .iter()
                    .find_map(|f| {
                        properties.get(*f).and_then(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .or_else(|| v.as_i64().map(|i| i.to_string()))
                        })
                    })
                    .unwrap_or_else(|| format!("neo4j:{neo_id}"));
                properties.insert(id_field.to_string(), Value::String(id.clone()));
                // Neo4j keeps lists and numbers as they are; a text field may have been
                // stored as a number (an order_no as a string is read back as a number below).
                if let Some(order) = properties
                    .get("order_no")
                    .and_then(|v| v.as_str())
                    .and_then(|s| s.parse::<i64>().ok())
                {
                    properties.insert("order_no".into(), Value::from(order));
                }
                let value = Value::Object(properties);
                let bad =
                    |e: serde_json::Error| at(format!("{} node {neo_id}: {e}", kind.as_str()));
                match kind {
                    EntityType::Business => data
                        .businesses
                        .push(serde_json::from_value(value).map_err(bad)?),
                    EntityType::Step => {
                        data.steps.push(serde_json::from_value(value).map_err(bad)?)
                    }
                    EntityType::Implementation => data
                        .implementations
                        .push(serde_json::from_value(value).map_err(bad)?),
                    EntityType::DataResource => data
                        .data_resources
                        .push(serde_json::from_value(value).map_err(bad)?),
                }
                ids.insert(neo_id, (kind, id));
            }
            Some("relationship") => relationships.push((n, item)),
            _ => return Err(at("neither a node nor a relationship".into())),
        }
    }
    for (n, item) in relationships {
        let Some((kind, access)) = item["label"].as_str().and_then(relation_type) else {
            skipped += 1;
            continue;
        };
        let end = |side: &str| {
            let v = &item[side]["id"];
            let key = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            ids.get(&key).cloned()
        };
        let (Some(from), Some(to)) = (end("start"), end("end")) else {
            skipped += 1;
            continue;
        };
        let properties = item["properties"].as_object().cloned().unwrap_or_default();
        let text = |k: &str| {
            properties
                .get(k)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        if (from.0, to.0) != kind.ends() {
            return Err(invalid(format!(
                "line {}: a {} relationship joins a {} to a {}",
                n + 1,
                kind.as_str(),
                from.0.as_str(),
                to.0.as_str()
            )));
        }
        data.relations.push(Relation {
            kind,
            from: from.1,
            to: to.1,
            access_type: text("access_type").or(access.map(str::to_string)),
            access_pattern: text("access_pattern"),
        });
    }
    // A step that only a HAS_STEP relationship places takes its process from it.
    for r in data
        .relations
        .iter()
        .filter(|r| r.kind == RelationType::HasStep)
    {
        if let Some(step) = data
            .steps
            .iter_mut()
            .find(|s| s.step_id == r.to && s.process_id.is_empty())
        {
            step.process_id = r.from.clone();
        }
    }
    Ok((data, skipped))
}

/// CSV files of entities and relations, one table per file, each recognised by its header:
/// `process_id` (businesses), `step_id` (steps), `impl_id` (implementations), `resource_id`
/// (data resources), or `type,from,to` (relations). Columns are the JSON document's field names;
/// list columns (`aliases`) separate items with `;` or `、`, and `fields` is
/// `name:description;name:description`. Empty cells are absent fields.
pub fn from_csv(files: &[(String, String)]) -> Result<BusinessData, BizError> {
    let mut data = BusinessData::default();
    for (name, text) in files {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(text.trim_start_matches('\u{feff}').as_bytes());
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| invalid(format!("{name}: {e}")))?
            .iter()
            .map(|h| h.to_lowercase())
            .collect();
        let has = |column: &str| header.iter().any(|h| h == column);
        for (row, record) in reader.records().enumerate() {
            let record = record.map_err(|e| invalid(format!("{name}: {e}")))?;
            let mut object = Map::new();
            for (column, cell) in header.iter().zip(record.iter()) {
                if cell.is_empty() {
                    continue;
                }
                let value = match column.as_str() {
                    "aliases" => Value::from(list(cell)),
                    "fields" => Value::from(
                        list(cell)
                            .into_iter()
                            .map(|f| match f.split_once([':', '：']) {
                                Some((n, d)) => {
                                    serde_json::json!({"name": n.trim(), "description": d.trim()})
                                }
                                None => serde_json::json!({ "name": f }),
                            })
                            .collect::<Vec<_>>(),
                    ),
                    "order_no" => match cell.parse::<i64>() {
                        Ok(n) => Value::from(n),
                        Err(_) => {
                            return Err(invalid(format!(
                                "{name} row {}: order_no {cell:?} is not a number",
                                row + 2
                            )));
                        }
                    },
                    _ => Value::from(cell),
                };
                object.insert(column.clone(), value);
            }
            let object = Value::Object(object);
            let at = |e: serde_json::Error| invalid(format!("{name} row {}: {e}", row + 2));
            if has("type") && has("from") && has("to") {
                data.relations
                    .push(serde_json::from_value(object).map_err(at)?);
            } else if has("step_id") {
                data.steps.push(serde_json::from_value(object).map_err(at)?);
            } else if has("impl_id") {
                data.implementations
                    .push(serde_json::from_value(object).map_err(at)?);
            } else if has("resource_id") {
                data.data_resources
                    .push(serde_json::from_value(object).map_err(at)?);
            } else if has("process_id") {
                data.businesses
                    .push(serde_json::from_value(object).map_err(at)?);
            } else {
                return Err(invalid(format!(
                    "{name}: the header names no business graph table (process_id, step_id, impl_id, resource_id, or type,from,to)"
                )));
            }
        }
    }
    Ok(data)
}

fn list(cell: &str) -> Vec<String> {
    cell.split([';', '；', '、'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}
