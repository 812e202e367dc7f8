//! `review_action` and `record_outcome` through the registry, as an agent that is not Atlas's
//! own (the Open-AutoGLM plugin) uses them: the shipped QQ gate blocks a finish before the
//! knowledge lookup, the guard's memory round-trips through the answers, a rule file sent as text
//! applies beside the gate, and a bad rule file or action is a clear error.

use std::sync::Arc;

use atlas_model::AtlasError;
use atlas_registry::registry;
use atlas_service::Atlas;
use atlas_wiring::testing::TestStore;
use serde_json::{Value, json};

const TASK: &str = "QQ 智能客服回复联系人11的问题";

async fn call(atlas: &Arc<Atlas>, tool: &str, body: Value) -> Result<Value, AtlasError> {
    registry()
        .get(tool)
        .expect("the tool is registered")
        .call(atlas.clone(), body)
        .await
}

fn finish(message: &str) -> Value {
    json!({"_metadata": "finish", "message": message})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_qq_gate_holds_a_finish_until_a_lookup_succeeded_with_its_memory_carried() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let qq = json!(["QQ", "com.tencent.mobileqq"]);

    let blocked = call(
        &atlas,
        "review_action",
        json!({"task": TASK, "action": finish("已回复"), "app": qq}),
    )
    .await
    .unwrap();
    assert_eq!(blocked["changed"], true, "{blocked}");
    assert_eq!(blocked["action"]["action"], "Wait", "{blocked}");
    assert_eq!(blocked["active"], json!(["qq-customer-service"]));
    assert!(
        blocked["observation"]
            .as_str()
            .unwrap()
            .contains("Waiting for QQ AI is not allowed"),
        "{blocked}"
    );

    // A question typed into the chat is remembered and looked up instead.
    let typed = json!({"_metadata": "do", "action": "Type", "text": "退货运费谁出？"});
    let looked = call(
        &atlas,
        "review_action",
        json!({"task": TASK, "action": typed, "app": qq, "memory": blocked["memory"]}),
    )
    .await
    .unwrap();
    assert_eq!(looked["action"]["action"], "GET_KNOWLEDGE_DATA", "{looked}");
    assert_eq!(looked["action"]["query"], "退货运费谁出？", "{looked}");
    let memory = looked["memory"].clone();
    assert_eq!(memory["values"]["pending_question"], "退货运费谁出？");

    // Without the memory, the same finish is blocked again; after a successful lookup it passes.
    let lookup = looked["action"].clone();
    let told = call(
        &atlas,
        "record_outcome",
        json!({"task": TASK, "action": lookup, "success": true, "result": "卖家承担", "memory": memory}),
    )
    .await
    .unwrap();
    assert_eq!(
        told["observation"],
        "GET_KNOWLEDGE_DATA executed successfully. result=卖家承担"
    );
    let passed = call(
        &atlas,
        "review_action",
        json!({"task": TASK, "action": finish("已回复"), "app": qq, "memory": told["memory"]}),
    )
    .await
    .unwrap();
    assert_eq!(passed["changed"], false, "{passed}");
    assert_eq!(passed["action"], finish("已回复"));
    let forgot = call(
        &atlas,
        "review_action",
        json!({"task": TASK, "action": finish("已回复"), "app": qq}),
    )
    .await
    .unwrap();
    assert_eq!(forgot["changed"], true, "{forgot}");

    // Another task passes untouched.
    let other = call(
        &atlas,
        "review_action",
        json!({"task": "点外卖", "action": finish("done")}),
    )
    .await
    .unwrap();
    assert_eq!(
        (&other["changed"], &other["active"]),
        (&json!(false), &json!([]))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_file_sent_as_text_applies_and_a_bad_one_is_refused_naming_the_rule() {
    let store = TestStore::folder();
    let atlas = store.open_atlas();
    let rules = "name: no-payments\nbefore:\n  - name: never pay\n    if: { action: [Tap], app: 支付宝 }\n    observe: 不许付款\n    do: 'do(action=\"Back\")'\n";
    let tap = json!({"_metadata": "do", "action": "Tap", "element": [500, 500]});
    let answer = call(
        &atlas,
        "review_action",
        json!({"task": "买咖啡", "action": tap, "app": ["支付宝"], "rules": [rules]}),
    )
    .await
    .unwrap();
    assert_eq!(answer["action"]["action"], "Back", "{answer}");
    assert_eq!(answer["fired"], json!(["never pay"]));
    assert_eq!(answer["observation"], "不许付款");
    let elsewhere = call(
        &atlas,
        "review_action",
        json!({"task": "买咖啡", "action": tap, "app": ["美团"], "rules": [rules]}),
    )
    .await
    .unwrap();
    assert_eq!(elsewhere["action"], tap);

    let bad = "name: x\nbefore:\n  - name: fly away\n    if: { action: [Fly] }\n";
    let refused = call(
        &atlas,
        "review_action",
        json!({"task": "买咖啡", "action": tap, "rules": [bad]}),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&refused, AtlasError::InvalidParameter { .. })
            && refused.to_string().contains("fly away"),
        "{refused}"
    );
    let not_an_action = call(
        &atlas,
        "record_outcome",
        json!({"task": "买咖啡", "action": {"action": "Fly"}, "success": true}),
    )
    .await
    .unwrap_err();
    assert!(
        not_an_action.to_string().contains("action"),
        "{not_an_action}"
    );
}
