//! Dify's knowledge routes on the real binary, with each dataset's own key.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;

fn assert_dify_error(resp: &(u16, Value), status: u16, code: &str) {
    assert_eq!(
        (resp.0, resp.1["status"].as_u64(), resp.1["code"].as_str()),
        (status, Some(status as u64), Some(code)),
        "{resp:?}"
    );
    assert!(
        resp.1["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{resp:?}"
    );
}

#[test]
fn dify_routes_serve_the_demo_dataset_with_its_own_key() {
    let tmp = tempfile::tempdir().unwrap();
    // A server token guards /api/v1; Dify's routes answer to each dataset's key instead.
    let server = Server::start(tmp.path(), &["--demo", "--token", "s3cret"]);
    let retrieve = format!("/v1/datasets/{DEMO_DATASET}/retrieve");
    let (status, body) = dify_post(
        &server,
        &retrieve,
        Some("dataset-demo-key"),
        r#"{"query": "退货运费谁出"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["query"]["content"], "退货运费谁出");
    let record = &body["records"][0];
    assert!(
        record["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("运费"),
        "{record}"
    );
    for key in [
        "id",
        "position",
        "document_id",
        "word_count",
        "tokens",
        "keywords",
        "index_node_id",
        "hit_count",
        "enabled",
        "status",
        "created_at",
        "document",
    ] {
        assert!(
            record["segment"].get(key).is_some(),
            "segment.{key} missing: {record}"
        );
    }
    assert!(
        record["child_chunks"].is_array()
            && record["files"].is_array()
            && record["tsne_position"].is_null()
            && record["score"]
                .as_f64()
                .is_some_and(|s| s > 0.0 && s <= 1.0)
    );
    // A partial retrieval_model, the hit-testing alias, and a threshold nothing reaches.
    let (status, body) = dify_post(
        &server,
        &format!("/v1/datasets/{DEMO_DATASET}/hit-testing"),
        Some("dataset-demo-key"),
        r#"{"query": "积分", "retrieval_model": {"top_k": 2}}"#,
    );
    assert_eq!(
        (status, body["records"].as_array().map(Vec::len)),
        (200, Some(2)),
        "{body}"
    );
    let (_, body) = dify_post(
        &server,
        &retrieve,
        Some("dataset-demo-key"),
        r#"{"query": "积分", "retrieval_model": {"search_method": "keyword_search", "reranking_enable": false, "top_k": 3, "score_threshold_enabled": true, "score_threshold": 0.99}}"#,
    );
    assert_eq!(body["records"], json!([]));

    assert_dify_error(
        &dify_post(&server, &retrieve, None, r#"{"query": "退款"}"#),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-wrong"),
            r#"{"query": "退款"}"#,
        ),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_post(
            &server,
            "/v1/datasets/6f1d7d1e-6b0a-4d1e-9f1e-00000000ffff/retrieve",
            Some("dataset-demo-key"),
            r#"{"query": "退款"}"#,
        ),
        404,
        "not_found",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            &json!({ "query": "长".repeat(251) }).to_string(),
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            r#"{"query": ""}"#,
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(&server, &retrieve, Some("dataset-demo-key"), "{not json"),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_post(
            &server,
            &retrieve,
            Some("dataset-demo-key"),
            r#"{"query": "退款", "retrieval_model": {"search_method": "magic"}}"#,
        ),
        400,
        "invalid_param",
    );

    // Dify's External Knowledge API: knowledge_id is the dataset.
    let external =
        |key: &str, body: Value| dify_post(&server, "/retrieval", Some(key), &body.to_string());
    let (status, body) = external(
        "dataset-demo-key",
        json!({ "knowledge_id": DEMO_DATASET, "query": "怎么开发票", "retrieval_setting": { "top_k": 2, "score_threshold": 0.0 } }),
    );
    assert_eq!(status, 200, "{body}");
    let first = &body["records"][0];
    assert!(
        first["content"].as_str().unwrap().contains("发票")
            && first["metadata"].is_object()
            && first["title"].is_string(),
        "{body}"
    );
    let (status, body) = external(
        "dataset-wrong",
        json!({ "knowledge_id": DEMO_DATASET, "query": "发票", "retrieval_setting": { "top_k": 1, "score_threshold": 0.0 } }),
    );
    assert_eq!(
        (status, body["error_code"].as_u64()),
        (403, Some(1002)),
        "{body}"
    );
    let (status, body) = external(
        "dataset-demo-key",
        json!({ "knowledge_id": "nope", "query": "发票", "retrieval_setting": { "top_k": 1, "score_threshold": 0.0 } }),
    );
    assert_eq!(
        (status, body["error_code"].as_u64()),
        (404, Some(2001)),
        "{body}"
    );
    // The server token still guards the graph's interfaces.
    let r = agent()
        .post(&format!("{}/api/v1/get_graph_stats", server.url))
        .header("Content-Type", "application/json")
        .send("{}")
        .unwrap();
    assert_eq!(r.status(), 401);
    server.stop();
    // The demo dataset and its hit counts are in the data folder.
    let hits = std::fs::read_to_string(tmp.path().join("kb").join(DEMO_DATASET).join("hits.json"))
        .unwrap();
    assert!(hits.contains(": "), "{hits}");
}

/// The knowledge base's file limit (10 MB), a whole number of 3-byte characters.
fn atlas_kb_limit() -> usize {
    10 * 1024 * 1024 / 3 * 3
}

/// Dify's create-by-file form: the file and the settings as a JSON string.
fn multipart(file_name: &str, file: &[u8], data: &str) -> (String, Vec<u8>) {
    let boundary = "atlas-test-boundary-7d1e";
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"data\"\r\nContent-Type: text/plain\r\n\r\n{data}\r\n").as_bytes());
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[test]
fn dify_knowledge_api_fills_a_running_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), &["--token", "admin-token"]);
    let json_type = "application/json";
    // Creating a dataset takes the server token; the answer carries the dataset's own key.
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            "/v1/datasets",
            None,
            json_type,
            br#"{"name": "faq"}"#,
        ),
        401,
        "unauthorized",
    );
    let (status, created) = dify_request(
        &server,
        "POST",
        "/v1/datasets",
        Some("admin-token"),
        json_type,
        r#"{"name": "售后 FAQ", "description": "客服问答"}"#.as_bytes(),
    );
    assert_eq!(status, 200, "{created}");
    let (id, key) = (
        created["id"].as_str().unwrap().to_string(),
        created["api_key"].as_str().unwrap().to_string(),
    );
    assert_eq!(
        (created["name"].as_str(), created["document_count"].as_u64()),
        (Some("售后 FAQ"), Some(0))
    );
    let (_, other) = dify_request(
        &server,
        "POST",
        "/v1/datasets",
        Some("admin-token"),
        json_type,
        br#"{"name": "other"}"#,
    );
    let (other_id, other_key) = (
        other["id"].as_str().unwrap().to_string(),
        other["api_key"].as_str().unwrap().to_string(),
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            "/v1/datasets",
            Some("admin-token"),
            json_type,
            br#"{"description": "no name"}"#,
        ),
        400,
        "invalid_param",
    );

    // While the server runs, the CLI may read the knowledge base but not write it.
    let data = tmp.path().to_str().unwrap();
    let listed = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["kb", "list", "--data", data])
        .output()
        .unwrap();
    assert!(
        listed.status.success() && String::from_utf8_lossy(&listed.stdout).contains(&id),
        "{listed:?}"
    );
    let refused = Command::new(env!("CARGO_BIN_EXE_atlas"))
        .args(["kb", "create", "--data", data, "x"])
        .output()
        .unwrap();
    assert!(
        !refused.status.success()
            && String::from_utf8_lossy(&refused.stderr).contains("/v1/datasets"),
        "{refused:?}"
    );

    // A question/answer table by text, then retrieved with the dataset's key.
    let docs = format!("/v1/datasets/{id}/document/create-by-text");
    let table = json!({ "name": "faq.csv", "text": "question,answer\n发票怎么开？,在订单详情页点击申请开票。\n多久发货？,付款后48小时内发货。\n" });
    let (status, made) = dify_request(
        &server,
        "POST",
        &docs,
        Some(&key),
        json_type,
        table.to_string().as_bytes(),
    );
    assert_eq!(status, 200, "{made}");
    let doc_id = made["document"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        (
            made["batch"].as_str(),
            made["document"]["doc_form"].as_str(),
            made["document"]["indexing_status"].as_str()
        ),
        (Some(doc_id.as_str()), Some("qa_model"), Some("completed"))
    );
    let (_, progress) = dify_request(
        &server,
        "GET",
        &format!("/v1/datasets/{id}/documents/{doc_id}/indexing-status"),
        Some(&key),
        "",
        b"",
    );
    assert_eq!(
        (
            progress["data"][0]["indexing_status"].as_str(),
            progress["data"][0]["total_segments"].as_u64()
        ),
        (Some("completed"), Some(2)),
        "{progress}"
    );
    let retrieve = format!("/v1/datasets/{id}/retrieve");
    let ask = |query: &str| {
        dify_post(
            &server,
            &retrieve,
            Some(&key),
            &json!({ "query": query }).to_string(),
        )
    };
    assert!(
        ask("开发票").1["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("申请开票")
    );

    // A Markdown file through Dify's multipart form, with metadata Atlas keeps for filtering.
    let (form_type, form) = multipart(
        "manual.md",
        "# 退货\n\n七天内可以无理由退货。\n\n# 保修\n\n电子产品保修一年。\n".as_bytes(),
        r#"{"indexing_technique": "high_quality", "doc_metadata": {"lang": "zh"}}"#,
    );
    let (status, made) = dify_request(
        &server,
        "POST",
        &format!("/v1/datasets/{id}/document/create-by-file"),
        Some(&key),
        &form_type,
        &form,
    );
    assert_eq!(
        (
            status,
            made["document"]["name"].as_str(),
            made["document"]["doc_metadata"]["lang"].as_str()
        ),
        (200, Some("manual.md"), Some("zh")),
        "{made}"
    );
    let manual_id = made["document"]["id"].as_str().unwrap().to_string();
    assert!(
        ask("保修多久").1["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("一年")
    );

    // Bad input: Dify's error, and nothing changed.
    let (form_type, binary) = multipart("scan.pdf", b"%PDF-1.7\x00\x01\x02\xff\xfe binary", "{}");
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &format!("/v1/datasets/{id}/document/create-by-file"),
            Some(&key),
            &form_type,
            &binary,
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&key),
            json_type,
            br#"{"name": "empty.txt"}"#,
        ),
        400,
        "invalid_param",
    );
    // A file just over the limit is read and refused; a body announced far over it is refused
    // from its header.
    let big = "问".repeat(atlas_kb_limit() / 3 + 1);
    let (form_type, form) = multipart("big.txt", big.as_bytes(), "{}");
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &format!("/v1/datasets/{id}/document/create-by-file"),
            Some(&key),
            &form_type,
            &form,
        ),
        413,
        "file_too_large",
    );
    let (form_type, _) = multipart("", b"", "");
    assert_dify_error(
        &server.announce_oversize(
            &format!("/v1/datasets/{id}/document/create-by-file"),
            &form_type,
            Some(&key),
        ),
        413,
        "file_too_large",
    );
    assert_dify_error(
        &server.announce_oversize(&docs, json_type, Some(&key)),
        413,
        "file_too_large",
    );
    assert_dify_error(
        &dify_request(&server, "POST", &docs, Some(&key), json_type, b"{not json"),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&other_key),
            json_type,
            table.to_string().as_bytes(),
        ),
        401,
        "unauthorized",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "POST",
            &docs,
            Some(&key),
            json_type,
            json!({ "name": "a.csv", "text": "name,price\nx,1\n" })
                .to_string()
                .as_bytes(),
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "GET",
            &format!("/v1/datasets/{id}/documents?limit=0"),
            Some(&key),
            "",
            b"",
        ),
        400,
        "invalid_param",
    );
    assert_dify_error(
        &dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{id}/documents/{other_id}"),
            Some(&key),
            "",
            b"",
        ),
        404,
        "not_found",
    );
    let (_, listed) = dify_request(
        &server,
        "GET",
        &format!("/v1/datasets/{id}/documents?page=1&limit=1"),
        Some(&key),
        "",
        b"",
    );
    assert_eq!(
        (
            listed["total"].as_u64(),
            listed["has_more"].as_bool(),
            listed["data"].as_array().map(Vec::len)
        ),
        (Some(2), Some(true), Some(1)),
        "{listed}"
    );

    // Replacing a document by text keeps its id and name; the old answers are gone.
    let update = json!({ "text": "question,answer\n发票怎么开？,发票在“发票管理”里申请。\n" });
    let (status, updated) = dify_request(
        &server,
        "POST",
        &format!("/v1/datasets/{id}/documents/{doc_id}/update-by-text"),
        Some(&key),
        json_type,
        update.to_string().as_bytes(),
    );
    assert_eq!(
        (
            status,
            updated["document"]["id"].as_str(),
            updated["document"]["name"].as_str()
        ),
        (200, Some(doc_id.as_str()), Some("faq.csv")),
        "{updated}"
    );
    let (_, found) = ask("开发票");
    assert!(
        found["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("发票管理"),
        "{found}"
    );
    assert!(!found.to_string().contains("48小时"), "{found}");

    // Deleting the manual and the other dataset; the server token opens any dataset.
    assert_eq!(
        dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{id}/documents/{manual_id}"),
            Some(&key),
            "",
            b""
        )
        .0,
        204
    );
    assert!(!ask("保修多久").1.to_string().contains("一年"));
    assert_eq!(
        dify_request(
            &server,
            "DELETE",
            &format!("/v1/datasets/{other_id}"),
            Some("admin-token"),
            "",
            b""
        )
        .0,
        204
    );
    assert_dify_error(
        &dify_post(
            &server,
            &format!("/v1/datasets/{other_id}/retrieve"),
            Some(&other_key),
            r#"{"query": "x"}"#,
        ),
        404,
        "not_found",
    );
    let (_, all) = dify_request(
        &server,
        "GET",
        "/v1/datasets?limit=100",
        Some("admin-token"),
        "",
        b"",
    );
    assert_eq!(
        (
            all["total"].as_u64(),
            all["data"][0]["document_count"].as_u64()
        ),
        (Some(1), Some(1)),
        "{all}"
    );
    server.stop();

    // Everything answered with success is on disk: a new server sees the same knowledge base.
    let server = Server::start(tmp.path(), &["--token", "admin-token"]);
    let (_, found) = dify_post(&server, &retrieve, Some(&key), r#"{"query": "开发票"}"#);
    assert!(
        found["records"][0]["segment"]["content"]
            .as_str()
            .unwrap()
            .contains("发票管理"),
        "{found}"
    );
    assert_eq!(
        dify_request(
            &server,
            "GET",
            &format!("/v1/datasets/{id}"),
            Some(&key),
            "",
            b""
        )
        .1["document_count"]
            .as_u64(),
        Some(1)
    );
    server.stop();
    assert!(!tmp.path().join("kb").join(&other_id).exists());
}
