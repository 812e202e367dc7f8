"""The calls an admin script makes through Dify's Python SDK (`KnowledgeBaseClient`), written by
hand from Dify's knowledge API documentation: the same methods, paths, JSON bodies and headers
(`Authorization: Bearer KEY` and `Content-Type: application/json` on every call, GET and DELETE
included, as the SDK sends them), against `atlas serve --demo` at ATLAS_URL.
"""

import urllib.parse


def test_the_sdk_s_calls_manage_a_knowledge_base(atlas_url, http, check):
    base = atlas_url + "/v1"

    def call(method, path, key, body=None, params=None):
        query = "?" + urllib.parse.urlencode(params) if params else ""
        return http(method, base + path + query, body, {"Authorization": f"Bearer {key}"})

    # create_dataset / list_datasets (a server without a token lets anyone create)
    status, dataset = call("POST", "/datasets", "unused", {"name": "售后知识"})
    check(status == 200 and dataset.get("api_key"), f"create_dataset: {status} {dataset}")
    dataset_id, key = dataset["id"], dataset["api_key"]
    status, listed = call("GET", "/datasets", key, params={"page": 1, "limit": 20})
    check(status == 200 and any(d["id"] == dataset_id for d in listed["data"]), f"list_datasets: {status}")

    # update_dataset (PATCH), get_dataset
    status, updated = call("PATCH", f"/datasets/{dataset_id}", key, {"name": "售后知识库", "description": "退换货"})
    check(status == 200 and updated["name"] == "售后知识库", f"update_dataset: {status} {updated}")
    status, got = call("GET", f"/datasets/{dataset_id}", key)
    check(status == 200 and got["description"] == "退换货", f"get_dataset: {status} {got}")

    # create_document_by_text with the SDK's default extra fields, batch_indexing_status
    body = {
        "indexing_technique": "high_quality",
        "process_rule": {"mode": "automatic"},
        "name": "退货.txt",
        "text": "七天无理由退货：签收后七天内可申请。\n\n退货运费：质量问题由商家承担。",
    }
    status, created = call("POST", f"/datasets/{dataset_id}/document/create_by_text", key, body)
    check(status == 200 and created["document"]["id"], f"create_document_by_text: {status} {created}")
    document_id, batch = created["document"]["id"], created["batch"]
    status, progress = call("GET", f"/datasets/{dataset_id}/documents/{batch}/indexing-status", key)
    check(status == 200 and progress["data"][0]["indexing_status"] == "completed", f"batch_indexing_status: {status}")
    status, documents = call("GET", f"/datasets/{dataset_id}/documents", key, params={"page": 1, "limit": 20, "keyword": "退货"})
    check(status == 200 and documents["total"] == 1, f"list_documents: {status} {documents}")

    # segments: add, query, update, delete
    status, added = call(
        "POST",
        f"/datasets/{dataset_id}/documents/{document_id}/segments",
        key,
        {"segments": [{"content": "能开专票吗？", "answer": "可以，下单时选择增值税专用发票。", "keywords": ["专票"]}]},
    )
    check(status == 200 and len(added["data"]) == 1, f"add_segments: {status} {added}")
    segment_id = added["data"][0]["id"]
    status, queried = call("GET", f"/datasets/{dataset_id}/documents/{document_id}/segments", key, params={"keyword": "专票"})
    check(status == 200 and [s["id"] for s in queried["data"]] == [segment_id], f"query_segments: {status} {queried}")
    status, found = call("POST", f"/datasets/{dataset_id}/retrieve", key, {"query": "专票能开吗"})
    check(status == 200 and found["records"][0]["segment"]["id"] == segment_id, f"an added segment is retrieved: {status}")
    status, changed = call(
        "POST",
        f"/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}",
        key,
        {"segment": {"content": "可以开增值税专用发票吗？", "answer": "可以，在订单详情页申请。", "keywords": ["专票", "发票"]}},
    )
    check(status == 200 and changed["data"]["answer"] == "可以，在订单详情页申请。", f"update_document_segment: {status} {changed}")
    status, hits = call("POST", f"/datasets/{dataset_id}/hit-testing", key, {"query": "增值税专用发票"})
    check(status == 200 and hits["records"][0]["segment"]["content"] == "可以，在订单详情页申请。", f"hit_testing finds the updated text: {status}")
    status, _ = call("DELETE", f"/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}", key)
    check(status == 204, f"delete_document_segment: {status}")
    status, queried = call("GET", f"/datasets/{dataset_id}/documents/{document_id}/segments", key)
    check(status == 200 and all(s["id"] != segment_id for s in queried["data"]), f"the deleted segment is gone: {status}")

    # metadata: create, list, rename, set on documents, filter by it
    status, field = call("POST", f"/datasets/{dataset_id}/metadata", key, {"type": "string", "name": "类别"})
    check(status == 200 and field["name"] == "类别", f"create_dataset_metadata: {status} {field}")
    status, renamed = call("PATCH", f"/datasets/{dataset_id}/metadata/{field['id']}", key, {"name": "分类"})
    check(status == 200 and renamed["name"] == "分类", f"update_dataset_metadata: {status} {renamed}")
    operation = [{"document_id": document_id, "metadata_list": [{"id": field["id"], "value": "退货", "name": "分类"}]}]
    status, result = call("POST", f"/datasets/{dataset_id}/documents/metadata", key, {"operation_data": operation})
    check(status == 200 and result == {"result": "success"}, f"update_documents_metadata: {status} {result}")
    status, fields = call("GET", f"/datasets/{dataset_id}/metadata", key)
    check(status == 200 and fields["doc_metadata"][0]["count"] == 1, f"get_dataset_metadata: {status} {fields}")
    condition = {"logical_operator": "and", "conditions": [{"name": "分类", "comparison_operator": "is", "value": "退货"}]}
    status, filtered = call("POST", f"/datasets/{dataset_id}/retrieve", key, {"query": "退货运费", "retrieval_model": {"metadata_filtering_conditions": condition}})
    check(status == 200 and len(filtered["records"]) > 0, f"retrieve filtered by the new field: {status} {filtered}")

    # tags
    status, tag = call("POST", "/datasets/tags", key, {"name": "售后"})
    check(status == 200 and tag["name"] == "售后", f"create tag: {status} {tag}")
    status, result = call("POST", "/datasets/tags/binding", key, {"tag_ids": [tag["id"]], "target_id": dataset_id})
    check(status == 200, f"bind_dataset_tags: {status} {result}")
    status, tags = call("GET", "/datasets/tags", key)
    check(status == 200 and any(t["id"] == tag["id"] and t["binding_count"] == 1 for t in tags), f"list_dataset_tags: {status} {tags}")
    status, bound = call("GET", f"/datasets/{dataset_id}/tags", key)
    check(status == 200 and bound["total"] == 1, f"get_dataset_tags: {status} {bound}")
    status, result = call("POST", "/datasets/tags/unbinding", key, {"tag_id": tag["id"], "target_id": dataset_id})
    status, bound = call("GET", f"/datasets/{dataset_id}/tags", key)
    check(status == 200 and bound["total"] == 0, f"unbind_dataset_tag: {status} {bound}")

    # errors in Dify's shape
    status, error = call("GET", "/datasets/no-such-thing/segments/x", key)
    check(status == 404 and error.get("code") == "not_found", f"an unknown route is Dify's 404: {status} {error}")
    status, error = call("PUT", f"/datasets/{dataset_id}", key, {})
    check(status == 405 and error.get("code") == "method_not_allowed", f"a wrong method is Dify's 405: {status} {error}")

    # delete_document, delete_dataset
    status, _ = call("DELETE", f"/datasets/{dataset_id}/documents/{document_id}", key)
    check(status == 204, f"delete_document: {status}")
    status, _ = call("DELETE", f"/datasets/{dataset_id}", key)
    check(status == 204, f"delete_dataset: {status}")
