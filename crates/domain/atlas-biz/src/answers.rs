//! The tools' outputs, shaped as seed 003's return structures (§4, §5). Optional fields the
//! graph does not have are left out rather than sent as null.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Candidates<T> {
    pub candidates: Vec<T>,
}

/// A search hit: the entity's fields as the contexts list them, its `search_text` (the seed's
/// "for debugging") and its score 0..1.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Candidate<T> {
    #[serde(flatten)]
    pub entity: T,
    pub search_text: String,
    pub score: f64,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeyStep {
    pub step_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeySystem {
    pub system: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BusinessSummary {
    pub process_id: String,
    pub name: String,
    pub summary_text: String,
    pub key_steps: Vec<KeyStep>,
    pub key_systems: Vec<KeySystem>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessRef {
    pub process_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationSummary {
    pub impl_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    pub summary_text: String,
    pub related_processes: Vec<ProcessRef>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FieldRef {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceSummary {
    pub resource_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    pub summary_text: String,
    pub main_fields: Vec<FieldRef>,
    pub typical_usages: String,
}

/// A process, step, implementation or resource as the contexts list it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessInfo {
    pub process_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepInfo {
    pub step_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_no: Option<i64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationInfo {
    pub impl_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_ref: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceInfo {
    pub resource_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A resource as reached through a relation that says how it is accessed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceAccess {
    pub resource_id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepContext {
    pub step: StepInfo,
    pub prev_steps: Vec<String>,
    pub next_steps: Vec<String>,
    pub implementations: Vec<ImplementationInfo>,
    pub data_resources: Vec<ResourceAccess>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AccessedResource {
    pub resource_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationInProcess {
    #[serde(flatten)]
    pub implementation: ImplementationInfo,
    pub accessed_resources: Vec<AccessedResource>,
    pub called_impls: Vec<String>,
    pub called_by_impls: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BusinessContext {
    pub process: ProcessInfo,
    pub steps: Vec<StepContext>,
    pub implementations: Vec<ImplementationInProcess>,
    pub resources: Vec<ResourceInfo>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessUsage {
    pub process_id: String,
    pub process_name: String,
    pub step_id: String,
    pub step_name: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplRef {
    pub impl_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Dependencies {
    pub calls: Vec<ImplRef>,
    pub called_by: Vec<ImplRef>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationContext {
    pub implementation: ImplementationInfo,
    pub process_usages: Vec<ProcessUsage>,
    pub dependencies: Dependencies,
    pub data_resources: Vec<ResourceAccess>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepRef {
    pub step_id: String,
    pub name: String,
    pub process_id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplResourceLink {
    pub impl_id: String,
    pub resource_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceContext {
    pub resource: ResourceInfo,
    pub businesses: Vec<ProcessRef>,
    pub steps: Vec<StepRef>,
    pub implementations: Vec<ImplRef>,
    pub impl_resource_links: Vec<ImplResourceLink>,
}

/// A node of a neighbourhood or a path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphNode {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub name: String,
    /// The type's identifying extras: a step's process and order, an implementation's system and
    /// URI, a resource's db and table; a neighbour's distance from the start.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphEdge {
    pub from: String,
    pub to: String,
    pub edge_type: &'static str,
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

/// get_neighbors: the start, its neighbours grouped by type, and the relations among them all.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Neighbors {
    pub center: GraphNode,
    pub depth: usize,
    pub neighbors: Grouped,
    pub edges: Vec<GraphEdge>,
    /// True when the neighbourhood was larger than an answer may be and was cut.
    pub truncated: bool,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Grouped {
    pub business: Vec<GraphNode>,
    pub step: Vec<GraphNode>,
    pub implementation: Vec<GraphNode>,
    pub data_resource: Vec<GraphNode>,
}

/// get_path_between_entities. `found` and `hops` say at a glance whether there is a path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntityPath {
    pub found: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<usize>,
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
