//! The entities and relations of a business graph: the interface's own types
//! (`atlas_api::business`), so that a tool answer is the entity itself.

pub use atlas_api::business::{
    Business, BusinessData, DataResource, EntityType, Field, Implementation, Relation,
    RelationType, Step,
};
