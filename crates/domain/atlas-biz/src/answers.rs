//! The tools' outputs, shaped as seed 003's return structures (§4, §5): the interface's own types
//! (`atlas_api::business`).

pub use atlas_api::business::{
    AccessedResource, BusinessContext, BusinessSummary, Candidate, Candidates, Dependencies,
    EntityPath, FieldRef, GraphEdge, GraphNode, Grouped, ImplRef, ImplResourceLink,
    ImplementationContext, ImplementationInProcess, ImplementationInfo, ImplementationSummary,
    KeyStep, KeySystem, Neighbors, ProcessInfo, ProcessRef, ProcessUsage, ResourceAccess,
    ResourceContext, ResourceInfo, ResourceSummary, StepContext, StepInfo, StepRef,
};
