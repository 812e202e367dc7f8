//! The demo business graph shipped with `atlas serve --demo`: a membership and e-commerce
//! company in Chinese, 13 processes (开通月卡, 新用户首登送券, 下单支付, 订单退款...), 44 steps,
//! 46 implementations across 12 services and 32 tables in 11 databases.

use crate::error::BizError;
use crate::model::BusinessData;
use crate::store::{BizStore, ImportReport};

/// The demo business graph (an operator's monthly card: processes, APIs, tables), in the import
/// format.
pub const DEMO_GRAPH: &str = include_str!("../demo/graph.json");

/// The demo graph as data.
pub fn data() -> BusinessData {
    crate::import::from_json(DEMO_GRAPH).expect("the bundled demo business graph is valid")
}

/// Installs the demo graph when the store has no graph yet; None when it kept what it had.
pub fn install(store: &BizStore) -> Result<Option<ImportReport>, BizError> {
    if !store.is_empty() {
        return Ok(None);
    }
    store.replace(data(), 0).map(Some)
}
