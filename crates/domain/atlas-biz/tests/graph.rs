//! A small business graph: what building checks, the search texts it writes, and walks.

use atlas_biz::*;
use serde_json::json;

fn sample() -> BusinessData {
    serde_json::from_value(json!({
        "businesses": [{ "process_id": "p_card", "name": "开通月卡", "aliases": ["开卡", "办卡"], "description": "用户开通月度会员卡，支付后生效" }],
        "steps": [
            { "step_id": "s_pay", "process_id": "p_card", "name": "支付", "order_no": 2 },
            { "step_id": "s_pick", "process_id": "p_card", "name": "选择月卡", "order_no": 1 },
            { "step_id": "s_open", "process_id": "p_card", "name": "开通权益", "order_no": 3 }
        ],
        "implementations": [
            { "impl_id": "i_pay", "name": "创建支付单", "system": "pay-service", "uri": "/api/pay/create", "type": "http_api" },
            { "impl_id": "i_open", "name": "开通会员", "system": "member-center", "uri": "/api/member/open" }
        ],
        "data_resources": [
            { "resource_id": "r_profile", "name": "用户资料表", "db": "user_db", "table": "user_profile", "fields": [{ "name": "vip_status", "description": "会员状态" }] }
        ],
        "relations": [
            { "type": "NEXT", "from": "s_pick", "to": "s_pay" },
            { "type": "NEXT", "from": "s_pay", "to": "s_open" },
            { "type": "IMPLEMENTED_BY", "from": "s_pay", "to": "i_pay" },
            { "type": "IMPLEMENTED_BY", "from": "s_open", "to": "i_open" },
            { "type": "CALLS", "from": "i_open", "to": "i_pay" },
            { "type": "ACCESSES", "from": "i_open", "to": "r_profile", "access_type": "write", "access_pattern": "按 user_id 更新 vip_status" }
        ]
    }))
    .unwrap()
}

#[test]
fn building_fills_search_texts_from_the_seed_templates() {
    let graph = BusinessGraph::build(sample()).unwrap();
    let card = &graph.data().businesses[0].search_text;
    assert!(
        card.starts_with("业务流程：开通月卡。也叫开卡、办卡。描述：用户开通月度会员卡"),
        "{card}"
    );
    assert!(
        card.contains("选择月卡、支付、开通权益")
            && card.contains("pay-service")
            && card.contains("member-center"),
        "{card}"
    );
    let open = &graph.data().implementations[1].search_text;
    assert!(
        open.contains("URI：/api/member/open") && open.contains("常用于开通月卡"),
        "{open}"
    );
    let profile = &graph.data().data_resources[0].search_text;
    assert!(
        profile.starts_with("表：user_profile。也叫用户资料表。所属库：user_db。")
            && profile.contains("vip_status（会员状态）"),
        "{profile}"
    );
    // A given search text is kept.
    let mut data = sample();
    data.businesses[0].search_text = "自定义".into();
    assert_eq!(
        BusinessGraph::build(data).unwrap().data().businesses[0].search_text,
        "自定义"
    );
}

#[test]
fn steps_in_order_neighbourhoods_and_paths() {
    let graph = BusinessGraph::build(sample()).unwrap();
    let card = graph.require(EntityType::Business, "p_card").unwrap();
    let steps: Vec<&str> = graph
        .steps_of(card)
        .into_iter()
        .map(|s| graph.id_of(s))
        .collect();
    assert_eq!(steps, ["s_pick", "s_pay", "s_open"]);
    let profile = graph
        .require(EntityType::DataResource, "r_profile")
        .unwrap();
    let (near, _) = graph.neighbourhood(profile, 1, 100);
    assert_eq!(
        near.iter()
            .map(|(n, _)| graph.id_of(*n))
            .collect::<Vec<_>>(),
        ["i_open"]
    );
    let (far, relations) = graph.neighbourhood(profile, 3, 100);
    assert!(
        far.iter()
            .any(|(n, d)| graph.id_of(*n) == "p_card" && *d == 3),
        "{far:?}"
    );
    assert_eq!(far.len(), relations.len());
    let (nodes, relations) = graph.path(card, profile, 6).unwrap();
    let ids: Vec<&str> = nodes.iter().map(|n| graph.id_of(*n)).collect();
    assert_eq!(ids, ["p_card", "s_open", "i_open", "r_profile"]);
    assert_eq!(
        graph.relation(relations[2]).access_type.as_deref(),
        Some("write")
    );
    assert!(
        graph.path(card, profile, 2).is_none(),
        "three hops do not fit in two"
    );
    assert!(graph.require(EntityType::Implementation, "nope").is_err());
}

#[test]
fn a_graph_with_a_dangling_or_repeated_id_is_refused() {
    let mut dangling = sample();
    dangling.relations.push(
        serde_json::from_value(json!({ "type": "ACCESSES", "from": "i_pay", "to": "r_missing" }))
            .unwrap(),
    );
    let e = BusinessGraph::build(dangling).unwrap_err().to_string();
    assert!(e.contains("r_missing"), "{e}");
    let mut wrong_type = sample();
    wrong_type.relations.push(
        serde_json::from_value(json!({ "type": "CALLS", "from": "i_pay", "to": "r_profile" }))
            .unwrap(),
    );
    assert!(BusinessGraph::build(wrong_type).is_err());
    let mut twice = sample();
    twice.implementations.push(twice.implementations[0].clone());
    assert!(
        BusinessGraph::build(twice)
            .unwrap_err()
            .to_string()
            .contains("twice")
    );
    let mut orphan = sample();
    orphan.steps[0].process_id = "p_none".into();
    assert!(BusinessGraph::build(orphan).is_err());
    let mut nameless = sample();
    nameless.data_resources[0].name = " ".into();
    assert!(BusinessGraph::build(nameless).is_err());
}
