//! The business graph in memory: entities by id, relations as an adjacency list walked in both
//! directions (a table's writers are as interesting as an API's tables), search texts filled in.
//!
//! Relations are kept directed, as imported, but neighbourhoods and paths ignore direction: "what
//! lies between 开通月卡 and user_profile" has no direction in a user's mind.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::error::{BizError, invalid};
use crate::model::*;
mod search_text;

/// A node: its type and its position in that type's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Node {
    /// Its type.
    pub kind: EntityType,
    /// Its position in its type's list.
    pub at: usize,
}

/// A business graph ready for the tools: entities by id, relations walkable in both directions.
#[derive(Debug)]
pub struct BusinessGraph {
    data: BusinessData,
    by_id: HashMap<(EntityType, String), Node>,
    /// Per node: (the other end, the relation's index, whether the relation leaves this node).
    adjacency: HashMap<Node, Vec<(Node, usize, bool)>>,
}

fn require(value: &str, what: &str) -> Result<(), BizError> {
    if value.trim().is_empty() {
        Err(invalid(format!("{what} must not be empty")))
    } else {
        Ok(())
    }
}

impl BusinessGraph {
    /// Checks `data` (unique, non-empty ids and names, named fields; relations between existing entities of
    /// the right types), adds the HAS_STEP relations that steps' `process_id` imply, and fills
    /// every empty `search_text` from the seed's templates.
    pub fn build(mut data: BusinessData) -> Result<BusinessGraph, BizError> {
        let mut by_id = HashMap::new();
        let mut add = |kind: EntityType, id: &str, name: &str, at: usize| -> Result<(), BizError> {
            require(id, &format!("a {} id", kind.as_str()))?;
            require(name, &format!("the name of {} {id}", kind.as_str()))?;
            if by_id
                .insert((kind, id.to_string()), Node { kind, at })
                .is_some()
            {
                return Err(invalid(format!(
                    "{} id {id:?} appears twice",
                    kind.as_str()
                )));
            }
            Ok(())
        };
        for (i, b) in data.businesses.iter().enumerate() {
            add(EntityType::Business, &b.process_id, &b.name, i)?;
        }
        for (i, s) in data.steps.iter().enumerate() {
            add(EntityType::Step, &s.step_id, &s.name, i)?;
        }
        for (i, m) in data.implementations.iter().enumerate() {
            add(EntityType::Implementation, &m.impl_id, &m.name, i)?;
        }
        for (i, r) in data.data_resources.iter().enumerate() {
            add(EntityType::DataResource, &r.resource_id, &r.name, i)?;
            for field in &r.fields {
                require(
                    &field.name,
                    &format!("a field name of data_resource {}", r.resource_id),
                )?;
            }
        }
        let implied: Vec<Relation> = data
            .steps
            .iter()
            .filter(|s| !s.process_id.is_empty())
            .filter(|s| {
                !data
                    .relations
                    .iter()
                    .any(|r| r.kind == RelationType::HasStep && r.to == s.step_id)
            })
            .map(|s| Relation {
                kind: RelationType::HasStep,
                from: s.process_id.clone(),
                to: s.step_id.clone(),
                access_type: None,
                access_pattern: None,
            })
            .collect();
        data.relations.extend(implied);
        let mut adjacency: HashMap<Node, Vec<(Node, usize, bool)>> = HashMap::new();
        for (i, r) in data.relations.iter().enumerate() {
            let (from_kind, to_kind) = r.kind.ends();
            let end = |kind: EntityType, id: &str| {
                by_id.get(&(kind, id.to_string())).copied().ok_or_else(|| {
                    invalid(format!(
                        "relation {} {} -> {}: no {} {id:?}",
                        r.kind.as_str(),
                        r.from,
                        r.to,
                        kind.as_str()
                    ))
                })
            };
            let (from, to) = (end(from_kind, &r.from)?, end(to_kind, &r.to)?);
            adjacency.entry(from).or_default().push((to, i, true));
            adjacency.entry(to).or_default().push((from, i, false));
        }
        for s in &data.steps {
            if !s.process_id.is_empty()
                && !by_id.contains_key(&(EntityType::Business, s.process_id.clone()))
            {
                return Err(invalid(format!(
                    "step {} belongs to process {:?}, which is not there",
                    s.step_id, s.process_id
                )));
            }
        }
        let mut graph = BusinessGraph {
            data,
            by_id,
            adjacency,
        };
        graph.fill_search_texts();
        Ok(graph)
    }

    fn fill_search_texts(&mut self) {
        let texts: Vec<(Node, String)> = self
            .by_id
            .values()
            .filter(|n| n.kind != EntityType::Step && self.search_text_of(**n).trim().is_empty())
            .map(|n| (*n, search_text::generate(self, *n)))
            .collect();
        for (node, text) in texts {
            match node.kind {
                EntityType::Business => self.data.businesses[node.at].search_text = text,
                EntityType::Implementation => self.data.implementations[node.at].search_text = text,
                EntityType::DataResource => self.data.data_resources[node.at].search_text = text,
                EntityType::Step => {}
            }
        }
    }

    /// The graph's entities and relations as imported.
    pub fn data(&self) -> &BusinessData {
        &self.data
    }

    /// The node of an entity, by type and id.
    pub fn node(&self, kind: EntityType, id: &str) -> Option<Node> {
        self.by_id.get(&(kind, id.to_string())).copied()
    }

    /// The node, or NotFound naming the type and id.
    pub fn require(&self, kind: EntityType, id: &str) -> Result<Node, BizError> {
        self.node(kind, id).ok_or_else(|| BizError::NotFound {
            kind: kind.as_str(),
            id: id.to_string(),
        })
    }

    /// A node's id.
    pub fn id_of(&self, node: Node) -> &str {
        match node.kind {
            EntityType::Business => &self.data.businesses[node.at].process_id,
            EntityType::Step => &self.data.steps[node.at].step_id,
            EntityType::Implementation => &self.data.implementations[node.at].impl_id,
            EntityType::DataResource => &self.data.data_resources[node.at].resource_id,
        }
    }

    /// A node's name.
    pub fn name_of(&self, node: Node) -> &str {
        match node.kind {
            EntityType::Business => &self.data.businesses[node.at].name,
            EntityType::Step => &self.data.steps[node.at].name,
            EntityType::Implementation => &self.data.implementations[node.at].name,
            EntityType::DataResource => &self.data.data_resources[node.at].name,
        }
    }

    /// A node's search text (empty for a step, which is never searched).
    pub fn search_text_of(&self, node: Node) -> &str {
        match node.kind {
            EntityType::Business => &self.data.businesses[node.at].search_text,
            EntityType::Implementation => &self.data.implementations[node.at].search_text,
            EntityType::DataResource => &self.data.data_resources[node.at].search_text,
            EntityType::Step => "",
        }
    }

    /// A relation by its index in the graph's list.
    pub fn relation(&self, index: usize) -> &Relation {
        &self.data.relations[index]
    }

    /// The relations at `node`: (the other end, the relation, whether it leaves `node`).
    pub fn edges(&self, node: Node) -> impl Iterator<Item = (Node, &Relation, bool)> {
        self.adjacency
            .get(&node)
            .into_iter()
            .flatten()
            .map(|(other, r, out)| (*other, &self.data.relations[*r], *out))
    }

    /// Nodes of `kind` related to `node` by `relation`, in import order.
    pub fn related(
        &self,
        node: Node,
        relation: RelationType,
        outgoing: bool,
    ) -> Vec<(Node, &Relation)> {
        self.edges(node)
            .filter(|(_, r, out)| r.kind == relation && *out == outgoing)
            .map(|(n, r, _)| (n, r))
            .collect()
    }

    /// A process's steps in order (`order_no`, then import order).
    pub fn steps_of(&self, process: Node) -> Vec<Node> {
        let mut steps: Vec<Node> = self
            .related(process, RelationType::HasStep, true)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        steps.sort_by_key(|n| (self.data.steps[n.at].order_no.unwrap_or(i64::MAX), n.at));
        steps.dedup();
        steps
    }

    /// The process a step belongs to.
    pub fn process_of(&self, step: Node) -> Option<Node> {
        self.related(step, RelationType::HasStep, false)
            .first()
            .map(|(n, _)| *n)
    }

    /// Every node within `depth` relations of `start` (itself excluded), with the relations
    /// walked to reach them, nearest first. `limit` bounds the nodes returned.
    pub fn neighbourhood(
        &self,
        start: Node,
        depth: usize,
        limit: usize,
    ) -> (Vec<(Node, usize)>, Vec<usize>) {
        let mut seen: HashSet<Node> = HashSet::from([start]);
        let mut queue = VecDeque::from([(start, 0usize)]);
        let (mut nodes, mut relations) = (Vec::new(), Vec::new());
        while let Some((node, d)) = queue.pop_front() {
            if d == depth {
                continue;
            }
            for (other, r, _) in self.adjacency.get(&node).into_iter().flatten() {
                if seen.insert(*other) {
                    if nodes.len() == limit {
                        return (nodes, relations);
                    }
                    nodes.push((*other, d + 1));
                    relations.push(*r);
                    queue.push_back((*other, d + 1));
                }
            }
        }
        (nodes, relations)
    }

    /// A shortest chain of relations from `from` to `to`, at most `max_hops` long, as the nodes
    /// along it and the relations between them; None when there is none that short.
    pub fn path(&self, from: Node, to: Node, max_hops: usize) -> Option<(Vec<Node>, Vec<usize>)> {
        let mut came_from: HashMap<Node, (Node, usize)> = HashMap::new();
        let mut queue = VecDeque::from([(from, 0usize)]);
        let mut seen = HashSet::from([from]);
        while let Some((node, d)) = queue.pop_front() {
            if node == to {
                let (mut nodes, mut relations) = (vec![to], Vec::new());
                let mut at = to;
                while let Some((prev, r)) = came_from.get(&at) {
                    nodes.push(*prev);
                    relations.push(*r);
                    at = *prev;
                }
                nodes.reverse();
                relations.reverse();
                return Some((nodes, relations));
            }
            if d == max_hops {
                continue;
            }
            // Neighbours in a fixed order, so the same graph always answers the same path.
            let mut next: Vec<&(Node, usize, bool)> =
                self.adjacency.get(&node).into_iter().flatten().collect();
            next.sort_by_key(|(n, r, _)| (*r, n.kind, n.at));
            for (other, r, _) in next {
                if seen.insert(*other) {
                    came_from.insert(*other, (node, *r));
                    queue.push_back((*other, d + 1));
                }
            }
        }
        None
    }
}
