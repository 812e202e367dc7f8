//! Seed 003's tools on the demo graph: shapes, bounds, and refusals.

use std::sync::Arc;

use atlas_biz::*;
use atlas_text::HashEmbedder;
use atlas_wiring::testing::TestStore;
use serde_json::{Value, json};

// The business graph kept on a folder and on PostgreSQL.
atlas_wiring::on_every_store!(an_import_is_durable_and_a_bad_one_changes_nothing);

fn demo() -> BizStore {
    BizStore::in_memory(demo::data(), Arc::new(HashEmbedder::default())).unwrap()
}

fn req<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn as_json(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn the_demo_graph_has_the_size_the_issue_asks_for() {
    let data = demo::data();
    assert!(data.businesses.len() >= 10);
    assert!(data.steps.len() >= 40);
    assert!(data.implementations.len() >= 40);
    assert!(data.data_resources.len() >= 30);
    BusinessGraph::build(data).unwrap();
}

#[test]
fn search_finds_by_alias_by_uri_and_by_table_name_with_scores_in_0_1() {
    let store = demo();
    let g = store.current();
    let found = g
        .search_businesses(&req(json!({"query": "开卡流程"})))
        .unwrap();
    assert_eq!(found.candidates[0].entity.process_id, "p_monthly_card");
    assert!(found.candidates.len() <= 5);
    for c in &found.candidates {
        assert!((0.0..=1.0).contains(&c.score), "{}", c.score);
    }
    let found = g
        .search_implementations(&req(json!({"query": "/api/order/detail 报 500"})))
        .unwrap();
    assert_eq!(found.candidates[0].entity.impl_id, "i_order_detail");
    assert_eq!(
        found.candidates[0].entity.uri.as_deref(),
        Some("/api/order/detail")
    );
    let found = g
        .search_data_resources(&req(json!({"query": "user_profile", "limit": 3})))
        .unwrap();
    assert_eq!(found.candidates[0].entity.resource_id, "r_user_profile");
    assert!(found.candidates.len() <= 3);
    // Candidates are unique.
    let mut ids: Vec<&str> = found
        .candidates
        .iter()
        .map(|c| c.entity.resource_id.as_str())
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), found.candidates.len());
}

#[test]
fn search_filters_narrow_to_a_system_a_uri_or_a_database() {
    let g = demo().current();
    let found = g
        .search_implementations(&req(
            json!({"query": "查询", "system": "payment-service", "limit": 20}),
        ))
        .unwrap();
    assert!(!found.candidates.is_empty());
    assert!(
        found
            .candidates
            .iter()
            .all(|c| c.entity.system.as_deref() == Some("payment-service"))
    );
    let found = g
        .search_implementations(&req(
            json!({"query": "接口", "uri_contains": "/api/points/", "limit": 20}),
        ))
        .unwrap();
    assert!(!found.candidates.is_empty());
    assert!(
        found.candidates.iter().all(|c| c
            .entity
            .uri
            .as_deref()
            .unwrap()
            .starts_with("/api/points/"))
    );
    let found = g
        .search_data_resources(&req(
            json!({"query": "记录", "db": "order_db", "limit": 20}),
        ))
        .unwrap();
    assert!(
        found
            .candidates
            .iter()
            .all(|c| c.entity.db.as_deref() == Some("order_db"))
    );
}

#[test]
fn out_of_range_and_empty_arguments_are_refused_with_a_message() {
    let g = demo().current();
    for bad in [
        json!({"query": "开卡", "limit": 0}),
        json!({"query": "开卡", "limit": 21}),
        json!({"query": "  "}),
    ] {
        let e = g.search_businesses(&req(bad)).unwrap_err();
        assert!(matches!(e, BizError::Invalid(_)), "{e}");
    }
    let e = g
        .get_neighbors(&req(
            json!({"node_type": "business", "node_id": "p_monthly_card", "depth": 4}),
        ))
        .unwrap_err();
    assert!(
        e.to_string().contains("depth must be between 1 and 3"),
        "{e}"
    );
    let e = g
        .get_path_between_entities(&req(json!({"start_type": "business", "start_id": "p_monthly_card", "end_type": "data_resource", "end_id": "r_orders", "max_hops": 11})))
        .unwrap_err();
    assert!(e.to_string().contains("max_hops"), "{e}");
    let e = g
        .summarize_business(&req(json!({"process_id": "p_nope"})))
        .unwrap_err();
    assert!(matches!(e, BizError::NotFound { .. }), "{e}");
    // A wrong enum value is a parse error before any tool runs.
    assert!(
        serde_json::from_value::<NeighborsRequest>(json!({"node_type": "table", "node_id": "x"}))
            .is_err()
    );
}

#[test]
fn business_summary_and_context_follow_the_seed_shapes() {
    let g = demo().current();
    let summary = as_json(
        g.summarize_business(&req(json!({"process_id": "p_monthly_card"})))
            .unwrap(),
    );
    let text = summary["summary_text"].as_str().unwrap();
    assert!(text.starts_with("开通月卡（也叫开卡、办卡"), "{text}");
    assert!(
        text.contains("选择月卡套餐 → 提交月卡订单 → 支付 → 开通权益"),
        "{text}"
    );
    assert!(text.contains("member_card"), "{text}");
    assert_eq!(summary["key_steps"].as_array().unwrap().len(), 4);
    let systems: Vec<&str> = summary["key_systems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["system"].as_str().unwrap())
        .collect();
    assert!(
        systems.contains(&"member-center") && systems.contains(&"payment-service"),
        "{systems:?}"
    );

    let context = as_json(
        g.get_business_context_for_chat(&req(json!({"process_id": "p_monthly_card"})))
            .unwrap(),
    );
    assert_eq!(context["process"]["name"], "开通月卡");
    let steps = context["steps"].as_array().unwrap();
    assert_eq!(steps[0]["step"]["order_no"], 1);
    assert_eq!(steps[0]["prev_steps"], json!([]));
    assert_eq!(steps[1]["prev_steps"], json!([steps[0]["step"]["step_id"]]));
    assert_eq!(steps[1]["next_steps"], json!([steps[2]["step"]["step_id"]]));
    let activate = context["implementations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["impl_id"] == "i_card_activate")
        .unwrap();
    assert!(
        activate["accessed_resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["resource_id"] == "r_user_profile" && r["access_type"] == "write")
    );
    assert!(
        activate["called_impls"]
            .as_array()
            .unwrap()
            .contains(&json!("i_notify_send"))
    );
    let tables: Vec<&str> = context["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["table"].as_str().unwrap())
        .collect();
    assert!(
        tables.contains(&"user_profile") && tables.contains(&"payment_record"),
        "{tables:?}"
    );
}

#[test]
fn implementation_and_resource_contexts_say_who_uses_what() {
    let g = demo().current();
    let context = as_json(
        g.get_implementation_context_for_chat(&req(json!({"impl_id": "i_coupon_issue"})))
            .unwrap(),
    );
    let processes: Vec<&str> = context["process_usages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["process_name"].as_str().unwrap())
        .collect();
    assert!(
        processes.contains(&"新用户首登送券") && processes.contains(&"积分兑换"),
        "{processes:?}"
    );
    assert!(
        context["dependencies"]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["impl_id"] == "i_risk_check")
    );
    assert!(
        context["dependencies"]["called_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["impl_id"] == "i_first_login_gift")
    );
    let summary = as_json(
        g.summarize_implementation(&req(json!({"impl_id": "i_order_detail"})))
            .unwrap(),
    );
    assert!(
        summary["summary_text"]
            .as_str()
            .unwrap()
            .contains("URI /api/order/detail")
    );

    let resource = as_json(
        g.summarize_data_resource(&req(json!({"resource_id": "r_user_profile"})))
            .unwrap(),
    );
    let usages = resource["typical_usages"].as_str().unwrap();
    assert!(
        usages.contains("写入方：")
            && usages.contains("月卡开通接口")
            && usages.contains("读取方："),
        "{usages}"
    );
    assert!(
        resource["main_fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "vip_status")
    );
    let context = as_json(
        g.get_resource_context_for_chat(&req(json!({"resource_id": "r_user_profile"})))
            .unwrap(),
    );
    let writers: Vec<&str> = context["impl_resource_links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["access_type"] == "write")
        .map(|l| l["impl_id"].as_str().unwrap())
        .collect();
    assert!(
        writers.contains(&"i_card_activate") && writers.contains(&"i_profile_update"),
        "{writers:?}"
    );
    let businesses: Vec<&str> = context["businesses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["process_id"].as_str().unwrap())
        .collect();
    assert!(
        businesses.contains(&"p_monthly_card") && businesses.contains(&"p_profile_update"),
        "{businesses:?}"
    );
}

#[test]
fn neighbours_are_grouped_filtered_and_bounded() {
    let g = demo().current();
    let one = as_json(
        g.get_neighbors(&req(
            json!({"node_type": "data_resource", "node_id": "r_user_profile"}),
        ))
        .unwrap(),
    );
    assert_eq!(one["center"]["id"], "r_user_profile");
    assert!(one["neighbors"]["implementation"].as_array().unwrap().len() >= 4);
    assert!(one["neighbors"]["business"].as_array().unwrap().is_empty());
    // The edges are the relations among what is shown, the centre included.
    let mut shown = vec![json!("r_user_profile")];
    for group in one["neighbors"].as_object().unwrap().values() {
        shown.extend(group.as_array().unwrap().iter().map(|n| n["id"].clone()));
    }
    let edges = one["edges"].as_array().unwrap();
    for e in edges {
        assert!(
            shown.contains(&e["from"]) && shown.contains(&e["to"]),
            "{e}"
        );
    }
    assert!(edges.len() >= shown.len() - 1);
    let two = as_json(g.get_neighbors(&req(json!({"node_type": "data_resource", "node_id": "r_user_profile", "depth": 3, "include_types": ["business"]}))).unwrap());
    let businesses = two["neighbors"]["business"].as_array().unwrap();
    assert!(!businesses.is_empty());
    assert!(
        two["neighbors"]["implementation"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        businesses
            .iter()
            .all(|b| (2..=3).contains(&b["extra"]["distance"].as_u64().unwrap()))
    );
    let wide = g
        .get_neighbors(&req(
            json!({"node_type": "implementation", "node_id": "i_notify_send", "depth": 3}),
        ))
        .unwrap();
    let count = wide.neighbors.business.len()
        + wide.neighbors.step.len()
        + wide.neighbors.implementation.len()
        + wide.neighbors.data_resource.len();
    assert!(count <= MAX_NEIGHBOURS);
}

#[test]
fn a_path_joins_a_process_to_a_table_through_steps_and_apis() {
    let g = demo().current();
    let path = as_json(g.get_path_between_entities(&req(json!({"start_type": "business", "start_id": "p_monthly_card", "end_type": "data_resource", "end_id": "r_user_profile"}))).unwrap());
    assert_eq!(path["found"], true);
    let types: Vec<&str> = path["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["business", "step", "implementation", "data_resource"]
    );
    let edges: Vec<&str> = path["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["edge_type"].as_str().unwrap())
        .collect();
    assert_eq!(edges, ["HAS_STEP", "IMPLEMENTED_BY", "ACCESSES"]);
    assert_eq!(path["edges"][2]["extra"]["access_type"], "write");
    let short = as_json(g.get_path_between_entities(&req(json!({"start_type": "business", "start_id": "p_monthly_card", "end_type": "data_resource", "end_id": "r_user_profile", "max_hops": 2}))).unwrap());
    assert_eq!(short["found"], false);
    assert!(short["nodes"].as_array().unwrap().is_empty());
}

#[test]
fn csv_files_import_into_the_same_graph_as_json() {
    let files = vec![
        ("processes.csv".to_string(), "process_id,name,aliases,description\np1,开通月卡,开卡;办卡,用户开通月卡\n".to_string()),
        ("steps.csv".to_string(), "step_id,process_id,name,order_no\ns1,p1,支付,1\n".to_string()),
        ("apis.csv".to_string(), "impl_id,name,system,uri,type\ni1,创建支付单,pay-service,/api/pay/create,http_api\n".to_string()),
        ("tables.csv".to_string(), "resource_id,name,db,table,fields\nr1,支付流水表,pay_db,payment_record,pay_id:支付单号;amount:金额\n".to_string()),
        ("relations.csv".to_string(), "type,from,to,access_type,access_pattern\nIMPLEMENTED_BY,s1,i1,,\nACCESSES,i1,r1,write,插入支付单\n".to_string()),
    ];
    let data = import::from_csv(&files).unwrap();
    assert_eq!(data.businesses[0].aliases, ["开卡", "办卡"]);
    assert_eq!(data.steps[0].order_no, Some(1));
    assert_eq!(
        data.data_resources[0].fields[1].description.as_deref(),
        Some("金额")
    );
    assert_eq!(data.relations[1].access_type.as_deref(), Some("write"));
    let graph = BusinessGraph::build(data).unwrap();
    assert!(
        graph
            .data()
            .relations
            .iter()
            .any(|r| r.kind == RelationType::HasStep)
    );
    let bad = import::from_csv(&[("x.csv".into(), "a,b\n1,2\n".into())]).unwrap_err();
    assert!(bad.to_string().contains("x.csv"), "{bad}");
    let bad = import::from_csv(&[(
        "s.csv".into(),
        "step_id,name,order_no\ns1,支付,first\n".into(),
    )])
    .unwrap_err();
    assert!(bad.to_string().contains("row 2"), "{bad}");
}

async fn an_import_is_durable_and_a_bad_one_changes_nothing(store: TestStore) {
    {
        let graph = store.biz().unwrap();
        assert!(graph.is_empty());
        assert!(demo::install(&graph).unwrap().is_some());
        assert!(demo::install(&graph).unwrap().is_none());
        // A second store on the same folder is refused while the first is open (a database
        // has no single writer: replicas share it).
        if let TestStore::Folder(_) = store {
            assert!(matches!(store.biz(), Err(BizError::Locked { .. })));
        }
        let mut broken = demo::data();
        broken.relations.push(Relation {
            kind: RelationType::Accesses,
            from: "i_order_detail".into(),
            to: "r_missing".into(),
            access_type: None,
            access_pattern: None,
        });
        assert!(graph.replace(broken, 0).is_err());
        assert_eq!(
            graph.current().graph().data().businesses.len(),
            demo::data().businesses.len()
        );
    }
    let graph = store.biz().unwrap();
    assert_eq!(
        graph.current().graph().data().implementations.len(),
        demo::data().implementations.len()
    );
    let stored = store.files("biz").read("graph.json").unwrap().unwrap();
    let text: Value = serde_json::from_slice(&stored).unwrap();
    // The stored document is what was imported: generated search texts are not frozen into it.
    assert_eq!(text["businesses"][0]["search_text"], "");
}

/// The folder's writer keeps the entities' vectors beside the graph: opening again embeds
/// nothing and answers the same; an entity whose text changed is embedded alone; a file of
/// another model, or damaged, costs only the embedding.
#[test]
fn a_reopen_embeds_only_entities_whose_vectors_no_file_keeps() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("biz");
    let search = |store: &BizStore| {
        let answer = store
            .current()
            .search_businesses(&req(json!({"query": "退款流程", "limit": 3})))
            .unwrap();
        as_json(answer)
    };
    let model = atlas_text::CountingEmbedder::named("counting");
    let (first, all) = {
        let store = BizStore::open(&folder, model.clone()).unwrap();
        atlas_biz::demo::install(&store).unwrap();
        let all = model.count();
        (search(&store), all)
    };
    assert!(all > 50, "the demo embedded {all} texts");
    assert!(folder.join("vectors.image").is_file());

    let again = atlas_text::CountingEmbedder::named("counting");
    let store = BizStore::open(&folder, again.clone()).unwrap();
    assert_eq!(again.count(), 0, "a reopen embedded texts the file keeps");
    assert_eq!(search(&store), first);
    // One process's description changed: the texts that changed with it (its own, and those
    // generated from it) are embedded again, and no other.
    let before = store.current().graph().data().clone();
    let mut data = before.clone();
    data.businesses[0].description = Some("退款审核的新流程".into());
    data.businesses[0].search_text = String::new();
    let asked = again.count(); // the query searched above
    store.replace(data, 0).unwrap();
    let after = store.current();
    let changed = (0..before.businesses.len())
        .filter(|&i| {
            before.businesses[i].search_text != after.graph().data().businesses[i].search_text
        })
        .count()
        + (0..before.implementations.len())
            .filter(|&i| {
                before.implementations[i].search_text
                    != after.graph().data().implementations[i].search_text
            })
            .count()
        + (0..before.data_resources.len())
            .filter(|&i| {
                before.data_resources[i].search_text
                    != after.graph().data().data_resources[i].search_text
            })
            .count();
    assert!(changed >= 1);
    assert_eq!(again.count() - asked, changed);
    drop(store);

    let other = atlas_text::CountingEmbedder::named("another model");
    drop(BizStore::open(&folder, other.clone()).unwrap());
    assert_eq!(other.count(), all, "another model's vectors served");
    let mut bytes = std::fs::read(folder.join("vectors.image")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(folder.join("vectors.image"), bytes).unwrap();
    let damaged = atlas_text::CountingEmbedder::named("another model");
    let store = BizStore::open(&folder, damaged.clone()).unwrap();
    assert_eq!(damaged.count(), all, "a damaged file served");
    search(&store);
}

/// Opened deferred (as `atlas serve` opens), entities whose vectors no file keeps are embedded
/// only when asked, and their file kept then.
#[test]
fn a_deferred_opening_embeds_the_business_graph_only_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("biz");
    let model = atlas_text::CountingEmbedder::named("counting");
    let store = BizStore::open(&folder, model.clone()).unwrap();
    atlas_biz::demo::install(&store).unwrap();
    let all = model.count();
    drop(store);
    std::fs::remove_file(folder.join("vectors.image")).unwrap();
    let later = atlas_text::CountingEmbedder::named("counting");
    let store = BizStore::open_deferred(&folder, later.clone()).unwrap();
    assert_eq!(later.count(), 0);
    assert!(!folder.join("vectors.image").exists());
    assert!(store.embed_deferred().unwrap());
    assert_eq!(later.count(), all);
    assert!(folder.join("vectors.image").is_file());
    assert!(!store.embed_deferred().unwrap());
}
