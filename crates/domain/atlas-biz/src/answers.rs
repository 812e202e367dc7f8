//! The tools' outputs, shaped as seed 003's return structures (§4, §5). Optional fields the
//! graph does not have are left out rather than sent as null.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A search tool's answer: its hits, best first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Candidates<T> {
    /// The hits, best first.
    pub candidates: Vec<T>,
}

/// A search hit: the entity's fields as the contexts list them, its `search_text` (the seed's
/// "for debugging") and its score 0..1.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Candidate<T> {
    /// The entity, its fields flattened into the hit.
    #[serde(flatten)]
    pub entity: T,
    /// The text search matches by meaning.
    pub search_text: String,
    /// How well it matches, 0..1.
    pub score: f64,
}

/// A step as a business summary lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeyStep {
    /// The step's id.
    pub step_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// A short description of the step, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<String>,
}

/// A system that takes part in a process, as a business summary lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeySystem {
    /// The system's name (a service, an application).
    pub system: String,
    /// What the system does in the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// summarize_business: a process in a few sentences, its key steps and the systems that carry them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BusinessSummary {
    /// The process's id.
    pub process_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// A few sentences an LLM can quote, made from the graph.
    pub summary_text: String,
    /// The process's steps in their order.
    pub key_steps: Vec<KeyStep>,
    /// The systems whose implementations carry the process's steps.
    pub key_systems: Vec<KeySystem>,
}

/// A process named by id and name.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessRef {
    /// The process's id.
    pub process_id: String,
    /// Its name as the graph gives it.
    pub name: String,
}

/// summarize_implementation: an implementation in a few sentences and the processes that use it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationSummary {
    /// The implementation's id.
    pub impl_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// The system it belongs to (a service, an application), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Its address: an HTTP path, an RPC method, a job's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// A few sentences an LLM can quote, made from the graph.
    pub summary_text: String,
    /// The processes whose steps it implements.
    pub related_processes: Vec<ProcessRef>,
}

/// A field of a data resource as a summary lists it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FieldRef {
    /// Its name as the graph gives it.
    pub name: String,
    /// Its description, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// summarize_data_resource: a data resource in a few sentences, its main fields and how it is used.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceSummary {
    /// The data resource's id.
    pub resource_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// The database it lives in, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    /// Its table name, when it is a table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// A few sentences an LLM can quote, made from the graph.
    pub summary_text: String,
    /// Its fields that carry meaning.
    pub main_fields: Vec<FieldRef>,
    /// How processes and implementations use it, in a sentence.
    pub typical_usages: String,
}

/// A process, step, implementation or resource as the contexts list it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessInfo {
    /// The process's id.
    pub process_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// Its description, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A step as the contexts list it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepInfo {
    /// The step's id.
    pub step_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// Its description, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What kind of step it is (a user action, a system check…), when the graph says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_type: Option<String>,
    /// Its position in its process, when the graph gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_no: Option<i64>,
}

/// An implementation as the contexts list it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationInfo {
    /// The implementation's id.
    pub impl_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// The system it belongs to (a service, an application), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Its address: an HTTP path, an RPC method, a job's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Its type as the source says it (http_api, rpc, job, mq_consumer…).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Its description, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where its code lives (a class, a file), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_ref: Option<String>,
}

/// A data resource as the contexts list it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceInfo {
    /// The data resource's id.
    pub resource_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// The database it lives in, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub db: Option<String>,
    /// Its table name, when it is a table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Its description, when the graph has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A resource as reached through a relation that says how it is accessed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceAccess {
    /// The data resource's id.
    pub resource_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// read, write, read_write… as the relation says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    /// How it is accessed, in words ("按 user_id 点查").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

/// A step of a business context with its neighbours in the process, its implementations and the
/// data they reach.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepContext {
    /// The step.
    pub step: StepInfo,
    /// The ids of the steps just before it.
    pub prev_steps: Vec<String>,
    /// The ids of the steps just after it.
    pub next_steps: Vec<String>,
    /// The implementations that carry the step.
    pub implementations: Vec<ImplementationInfo>,
    /// The data resources the step reaches, with how.
    pub data_resources: Vec<ResourceAccess>,
}

/// A data resource an implementation reaches, by id, with how it reaches it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AccessedResource {
    /// The data resource's id.
    pub resource_id: String,
    /// read, write, read_write… as the relation says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    /// How it is accessed, in words ("按 user_id 点查").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

/// An implementation within a business context, with the resources it reaches and the
/// implementations it calls or is called by.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationInProcess {
    /// The implementation.
    #[serde(flatten)]
    pub implementation: ImplementationInfo,
    /// The data resources it reaches.
    pub accessed_resources: Vec<AccessedResource>,
    /// The ids of the implementations it calls.
    pub called_impls: Vec<String>,
    /// The ids of the implementations that call it.
    pub called_by_impls: Vec<String>,
}

/// get_business_context_for_chat: a process with its steps, implementations and data resources, for
/// an LLM to read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BusinessContext {
    /// The process.
    pub process: ProcessInfo,
    /// Its steps in their order, each with its context.
    pub steps: Vec<StepContext>,
    /// The implementations of its steps, with what they reach and call.
    pub implementations: Vec<ImplementationInProcess>,
    /// The data resources its implementations reach.
    pub resources: Vec<ResourceInfo>,
}

/// Where a process uses an implementation: the process and the step.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessUsage {
    /// The process's id.
    pub process_id: String,
    /// The process's name.
    pub process_name: String,
    /// The step's id.
    pub step_id: String,
    /// The step's name.
    pub step_name: String,
}

/// An implementation named by id, with its name and system when the graph has them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplRef {
    /// The implementation's id.
    pub impl_id: String,
    /// Its name as the graph gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The system it belongs to (a service, an application), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// The implementations one implementation calls and is called by.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Dependencies {
    /// What it calls.
    pub calls: Vec<ImplRef>,
    /// What calls it.
    pub called_by: Vec<ImplRef>,
}

/// get_implementation_context_for_chat: an implementation, the processes that use it, its calls and
/// the data it reaches.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplementationContext {
    /// The implementation.
    pub implementation: ImplementationInfo,
    /// The processes and steps that use it.
    pub process_usages: Vec<ProcessUsage>,
    /// The implementations it calls and that call it.
    pub dependencies: Dependencies,
    /// The data resources it reaches, with how.
    pub data_resources: Vec<ResourceAccess>,
}

/// A step named by id and name, with its process.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StepRef {
    /// The step's id.
    pub step_id: String,
    /// Its name as the graph gives it.
    pub name: String,
    /// The process's id.
    pub process_id: String,
}

/// An ACCESSES relation: which implementation reaches which resource, and how.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImplResourceLink {
    /// The implementation's id.
    pub impl_id: String,
    /// The data resource's id.
    pub resource_id: String,
    /// read, write, read_write… as the relation says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_type: Option<String>,
    /// How it is accessed, in words ("按 user_id 点查").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_pattern: Option<String>,
}

/// get_resource_context_for_chat: a data resource, the processes and steps that use it, and the
/// implementations that reach it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ResourceContext {
    /// The data resource.
    pub resource: ResourceInfo,
    /// The processes whose steps use it.
    pub businesses: Vec<ProcessRef>,
    /// The steps that use it.
    pub steps: Vec<StepRef>,
    /// The implementations that reach it.
    pub implementations: Vec<ImplRef>,
    /// The ACCESSES relations from those implementations to the resource.
    pub impl_resource_links: Vec<ImplResourceLink>,
}

/// A node of a neighbourhood or a path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphNode {
    /// The entity's id.
    pub id: String,
    /// Its type: business, step, implementation or data_resource.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its name as the graph gives it.
    pub name: String,
    /// The type's identifying extras: a step's process and order, an implementation's system and
    /// URI, a resource's db and table; a neighbour's distance from the start.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

/// A relation of a neighbourhood or a path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GraphEdge {
    /// The id of the entity the relation leaves.
    pub from: String,
    /// The id of the entity the relation reaches.
    pub to: String,
    /// The relation's type (HAS_STEP, NEXT, IMPLEMENTED_BY, ACCESSES, USES, CALLS).
    pub edge_type: &'static str,
    /// The relation's access type and pattern, when it has them.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
}

/// get_neighbors: the start, its neighbours grouped by type, and the relations among them all.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Neighbors {
    /// The entity the neighbourhood is around.
    pub center: GraphNode,
    /// How many relations away the neighbourhood reaches.
    pub depth: usize,
    /// The neighbours, grouped by type.
    pub neighbors: Grouped,
    /// The relations among the nodes.
    pub edges: Vec<GraphEdge>,
    /// True when the neighbourhood was larger than an answer may be and was cut.
    pub truncated: bool,
}

/// Neighbours grouped by their type.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Grouped {
    /// Processes.
    pub business: Vec<GraphNode>,
    /// Steps.
    pub step: Vec<GraphNode>,
    /// Implementations.
    pub implementation: Vec<GraphNode>,
    /// Data resources.
    pub data_resource: Vec<GraphNode>,
}

/// get_path_between_entities. `found` and `hops` say at a glance whether there is a path.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EntityPath {
    /// Whether a path was found within the hops allowed.
    pub found: bool,
    /// The path's length in relations, when found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<usize>,
    /// The entities along the path, start to end.
    pub nodes: Vec<GraphNode>,
    /// The relations among the nodes.
    pub edges: Vec<GraphEdge>,
    /// Why no path was found, when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
