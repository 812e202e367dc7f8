//! Importing what Neo4j's `apoc.export.json.all` writes.

use atlas_biz::import::from_apoc_jsonl;
use atlas_biz::*;

const EXPORT: &str = r#"{"type":"node","id":"0","labels":["Business"],"properties":{"process_id":"p_card","name":"开通月卡","aliases":["开卡"]}}
{"type":"node","id":"1","labels":["Step"],"properties":{"step_id":"s1","name":"支付","order_no":"2"}}
{"type":"node","id":"2","labels":["Step"],"properties":{"step_id":"s0","name":"选择月卡","order_no":1}}
{"type":"node","id":"3","labels":["Implementation"],"properties":{"impl_id":"i_pay","name":"创建支付单","system":"pay-service","uri":"/api/pay/create","type":"http_api"}}
{"type":"node","id":"4","labels":["Table"],"properties":{"name":"支付流水表","db":"pay_db","table":"pay_record"}}
{"type":"node","id":"5","labels":["User"],"properties":{"name":"admin"}}
{"id":"10","type":"relationship","label":"HAS_STEP","start":{"id":"0","labels":["Business"]},"end":{"id":"1","labels":["Step"]}}
{"id":"11","type":"relationship","label":"HAS_STEP","start":{"id":"0","labels":["Business"]},"end":{"id":"2","labels":["Step"]}}
{"id":"12","type":"relationship","label":"NEXT","start":{"id":"2","labels":["Step"]},"end":{"id":"1","labels":["Step"]}}
{"id":"13","type":"relationship","label":"IMPLEMENTED_BY","start":{"id":"1","labels":["Step"]},"end":{"id":"3","labels":["Implementation"]}}
{"id":"14","type":"relationship","label":"WRITES","properties":{"access_pattern":"每笔支付插入一行"},"start":{"id":"3","labels":["Implementation"]},"end":{"id":"4","labels":["Table"]}}
{"id":"15","type":"relationship","label":"OWNS","start":{"id":"5","labels":["User"]},"end":{"id":"0","labels":["Business"]}}
"#;

#[test]
fn an_apoc_export_becomes_a_business_graph() {
    let (data, skipped) = from_apoc_jsonl(EXPORT).unwrap();
    assert_eq!(skipped, 2, "the User node and its OWNS relationship");
    assert_eq!(
        (
            data.businesses.len(),
            data.steps.len(),
            data.implementations.len(),
            data.data_resources.len()
        ),
        (1, 2, 1, 1)
    );
    assert_eq!(
        data.data_resources[0].resource_id, "neo4j:4",
        "no id property: the node id"
    );
    assert_eq!(data.implementations[0].kind.as_deref(), Some("http_api"));
    let graph = BusinessGraph::build(data).unwrap();
    let card = graph.require(EntityType::Business, "p_card").unwrap();
    let steps: Vec<&str> = graph
        .steps_of(card)
        .into_iter()
        .map(|s| graph.id_of(s))
        .collect();
    assert_eq!(steps, ["s0", "s1"], "order_no as text or number");
    let table = graph.require(EntityType::DataResource, "neo4j:4").unwrap();
    let writers = graph.related(table, RelationType::Accesses, false);
    assert_eq!(writers.len(), 1);
    assert_eq!(
        (
            writers[0].1.access_type.as_deref(),
            writers[0].1.access_pattern.as_deref()
        ),
        (Some("write"), Some("每笔支付插入一行"))
    );
    let (nodes, _) = graph.path(card, table, 6).unwrap();
    assert_eq!(nodes.len(), 4);
}

#[test]
fn a_broken_export_is_refused_with_its_line() {
    let e = from_apoc_jsonl("{\"type\":\"node\",\"id\":\"0\",\"labels\":[\"Business\"],\"properties\":{\"name\":\"x\"}}\n{oops\n").unwrap_err().to_string();
    assert!(e.contains("line 2"), "{e}");
    let wrong = r#"{"type":"node","id":"0","labels":["Business"],"properties":{"process_id":"p","name":"x"}}
{"type":"node","id":"1","labels":["Table"],"properties":{"resource_id":"t","name":"y"}}
{"id":"9","type":"relationship","label":"CALLS","start":{"id":"0"},"end":{"id":"1"}}"#;
    assert!(
        from_apoc_jsonl(wrong)
            .unwrap_err()
            .to_string()
            .contains("line 3")
    );
}
