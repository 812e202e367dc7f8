//! The business graph's tools, the chat and MCP on a running server.

use serde_json::{Value, json};

use crate::common::*;

#[test]
fn business_graph_tools_chat_and_mcp_on_a_running_server() {
    let data = tempfile::tempdir().unwrap();
    let sim_url = model_sim();
    let llm = format!("{sim_url}/v1");
    let server = Server::start(
        data.path(),
        &["--demo", "--kb-embedder", "same", "--llm-url", &llm],
    );

    // Seed 003's tools at /api/v1, with the seed's errors.
    let (status, found) = server.call("search_businesses", json!({"query": "开卡流程用到哪些表"}));
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["candidates"][0]["process_id"], "p_monthly_card");
    assert_error(
        &server.call("search_businesses", json!({"query": "开卡", "limit": 0})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "get_neighbors",
            json!({"node_type": "table", "node_id": "x"}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call("summarize_business", json!({"process_id": "p_nope"})),
        404,
        "NOT_FOUND",
    );
    // A dataset's records need its key (this server has no token): without it, or with
    // another, 401; with it, the records.
    let ask = json!({"dataset_id": "6f1d7d1e-6b0a-4d1e-9f1e-000000000001", "query": "退货运费谁出", "top_k": 2});
    assert_error(
        &server.call("retrieve_knowledge", ask.clone()),
        401,
        "UNAUTHORIZED",
    );
    let mut wrong = ask.clone();
    wrong["api_key"] = json!("not-the-key");
    assert_error(
        &server.call("retrieve_knowledge", wrong),
        401,
        "UNAUTHORIZED",
    );
    let mut keyed = ask.clone();
    keyed["api_key"] = json!("dataset-demo-key");
    let (_, records) = server.call("retrieve_knowledge", keyed);
    assert!(
        !records["records"].as_array().unwrap().is_empty(),
        "{records}"
    );

    // The chat: the scripted model searches, opens the context, answers.
    let (status, chat) = server.call(
        "chat",
        json!({"messages": [{"role": "user", "content": "哪些接口写 user_profile？"}], "stream": false}),
    );
    assert_eq!(status, 200, "{chat}");
    let events = chat["events"].as_array().unwrap();
    let calls: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        ["search_data_resources", "get_resource_context_for_chat"]
    );
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done", "{done}");
    assert!(
        done["content"]
            .as_str()
            .unwrap()
            .contains("i_card_activate"),
        "{done}"
    );
    assert_eq!(done["focus"], json!({"resource_id": "r_user_profile"}));
    // The model was told the seed's rules and offered only the business and knowledge tools.
    let asked: Value = agent()
        .get(&format!("{sim_url}/requests"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let first = &asked[0];
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("不要假设用户会提供任何技术 ID")
    );
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"search_businesses") && offered.contains(&"retrieve_knowledge"));
    assert!(
        !offered.contains(&"query_path") && !offered.contains(&"report_transition"),
        "{offered:?}"
    );
    // Providers' quirks: arguments as an object, calls without ids.
    let (_, quirky) = server.call(
        "chat",
        json!({"messages": [{"role": "user", "content": "quirk"}], "stream": false}),
    );
    let done = quirky["events"].as_array().unwrap().last().unwrap().clone();
    assert!(
        done["content"]
            .as_str()
            .unwrap()
            .contains("/api/order/detail"),
        "{quirky}"
    );
    // Bad conversations are refused.
    assert_error(
        &server.call("chat", json!({"messages": []})),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(
        &server.call(
            "chat",
            json!({"messages": [{"role": "assistant", "content": "hi"}]}),
        ),
        400,
        "INVALID_PARAMETER",
    );
    assert_error(&server.post("chat", b"{not json"), 400, "INVALID_PARAMETER");

    // MCP over HTTP, the handshake era, by hand.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}});
    let (status, session, answer) = mcp_post(&server, &[], &init);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
    let session = session.expect("initialize opens a session");
    let (status, _, _) = mcp_post(
        &server,
        &[("Mcp-Session-Id", &session)],
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "summarize_data_resource", "arguments": {"resource_id": "r_orders"}}});
    let (_, _, answer) = mcp_post(&server, &[("Mcp-Session-Id", &session)], &call);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["structuredContent"]["table"], "orders");
    let (status, _, _) = mcp_post(&server, &[("Mcp-Session-Id", "nope")], &call);
    assert_eq!(status, 404);
    let (status, _, _) = mcp_post(&server, &[("Origin", "http://evil.example")], &init);
    assert_eq!(status, 403);
    // The stateless era: a request without _meta's version is told what is supported.
    let (_, _, answer) = mcp_post(
        &server,
        &[],
        &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    );
    assert_eq!(answer["error"]["code"], -32022, "{answer}");
    let listed = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let (_, _, answer) = mcp_post(&server, &[("MCP-Protocol-Version", "2026-07-28")], &listed);
    assert_eq!(answer["result"]["resultType"], "complete");
    assert!(answer["result"]["tools"].as_array().unwrap().len() >= 23);
    let (status, _, _) = mcp_post(&server, &[("MCP-Protocol-Version", "2025-11-25")], &listed);
    assert_eq!(status, 400, "a header that disagrees with _meta is refused");

    // The business graph as a whole: a broken import changes nothing; a good one is durable.
    let (status, graph) = dify_request(&server, "GET", "/api/v1/business-graph", None, "", b"");
    assert_eq!(status, 200);
    assert_eq!(graph["businesses"].as_array().unwrap().len(), 13);
    let broken = json!({"businesses": [{"process_id": "p1", "name": "流程"}], "relations": [{"type": "HAS_STEP", "from": "p1", "to": "s_missing"}]});
    let (status, _) = dify_request(
        &server,
        "PUT",
        "/api/v1/business-graph",
        None,
        "application/json",
        broken.to_string().as_bytes(),
    );
    assert_eq!(status, 400);
    // A document that names no list is a mistake, not "empty the graph".
    for empty in ["{}", "[]", "null", "{\"busineses\": []}"] {
        let (status, answer) = dify_request(
            &server,
            "PUT",
            "/api/v1/business-graph",
            None,
            "application/json",
            empty.as_bytes(),
        );
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (400, Some("INVALID_PARAMETER")),
            "{empty}: {answer}"
        );
    }
    let (_, graph) = dify_request(&server, "GET", "/api/v1/business-graph", None, "", b"");
    assert_eq!(graph["businesses"].as_array().unwrap().len(), 13);
    let apoc = [
        json!({"type": "node", "id": "1", "labels": ["Process"], "properties": {"process_id": "p_sign", "name": "签到领积分"}}),
        json!({"type": "node", "id": "2", "labels": ["Table"], "properties": {"resource_id": "r_sign", "name": "签到记录表", "table": "sign_log"}}),
        json!({"type": "node", "id": "3", "labels": ["Person"], "properties": {"name": "x"}}),
    ]
    .iter()
    .map(|l| l.to_string())
    .collect::<Vec<_>>()
    .join("\n");
    let (status, report) = dify_request(
        &server,
        "PUT",
        "/api/v1/business-graph?format=apoc",
        None,
        "application/x-ndjson",
        apoc.as_bytes(),
    );
    assert_eq!(status, 200, "{report}");
    assert_eq!(
        (report["businesses"].as_u64(), report["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    // The content type alone says the body is lines.
    let (status, by_type) = dify_request(
        &server,
        "PUT",
        "/api/v1/business-graph",
        None,
        "application/x-ndjson",
        apoc.as_bytes(),
    );
    assert_eq!((status, &by_type), (200, &report));
    server.stop();
    // Restarted without a model: the import is still there, and the chat says what is missing.
    let server = Server::start(data.path(), &["--kb-embedder", "same"]);
    let (_, found) = server.call("search_data_resources", json!({"query": "sign_log"}));
    assert_eq!(found["candidates"][0]["resource_id"], "r_sign", "{found}");
    assert_error(
        &server.call(
            "chat",
            json!({"messages": [{"role": "user", "content": "hi"}]}),
        ),
        404,
        "NOT_FOUND",
    );
    server.stop();
}
