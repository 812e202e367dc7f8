//! Seed 003's tools over one immutable [`BizSnapshot`]: search (§4), summaries and contexts
//! (§5.1–5.3), neighbours and paths (§5.4). Every answer is bounded: lists stop at
//! [`MAX_LIST`] entries and neighbourhoods at [`MAX_NEIGHBOURS`] nodes, so no tool can hand a
//! model an answer larger than its context.

use std::collections::HashSet;
use std::sync::Arc;

use atlas_search::kept::Kept;
use atlas_text::Embedder;
use serde_json::{Map, Value, json};

use crate::answers::*;
use crate::error::BizError;
use crate::graph::{BusinessGraph, Node};
use crate::model::{EntityType, Relation, RelationType};
use crate::requests::*;
use crate::search::SearchIndex;

/// The most entries any list in an answer holds.
pub const MAX_LIST: usize = 100;
/// The most neighbours get_neighbors returns.
pub const MAX_NEIGHBOURS: usize = 150;

/// A business graph with its search index: what the tools read. Built whole and never changed.
pub struct BizSnapshot {
    graph: BusinessGraph,
    index: SearchIndex,
    embedder: Arc<dyn Embedder>,
}

fn push_unique<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) && list.len() < MAX_LIST {
        list.push(item);
    }
}

fn matches_loosely(wanted: &str, value: Option<&str>) -> bool {
    let wanted = wanted.trim().to_lowercase();
    wanted.is_empty() || value.is_some_and(|v| v.to_lowercase().contains(&wanted))
}

/// Neighbours with the relation that joins them.
type Related<'a> = Vec<(Node, &'a Relation)>;

impl BizSnapshot {
    /// Builds the tools over a graph: fills in search texts and embeds every searchable entity
    /// once.
    pub fn build(graph: BusinessGraph, embedder: Arc<dyn Embedder>) -> Result<Self, BizError> {
        Ok(Self::build_kept(graph, embedder, Kept::default(), false)?.0)
    }

    /// [`BizSnapshot::build`] taking the vectors `kept` holds for the same texts instead of
    /// embedding them again (or, with `defer`, leaving the rest to their words); also how many
    /// entities `kept` lacked.
    pub(crate) fn build_kept(
        graph: BusinessGraph,
        embedder: Arc<dyn Embedder>,
        kept: Kept,
        defer: bool,
    ) -> Result<(Self, usize), BizError> {
        let (index, embedded) = SearchIndex::build(&graph, embedder.as_ref(), kept, defer)?;
        let snapshot = BizSnapshot {
            graph,
            index,
            embedder,
        };
        Ok((snapshot, embedded))
    }

    /// Every entity's vectors as [`atlas_search::kept`] keeps them.
    pub(crate) fn kept_vectors(&self) -> Vec<u8> {
        self.index.kept_bytes(&self.graph, &self.embedder.name())
    }

    /// The graph the tools answer from.
    pub fn graph(&self) -> &BusinessGraph {
        &self.graph
    }

    fn search(
        &self,
        kind: EntityType,
        query: &str,
        admits: &dyn Fn(Node) -> bool,
        limit: usize,
    ) -> Result<Vec<(Node, f64)>, BizError> {
        self.index
            .search(self.embedder.as_ref(), kind, query, admits, limit)
    }

    /// search_businesses: processes by meaning and by name, best first.
    pub fn search_businesses(
        &self,
        r: &SearchBusinessesRequest,
    ) -> Result<Candidates<Candidate<ProcessInfo>>, BizError> {
        let limit = r.check()?;
        let found = self.search(EntityType::Business, &r.query, &|_| true, limit)?;
        Ok(self.candidates(found, |n| self.process_info(n)))
    }

    /// search_implementations: APIs, methods and jobs by meaning, by name and by URI, best first.
    pub fn search_implementations(
        &self,
        r: &SearchImplementationsRequest,
    ) -> Result<Candidates<Candidate<ImplementationInfo>>, BizError> {
        let limit = r.check()?;
        let data = self.graph.data();
        let system = r.system.clone().unwrap_or_default();
        let uri = r.uri_contains.clone().unwrap_or_default();
        let admits = |n: Node| {
            let m = &data.implementations[n.at];
            matches_loosely(&system, m.system.as_deref()) && matches_loosely(&uri, m.uri.as_deref())
        };
        let found = self.search(EntityType::Implementation, &r.query, &admits, limit)?;
        Ok(self.candidates(found, |n| self.implementation_info(n)))
    }

    /// search_data_resources: tables and other data by meaning, by name and by table or field name,
    /// best first.
    pub fn search_data_resources(
        &self,
        r: &SearchDataResourcesRequest,
    ) -> Result<Candidates<Candidate<ResourceInfo>>, BizError> {
        let limit = r.check()?;
        let data = self.graph.data();
        let db = r.db.clone().unwrap_or_default();
        let admits = |n: Node| matches_loosely(&db, data.data_resources[n.at].db.as_deref());
        let found = self.search(EntityType::DataResource, &r.query, &admits, limit)?;
        Ok(self.candidates(found, |n| self.resource_info(n)))
    }

    fn candidates<T>(
        &self,
        found: Vec<(Node, f64)>,
        entity: impl Fn(Node) -> T,
    ) -> Candidates<Candidate<T>> {
        Candidates {
            candidates: found
                .into_iter()
                .map(|(n, score)| Candidate {
                    entity: entity(n),
                    search_text: self.graph.search_text_of(n).to_string(),
                    score: round(score),
                })
                .collect(),
        }
    }

    // ---- the pieces the summaries and contexts share ----

    fn implementation_info(&self, n: Node) -> ImplementationInfo {
        let m = &self.graph.data().implementations[n.at];
        ImplementationInfo {
            impl_id: m.impl_id.clone(),
            name: m.name.clone(),
            system: m.system.clone(),
            uri: m.uri.clone(),
            kind: m.kind.clone(),
            description: m.description.clone(),
            code_ref: m.code_ref.clone(),
        }
    }

    fn impl_ref(&self, n: Node) -> ImplRef {
        let m = &self.graph.data().implementations[n.at];
        ImplRef {
            impl_id: m.impl_id.clone(),
            name: Some(m.name.clone()),
            system: m.system.clone(),
        }
    }

    fn resource_info(&self, n: Node) -> ResourceInfo {
        let d = &self.graph.data().data_resources[n.at];
        ResourceInfo {
            resource_id: d.resource_id.clone(),
            name: d.name.clone(),
            db: d.db.clone(),
            table: d.table.clone(),
            description: d.description.clone(),
        }
    }

    fn resource_access(&self, n: Node, r: &Relation) -> ResourceAccess {
        ResourceAccess {
            resource_id: self.graph.id_of(n).to_string(),
            name: self.graph.name_of(n).to_string(),
            access_type: r.access_type.clone(),
            access_pattern: r.access_pattern.clone(),
        }
    }

    fn process_info(&self, n: Node) -> ProcessInfo {
        let b = &self.graph.data().businesses[n.at];
        ProcessInfo {
            process_id: b.process_id.clone(),
            name: b.name.clone(),
            description: b.description.clone(),
        }
    }

    fn process_ref(&self, n: Node) -> ProcessRef {
        ProcessRef {
            process_id: self.graph.id_of(n).to_string(),
            name: self.graph.name_of(n).to_string(),
        }
    }

    fn ids(&self, nodes: impl IntoIterator<Item = Node>) -> Vec<String> {
        let mut out = Vec::new();
        for n in nodes {
            push_unique(&mut out, self.graph.id_of(n).to_string());
        }
        out
    }

    /// The implementations of a process's steps, in step order.
    fn implementations_of(&self, steps: &[Node]) -> Vec<Node> {
        let mut out = Vec::new();
        for s in steps {
            for (m, _) in self.graph.related(*s, RelationType::ImplementedBy, true) {
                push_unique(&mut out, m);
            }
        }
        out
    }

    /// The steps that an implementation implements, with their processes.
    fn usages_of(&self, implementation: Node) -> Vec<(Node, Option<Node>)> {
        self.graph
            .related(implementation, RelationType::ImplementedBy, false)
            .into_iter()
            .map(|(s, _)| (s, self.graph.process_of(s)))
            .take(MAX_LIST)
            .collect()
    }

    // ---- §5.1 business ----

    /// summarize_business: a process in a few sentences with its key steps and systems.
    pub fn summarize_business(&self, r: &ProcessRequest) -> Result<BusinessSummary, BizError> {
        let p = self.graph.require(EntityType::Business, &r.process_id)?;
        let data = self.graph.data();
        let b = &data.businesses[p.at];
        let steps = self.graph.steps_of(p);
        let mut key_systems: Vec<(String, Vec<String>)> = Vec::new();
        for s in &steps {
            for (m, _) in self.graph.related(*s, RelationType::ImplementedBy, true) {
                let Some(system) = data.implementations[m.at].system.clone() else {
                    continue;
                };
                let step_name = data.steps[s.at].name.clone();
                match key_systems.iter_mut().find(|(name, _)| *name == system) {
                    Some((_, roles)) => push_unique(roles, step_name),
                    None => key_systems.push((system, vec![step_name])),
                }
            }
        }
        let tables = self.resources_of_process(&steps);
        let mut summary = b.name.to_string();
        if !b.aliases.is_empty() {
            summary += &format!("（也叫{}）", b.aliases.join("、"));
        }
        if let Some(d) = b.description.as_deref().filter(|d| !d.is_empty()) {
            summary += &format!("：{}", d.trim_end_matches('。'));
        }
        summary += "。";
        if !steps.is_empty() {
            let names: Vec<&str> = steps.iter().map(|s| self.graph.name_of(*s)).collect();
            summary += &format!("共 {} 个步骤：{}。", steps.len(), names.join(" → "));
        }
        if !key_systems.is_empty() {
            let systems: Vec<&str> = key_systems.iter().map(|(s, _)| s.as_str()).collect();
            summary += &format!("涉及系统：{}。", systems.join("、"));
        }
        if !tables.is_empty() {
            let names: Vec<String> = tables
                .iter()
                .map(|n| table_label(&self.graph, *n))
                .collect();
            summary += &format!("读写 {} 张表：{}。", tables.len(), names.join("、"));
        }
        Ok(BusinessSummary {
            process_id: b.process_id.clone(),
            name: b.name.clone(),
            summary_text: summary,
            key_steps: steps
                .iter()
                .take(MAX_LIST)
                .map(|s| {
                    let step = &data.steps[s.at];
                    KeyStep {
                        step_id: step.step_id.clone(),
                        name: step.name.clone(),
                        brief: step.description.clone(),
                    }
                })
                .collect(),
            key_systems: key_systems
                .into_iter()
                .map(|(system, roles)| KeySystem {
                    system,
                    role: Some(format!("实现步骤：{}", roles.join("、"))),
                })
                .collect(),
        })
    }

    /// Every resource a process touches: those its steps use and those its implementations access.
    fn resources_of_process(&self, steps: &[Node]) -> Vec<Node> {
        let mut out = Vec::new();
        for s in steps {
            for (d, _) in self.graph.related(*s, RelationType::Uses, true) {
                push_unique(&mut out, d);
            }
        }
        for m in self.implementations_of(steps) {
            for (d, _) in self.graph.related(m, RelationType::Accesses, true) {
                push_unique(&mut out, d);
            }
        }
        out
    }

    /// get_business_context_for_chat: a process with its steps, implementations and data, for an
    /// LLM.
    pub fn get_business_context_for_chat(
        &self,
        r: &ProcessRequest,
    ) -> Result<BusinessContext, BizError> {
        let p = self.graph.require(EntityType::Business, &r.process_id)?;
        let data = self.graph.data();
        let steps = self.graph.steps_of(p);
        let step_contexts = steps
            .iter()
            .take(MAX_LIST)
            .map(|s| {
                let step = &data.steps[s.at];
                StepContext {
                    step: StepInfo {
                        step_id: step.step_id.clone(),
                        name: step.name.clone(),
                        description: step.description.clone(),
                        step_type: step.step_type.clone(),
                        order_no: step.order_no,
                    },
                    prev_steps: self.ids(
                        self.graph
                            .related(*s, RelationType::Next, false)
                            .into_iter()
                            .map(|(n, _)| n),
                    ),
                    next_steps: self.ids(
                        self.graph
                            .related(*s, RelationType::Next, true)
                            .into_iter()
                            .map(|(n, _)| n),
                    ),
                    implementations: self
                        .graph
                        .related(*s, RelationType::ImplementedBy, true)
                        .into_iter()
                        .take(MAX_LIST)
                        .map(|(m, _)| self.implementation_info(m))
                        .collect(),
                    data_resources: self
                        .graph
                        .related(*s, RelationType::Uses, true)
                        .into_iter()
                        .take(MAX_LIST)
                        .map(|(d, rel)| self.resource_access(d, rel))
                        .collect(),
                }
            })
            .collect();
        let implementations = self
            .implementations_of(&steps)
            .into_iter()
            .map(|m| ImplementationInProcess {
                implementation: self.implementation_info(m),
                accessed_resources: self
                    .graph
                    .related(m, RelationType::Accesses, true)
                    .into_iter()
                    .take(MAX_LIST)
                    .map(|(d, rel)| AccessedResource {
                        resource_id: self.graph.id_of(d).to_string(),
                        access_type: rel.access_type.clone(),
                        access_pattern: rel.access_pattern.clone(),
                    })
                    .collect(),
                called_impls: self.ids(
                    self.graph
                        .related(m, RelationType::Calls, true)
                        .into_iter()
                        .map(|(n, _)| n),
                ),
                called_by_impls: self.ids(
                    self.graph
                        .related(m, RelationType::Calls, false)
                        .into_iter()
                        .map(|(n, _)| n),
                ),
            })
            .collect();
        Ok(BusinessContext {
            process: self.process_info(p),
            steps: step_contexts,
            implementations,
            resources: self
                .resources_of_process(&steps)
                .into_iter()
                .map(|d| self.resource_info(d))
                .collect(),
        })
    }

    // ---- §5.2 implementation ----

    /// summarize_implementation: an implementation in a few sentences with the processes that use
    /// it.
    pub fn summarize_implementation(
        &self,
        r: &ImplementationRequest,
    ) -> Result<ImplementationSummary, BizError> {
        let m = self.graph.require(EntityType::Implementation, &r.impl_id)?;
        let i = &self.graph.data().implementations[m.at];
        let mut processes = Vec::new();
        for (_, p) in self.usages_of(m) {
            if let Some(p) = p {
                push_unique(&mut processes, p);
            }
        }
        let mut summary = i.name.clone();
        let mut facts = Vec::new();
        if let Some(kind) = &i.kind {
            facts.push(kind.clone());
        }
        if let Some(system) = &i.system {
            facts.push(format!("属于 {system}"));
        }
        if let Some(uri) = &i.uri {
            facts.push(format!("URI {uri}"));
        }
        if !facts.is_empty() {
            summary += &format!("（{}）", facts.join("，"));
        }
        summary += "。";
        if let Some(d) = i.description.as_deref().filter(|d| !d.is_empty()) {
            summary += &format!("用途：{}。", d.trim_end_matches('。'));
        }
        if !processes.is_empty() {
            let names: Vec<&str> = processes.iter().map(|p| self.graph.name_of(*p)).collect();
            summary += &format!("用于流程：{}。", names.join("、"));
        }
        let accesses = self.graph.related(m, RelationType::Accesses, true);
        if !accesses.is_empty() {
            let parts: Vec<String> = accesses
                .iter()
                .map(|(d, rel)| access_label(&self.graph, *d, rel))
                .collect();
            summary += &format!("数据：{}。", parts.join("、"));
        }
        let calls = self.graph.related(m, RelationType::Calls, true);
        if !calls.is_empty() {
            let names: Vec<&str> = calls.iter().map(|(n, _)| self.graph.name_of(*n)).collect();
            summary += &format!("调用：{}。", names.join("、"));
        }
        Ok(ImplementationSummary {
            impl_id: i.impl_id.clone(),
            name: i.name.clone(),
            system: i.system.clone(),
            uri: i.uri.clone(),
            summary_text: summary,
            related_processes: processes.into_iter().map(|p| self.process_ref(p)).collect(),
        })
    }

    /// get_implementation_context_for_chat: an implementation with its uses, calls and data, for an
    /// LLM.
    pub fn get_implementation_context_for_chat(
        &self,
        r: &ImplementationRequest,
    ) -> Result<ImplementationContext, BizError> {
        let m = self.graph.require(EntityType::Implementation, &r.impl_id)?;
        let data = self.graph.data();
        let refs = |outgoing: bool| -> Vec<ImplRef> {
            self.graph
                .related(m, RelationType::Calls, outgoing)
                .into_iter()
                .take(MAX_LIST)
                .map(|(n, _)| self.impl_ref(n))
                .collect()
        };
        Ok(ImplementationContext {
            implementation: self.implementation_info(m),
            process_usages: self
                .usages_of(m)
                .into_iter()
                .map(|(s, p)| ProcessUsage {
                    process_id: p
                        .map(|p| self.graph.id_of(p).to_string())
                        .unwrap_or_default(),
                    process_name: p
                        .map(|p| self.graph.name_of(p).to_string())
                        .unwrap_or_default(),
                    step_id: data.steps[s.at].step_id.clone(),
                    step_name: data.steps[s.at].name.clone(),
                })
                .collect(),
            dependencies: Dependencies {
                calls: refs(true),
                called_by: refs(false),
            },
            data_resources: self
                .graph
                .related(m, RelationType::Accesses, true)
                .into_iter()
                .take(MAX_LIST)
                .map(|(d, rel)| self.resource_access(d, rel))
                .collect(),
        })
    }

    // ---- §5.3 data resource ----

    /// Who touches a resource: (implementation, relation) pairs and (step, relation) pairs.
    fn users_of(&self, d: Node) -> (Related<'_>, Related<'_>) {
        let mut by_impl = self.graph.related(d, RelationType::Accesses, false);
        let mut by_step = self.graph.related(d, RelationType::Uses, false);
        by_impl.truncate(MAX_LIST);
        by_step.truncate(MAX_LIST);
        (by_impl, by_step)
    }

    /// summarize_data_resource: a data resource in a few sentences with its fields and uses.
    pub fn summarize_data_resource(
        &self,
        r: &ResourceRequest,
    ) -> Result<ResourceSummary, BizError> {
        let d = self
            .graph
            .require(EntityType::DataResource, &r.resource_id)?;
        let res = &self.graph.data().data_resources[d.at];
        let (by_impl, _) = self.users_of(d);
        let mut summary = table_label(&self.graph, d);
        if !res.aliases.is_empty() {
            summary += &format!("，也叫{}", res.aliases.join("、"));
        }
        summary += "。";
        if let Some(desc) = res.description.as_deref().filter(|d| !d.is_empty()) {
            summary += &format!("用途：{}。", desc.trim_end_matches('。'));
        }
        let (writers, readers): (Vec<_>, Vec<_>) = by_impl
            .iter()
            .partition(|(_, rel)| is_write(rel.access_type.as_deref()));
        let names = |list: &[&(Node, &Relation)]| -> String {
            let mut out: Vec<String> = Vec::new();
            for (n, _) in list {
                push_unique(&mut out, implementation_label(&self.graph, *n));
            }
            out.join("、")
        };
        let mut usages = Vec::new();
        if !writers.is_empty() {
            usages.push(format!("写入方：{}", names(&writers)));
        }
        if !readers.is_empty() {
            usages.push(format!("读取方：{}", names(&readers)));
        }
        let typical_usages = usages.join("；");
        if !typical_usages.is_empty() {
            summary += &format!("{typical_usages}。");
        }
        Ok(ResourceSummary {
            resource_id: res.resource_id.clone(),
            name: res.name.clone(),
            db: res.db.clone(),
            table: res.table.clone(),
            summary_text: summary,
            main_fields: res
                .fields
                .iter()
                .take(MAX_LIST)
                .map(|f| FieldRef {
                    name: f.name.clone(),
                    description: f.description.clone(),
                })
                .collect(),
            typical_usages,
        })
    }

    /// get_resource_context_for_chat: a data resource with the processes, steps and implementations
    /// that reach it, for an LLM.
    pub fn get_resource_context_for_chat(
        &self,
        r: &ResourceRequest,
    ) -> Result<ResourceContext, BizError> {
        let d = self
            .graph
            .require(EntityType::DataResource, &r.resource_id)?;
        let data = self.graph.data();
        let (by_impl, by_step) = self.users_of(d);
        let mut steps: Vec<Node> = by_step.iter().map(|(s, _)| *s).collect();
        for (m, _) in &by_impl {
            for (s, _) in self.usages_of(*m) {
                push_unique(&mut steps, s);
            }
        }
        let mut businesses = Vec::new();
        for s in &steps {
            if let Some(p) = self.graph.process_of(*s) {
                push_unique(&mut businesses, p);
            }
        }
        let mut implementations = Vec::new();
        for (m, _) in &by_impl {
            push_unique(&mut implementations, *m);
        }
        Ok(ResourceContext {
            resource: self.resource_info(d),
            businesses: businesses
                .into_iter()
                .map(|p| self.process_ref(p))
                .collect(),
            steps: steps
                .into_iter()
                .map(|s| StepRef {
                    step_id: data.steps[s.at].step_id.clone(),
                    name: data.steps[s.at].name.clone(),
                    process_id: self
                        .graph
                        .process_of(s)
                        .map(|p| self.graph.id_of(p).to_string())
                        .unwrap_or_else(|| data.steps[s.at].process_id.clone()),
                })
                .collect(),
            implementations: implementations
                .into_iter()
                .map(|m| self.impl_ref(m))
                .collect(),
            impl_resource_links: by_impl
                .iter()
                .map(|(m, rel)| ImplResourceLink {
                    impl_id: self.graph.id_of(*m).to_string(),
                    resource_id: self.graph.id_of(d).to_string(),
                    access_type: rel.access_type.clone(),
                    access_pattern: rel.access_pattern.clone(),
                })
                .collect(),
        })
    }

    // ---- §5.4 graph walks ----

    fn graph_node(&self, n: Node) -> GraphNode {
        let data = self.graph.data();
        let mut extra = Map::new();
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(v) = value {
                extra.insert(key.into(), v);
            }
        };
        match n.kind {
            EntityType::Business => {}
            EntityType::Step => {
                let s = &data.steps[n.at];
                let process = self.graph.process_of(n).map(|p| self.graph.id_of(p));
                put("process_id", process.map(|p| json!(p)));
                put("order_no", s.order_no.map(|o| json!(o)));
            }
            EntityType::Implementation => {
                let m = &data.implementations[n.at];
                put("system", m.system.as_ref().map(|v| json!(v)));
                put("uri", m.uri.as_ref().map(|v| json!(v)));
            }
            EntityType::DataResource => {
                let r = &data.data_resources[n.at];
                put("db", r.db.as_ref().map(|v| json!(v)));
                put("table", r.table.as_ref().map(|v| json!(v)));
            }
        }
        GraphNode {
            id: self.graph.id_of(n).to_string(),
            kind: n.kind,
            name: self.graph.name_of(n).to_string(),
            extra,
        }
    }

    fn graph_edge(&self, r: &Relation) -> GraphEdge {
        let mut extra = Map::new();
        if let Some(t) = &r.access_type {
            extra.insert("access_type".into(), json!(t));
        }
        if let Some(p) = &r.access_pattern {
            extra.insert("access_pattern".into(), json!(p));
        }
        GraphEdge {
            from: r.from.clone(),
            to: r.to.clone(),
            edge_type: r.kind,
            extra,
        }
    }

    /// get_neighbors: the entities within a few relations of one, grouped by type, and the
    /// relations among them.
    pub fn get_neighbors(&self, r: &NeighborsRequest) -> Result<Neighbors, BizError> {
        let depth = r.check()?;
        let start = self.graph.require(r.node_type.into(), &r.node_id)?;
        let wanted = |kind: EntityType| {
            r.include_types
                .as_ref()
                .is_none_or(|t| t.is_empty() || t.contains(&kind))
        };
        // The walk itself is bounded too: a hub at depth 3 can reach a whole graph.
        let (reached, _) = self.graph.neighbourhood(start, depth, MAX_NEIGHBOURS * 50);
        let mut grouped = Grouped::default();
        let mut shown: HashSet<Node> = HashSet::from([start]);
        let mut truncated = false;
        for (n, distance) in reached {
            if !wanted(n.kind) {
                continue;
            }
            if shown.len() > MAX_NEIGHBOURS {
                truncated = true;
                break;
            }
            shown.insert(n);
            let mut node = self.graph_node(n);
            node.extra.insert("distance".into(), json!(distance));
            match n.kind {
                EntityType::Business => grouped.business.push(node),
                EntityType::Step => grouped.step.push(node),
                EntityType::Implementation => grouped.implementation.push(node),
                EntityType::DataResource => grouped.data_resource.push(node),
            }
        }
        // The relations among what is shown (the centre included), each once.
        let mut edges = Vec::new();
        let mut seen_relations = HashSet::new();
        'nodes: for n in &shown {
            for (other, rel, _) in self.graph.edges(*n) {
                if shown.contains(&other) && seen_relations.insert(rel as *const Relation) {
                    if edges.len() == MAX_NEIGHBOURS * 2 {
                        truncated = true;
                        break 'nodes;
                    }
                    edges.push(self.graph_edge(rel));
                }
            }
        }
        edges.sort_by(|a, b| {
            (&a.from, &a.to, a.edge_type.as_str()).cmp(&(&b.from, &b.to, b.edge_type.as_str()))
        });
        Ok(Neighbors {
            center: self.graph_node(start),
            depth,
            neighbors: grouped,
            edges,
            truncated,
        })
    }

    /// get_path_between_entities: a shortest path between two entities, relations walked either
    /// way.
    pub fn get_path_between_entities(&self, r: &PathRequest) -> Result<EntityPath, BizError> {
        let max_hops = r.check()?;
        let from = self.graph.require(r.start_type.into(), &r.start_id)?;
        let to = self.graph.require(r.end_type.into(), &r.end_id)?;
        Ok(match self.graph.path(from, to, max_hops) {
            Some((nodes, relations)) => EntityPath {
                found: true,
                hops: Some(relations.len()),
                nodes: nodes.into_iter().map(|n| self.graph_node(n)).collect(),
                edges: relations
                    .into_iter()
                    .map(|i| self.graph_edge(self.graph.relation(i)))
                    .collect(),
                message: None,
            },
            None => EntityPath {
                found: false,
                hops: None,
                nodes: Vec::new(),
                edges: Vec::new(),
                message: Some(format!(
                    "no path of at most {max_hops} relations between {} and {}",
                    r.start_id, r.end_id
                )),
            },
        })
    }
}

fn round(score: f64) -> f64 {
    (score * 10_000.0).round() / 10_000.0
}

/// "user_profile（用户资料表，user_db）".
fn table_label(graph: &BusinessGraph, d: Node) -> String {
    let r = &graph.data().data_resources[d.at];
    match (&r.table, &r.db) {
        (Some(t), Some(db)) => format!("{t}（{}，{db}）", r.name),
        (Some(t), None) => format!("{t}（{}）", r.name),
        (None, Some(db)) => format!("{}（{db}）", r.name),
        (None, None) => r.name.clone(),
    }
}

fn implementation_label(graph: &BusinessGraph, m: Node) -> String {
    let i = &graph.data().implementations[m.at];
    match &i.uri {
        Some(uri) => format!("{}（{uri}）", i.name),
        None => i.name.clone(),
    }
}

fn access_label(graph: &BusinessGraph, d: Node, rel: &Relation) -> String {
    let verb = match rel.access_type.as_deref() {
        Some(t) if is_write(Some(t)) => "写",
        Some(_) => "读",
        None => "访问",
    };
    let table = graph.data().data_resources[d.at]
        .table
        .clone()
        .unwrap_or_else(|| graph.name_of(d).to_string());
    format!("{verb} {table}")
}

/// Whether an access type writes: write, insert, update, delete, upsert, or their Chinese names.
pub fn is_write(access_type: Option<&str>) -> bool {
    access_type.is_some_and(|t| {
        let t = t.to_lowercase();
        [
            "write", "insert", "update", "delete", "upsert", "写", "增", "删", "改",
        ]
        .iter()
        .any(|w| t.contains(w))
    })
}
