//! Dify's knowledge routes on the real binary, filled and read with its commands beside them
//! (`atlas kb`); the routes alone are `atlas-server`'s tests.

use std::process::Command;

use serde_json::json;

use crate::common::*;

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
