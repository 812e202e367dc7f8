//! The graph's HTTP API: the token, the OpenAPI document against what answers, what numbers and
//! texts are taken.

use serde_json::{Value, json};

use crate::common::*;

#[test]
fn bearer_token_is_required_when_set() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--token", "s3cret"]);
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer s3cret")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 200);
    server.stop();
}

#[test]
fn openapi_document_and_tool_list_describe_every_route_that_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"), &["--demo"]);
    let mut r = agent()
        .get(&format!("{}/api/v1/openapi.json", server.url))
        .call()
        .unwrap();
    assert_eq!(r.status(), 200);
    let doc: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    let mut r = agent()
        .get(&format!("{}/api/v1/tools", server.url))
        .call()
        .unwrap();
    let tools: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    let tools = tools
        .as_array()
        .or_else(|| tools["tools"].as_array())
        .expect("a list of tools")
        .clone();
    assert!(tools.len() >= 11, "seed 000's eleven interfaces at least");
    for tool in &tools {
        let function = &tool["function"];
        assert_eq!(tool["type"], "function");
        let name = function["name"].as_str().unwrap();
        assert!(
            !function["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{name} has a description"
        );
        assert_eq!(
            function["parameters"]["type"], "object",
            "{name}'s parameters are an object schema"
        );
        let path = format!("/api/v1/{name}");
        assert!(
            paths.get(&path).and_then(|p| p.get("post")).is_some(),
            "{path} is in the OpenAPI document"
        );
        // The route exists: an empty object is either enough or a parameter error, never 404.
        let (status, body) = server.call(name, json!({}));
        assert!(
            status == 200 || (status == 400 && body["error"]["code"] == "INVALID_PARAMETER"),
            "{name}: {status} {body}"
        );
    }
    for name in [
        "query_path",
        "get_next_action",
        "match_current_page",
        "get_rag_context",
        "report_transition",
        "end_session",
        "add_page",
        "register_intent",
        "get_available_actions",
        "find_similar_intents",
        "get_graph_stats",
        "batch_add_transitions",
    ] {
        assert!(
            tools.iter().any(|t| t["function"]["name"] == name),
            "{name} is listed"
        );
    }
    server.stop();
}

#[test]
fn control_characters_in_queries_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo"]);
    for (tool, body) in [
        ("search_businesses", json!({"query": "开卡\u{0}流程"})),
        ("search_implementations", json!({"query": "订单\u{1b}[31m"})),
        ("search_data_resources", json!({"query": "表\u{7}"})),
        (
            "retrieve_knowledge",
            json!({"dataset_id": DEMO_DATASET, "query": "退货\u{0}", "api_key": "dataset-demo-key"}),
        ),
    ] {
        let (status, answer) = server.call(tool, body);
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_PARAMETER")),
            "{tool}: {answer}"
        );
    }
    let (status, answer) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/retrieve"),
        Some("dataset-demo-key"),
        &json!({"query": "退货\u{0}运费"}).to_string(),
    );
    assert_eq!(
        (status, answer["code"].as_str()),
        (400, Some("invalid_param")),
        "{answer}"
    );
    server.stop();
}

#[test]
fn numbers_and_texts_are_read_as_the_openapi_document_states() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--demo"]);
    // Python and JavaScript send whole floats where a count is wanted.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "max_steps": 5.0}),
    );
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = server.call(
        "find_similar_intents",
        json!({"query": "外卖", "top_k": 2.5}),
    );
    assert_eq!(status, 400, "a fraction is not a count: {answer}");
    // Beyond 2^53 - 1 an integer is not carried exactly by JSON: refused where one is named.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "max_steps": 9007199254740993u64}),
    );
    assert_eq!(
        (status, answer["error"]["details"]["field"].as_str()),
        (400, Some("max_steps")),
        "{answer}"
    );
    // A control character in a named text is refused; in a field no interface reads, ignored.
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点\u{1}外卖"}),
    );
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = server.call(
        "query_path",
        json!({"app_id": "com.meituan.app", "intent": "点外卖", "note\u{1}": "\u{7f}", "n": 1e300}),
    );
    assert_eq!(status, 200, "{answer}");
    // No body is `{}` (enough for get_graph_stats); `null` is not an object.
    let (status, _) = server.post("get_graph_stats", b"");
    assert_eq!(status, 200);
    let (status, answer) = server.post("get_graph_stats", b"null");
    assert_eq!(status, 400, "{answer}");
    // Every operation's answer has its schema in the document.
    let (_, doc) = dify_request(&server, "GET", "/api/v1/openapi.json", None, "", b"");
    let answer = &doc["paths"]["/api/v1/query_path"]["post"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    assert!(
        answer["properties"]["success"].is_object(),
        "query_path's answer is described: {answer}"
    );
    for path in [
        "/v1/datasets/{dataset_id}/retrieve",
        "/mcp",
        "/retrieval",
        "/api/v1/chat",
    ] {
        assert!(doc["paths"][path].is_object(), "{path} is documented");
    }
    server.stop();
}
