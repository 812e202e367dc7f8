//! The tools' inputs (the interface's own types, `atlas_api::business`), and the checks of the
//! ranges their schemas state: a schema is only advice to a model.

pub use atlas_api::business::{
    EndType, ImplementationRequest, NeighborsRequest, PathRequest, ProcessRequest, ResourceRequest,
    SearchBusinessesRequest, SearchDataResourcesRequest, SearchImplementationsRequest,
};

use crate::error::{BizError, invalid};

/// What the graph checks of a request before it answers: its ranges, and the value it uses.
pub(crate) trait Check {
    /// The request's checked count (its `limit`, `depth` or `max_hops`).
    fn check(&self) -> Result<usize, BizError>;
}

/// `limit` 1..20, default 5.
fn limit(value: Option<u32>) -> Result<usize, BizError> {
    in_range("limit", value.unwrap_or(5), 1, 20)
}

fn in_range(field: &str, value: u32, min: u32, max: u32) -> Result<usize, BizError> {
    if (min..=max).contains(&value) {
        Ok(value as usize)
    } else {
        Err(invalid(format!(
            "{field} must be between {min} and {max}, got {value}"
        )))
    }
}

fn text(field: &str, value: &str) -> Result<(), BizError> {
    if value.trim().is_empty() {
        Err(invalid(format!("{field} must not be empty")))
    } else if atlas_text::has_control_characters(value) {
        Err(invalid(format!("{field} contains control characters")))
    } else {
        Ok(())
    }
}

impl Check for SearchBusinessesRequest {
    fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

impl Check for SearchImplementationsRequest {
    fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

impl Check for SearchDataResourcesRequest {
    fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

impl Check for NeighborsRequest {
    fn check(&self) -> Result<usize, BizError> {
        in_range("depth", self.depth.unwrap_or(1), 1, 3)
    }
}

impl Check for PathRequest {
    fn check(&self) -> Result<usize, BizError> {
        in_range("max_hops", self.max_hops.unwrap_or(6), 1, 10)
    }
}
