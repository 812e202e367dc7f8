//! The tools' inputs, with seed 003's parameter names, ranges and enums. Their JSON Schemas are
//! what an LLM sees; `check` enforces the same ranges, since a schema is only advice to a model.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{BizError, invalid};
use crate::model::EntityType;

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

/// search_businesses
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchBusinessesRequest {
    /// 用户对业务流程的自然语言描述，如：'开卡流程'、'新用户首登送券活动'
    pub query: String,
    /// 最多返回多少条候选结果，默认 5
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub limit: Option<u32>,
}

impl SearchBusinessesRequest {
    pub(crate) fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

/// search_implementations
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchImplementationsRequest {
    /// 对接口或实现的自然语言描述，如：'订单详情接口'、'用户首登送券的风控接口'
    pub query: String,
    /// 可选，限制在某个系统或服务内搜索，如 'order-service'
    #[serde(default)]
    pub system: Option<String>,
    /// 可选，HTTP URI 片段，如 '/api/order/detail'
    #[serde(default)]
    pub uri_contains: Option<String>,
    /// 最多返回的候选数量，默认 5
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub limit: Option<u32>,
}

impl SearchImplementationsRequest {
    pub(crate) fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

/// search_data_resources
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchDataResourcesRequest {
    /// 对数据资源的自然语言描述，如 '用户资料表'、'月卡记录'
    pub query: String,
    /// 可选，数据库名过滤
    #[serde(default)]
    pub db: Option<String>,
    /// 最多返回的候选数量，默认 5
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub limit: Option<u32>,
}

impl SearchDataResourcesRequest {
    pub(crate) fn check(&self) -> Result<usize, BizError> {
        text("query", &self.query)?;
        limit(self.limit)
    }
}

/// summarize_business and get_business_context_for_chat
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ProcessRequest {
    /// 业务流程的唯一标识
    pub process_id: String,
}

/// summarize_implementation and get_implementation_context_for_chat
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ImplementationRequest {
    /// 实现/接口的唯一标识
    pub impl_id: String,
}

/// summarize_data_resource and get_resource_context_for_chat
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ResourceRequest {
    /// 数据资源的唯一标识
    pub resource_id: String,
}

/// The kinds a walk may start or end at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Variants undocumented on purpose: a doc comment on a variant turns the JSON Schema's `enum`
// into a `oneOf` of constants, which function-calling models take less well.
#[allow(missing_docs)]
pub enum EndType {
    Business,
    Implementation,
    DataResource,
}

impl From<EndType> for EntityType {
    fn from(t: EndType) -> EntityType {
        match t {
            EndType::Business => EntityType::Business,
            EndType::Implementation => EntityType::Implementation,
            EndType::DataResource => EntityType::DataResource,
        }
    }
}

/// get_neighbors
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NeighborsRequest {
    /// 起点节点类型
    pub node_type: EndType,
    /// 起点节点 ID（如 process_id / impl_id / resource_id）
    pub node_id: String,
    /// 向外扩展的层数，默认 1
    #[schemars(range(min = 1, max = 3))]
    #[serde(default)]
    pub depth: Option<u32>,
    /// 可选，仅返回指定类型的邻居
    #[serde(default)]
    pub include_types: Option<Vec<EntityType>>,
}

impl NeighborsRequest {
    pub(crate) fn check(&self) -> Result<usize, BizError> {
        in_range("depth", self.depth.unwrap_or(1), 1, 3)
    }
}

/// get_path_between_entities
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PathRequest {
    /// The type of the entity the path starts at.
    pub start_type: EndType,
    /// The id of the entity the path starts at.
    pub start_id: String,
    /// The type of the entity the path ends at.
    pub end_type: EndType,
    /// The id of the entity the path ends at.
    pub end_id: String,
    /// 最大允许路径长度，默认 6
    #[schemars(range(min = 1, max = 10))]
    #[serde(default)]
    pub max_hops: Option<u32>,
}

impl PathRequest {
    pub(crate) fn check(&self) -> Result<usize, BizError> {
        in_range("max_hops", self.max_hops.unwrap_or(6), 1, 10)
    }
}
