//! Dify's knowledge routes, with each dataset's own key.

use serde_json::{Value, json};

use crate::common::*;

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
