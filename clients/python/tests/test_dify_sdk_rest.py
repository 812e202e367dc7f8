"""The rest of Dify's Python SDK (`KnowledgeBaseClient`), as `test_dify_admin.py`: its calls
written by hand from Dify's SDK and knowledge API documentation (method, path, body and headers
as the SDK sends them). Here: the built-in metadata fields, documents' status (enable, disable,
archive, un_archive), a file upload that replaces a document (`original_document_id`),
`update_document_by_file`, duplicating a dataset and creating one from a template, the RAG
pipeline calls Atlas does not have, and a server with a token
on which a dataset's own key does what the SDK asks of it.
"""

import json
import os
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

from conftest import _free_port, _wait_for, request_json


def multipart(url, key, fields, file_name, file_bytes):
    """A multipart POST as the SDK's file calls send it: the settings as JSON in `data`, the file
    in `file`; (status, the answer's JSON)."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        "Content-Type: text/plain\r\n\r\n".encode() + file_bytes + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    request = urllib.request.Request(url, data=b"".join(parts), method="POST", headers={
        "Authorization": f"Bearer {key}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode("utf-8"))


@pytest.fixture(scope="module")
def token_server(atlas_bin):
    """`atlas serve` with a server token, on a fresh folder: (its /v1 address, the token)."""
    work = tempfile.mkdtemp(prefix="atlas-dify-token-")
    port, token = _free_port(), "server-token-" + uuid.uuid4().hex
    child = subprocess.Popen(
        [atlas_bin, "serve", "--data", os.path.join(work, "data"), "--addr", f"127.0.0.1:{port}",
         "--token", token, "--embedder", "hash", "--kb-embedder", "same"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", 600)
        yield f"http://127.0.0.1:{port}/v1", token
    finally:
        child.kill()
        child.wait()


def test_the_rest_of_the_sdk_on_a_server_with_a_token(token_server, check):
    base, token = token_server

    def call(method, path, key, body=None, params=None):
        query = "?" + urllib.parse.urlencode(params) if params else ""
        return request_json(method, base + path + query, body, {"Authorization": f"Bearer {key}"})

    # Creating a dataset takes the server token; the dataset's own key does the rest.
    status, refused = call("POST", "/datasets", "dataset-not-a-key", {"name": "退换货"})
    check(status == 401 and refused["code"] == "unauthorized", f"create_dataset without the token: {status}")
    status, dataset = call("POST", "/datasets", token, {"name": "退换货"})
    check(status == 200, f"create_dataset: {status} {dataset}")
    ds, key = dataset["id"], dataset["api_key"]
    status, tag = call("POST", "/datasets/tags", token, {"name": "售后"})
    check(status == 200, f"create a tag with the token: {status} {tag}")

    # list_dataset_tags, bind_dataset_tags and get_dataset_tags with the dataset's key.
    status, tags = call("GET", "/datasets/tags", key)
    check(status == 200 and [t["name"] for t in tags] == ["售后"], f"list_dataset_tags with a dataset key: {status} {tags}")
    status, _ = call("POST", "/datasets/tags/binding", key, {"tag_ids": [tag["id"]], "target_id": ds})
    status, bound = call("GET", f"/datasets/{ds}/tags", key)
    check(status == 200 and bound["total"] == 1, f"get_dataset_tags with a dataset key: {status} {bound}")
    status, refused = call("POST", "/datasets/tags", key, {"name": "别的"})
    check(status == 401, f"a dataset key does not create the server's tags: {status} {refused}")

    # create_document_by_text (two documents), then the built-in metadata fields.
    docs = {}
    for name, text in [("退货.txt", "七天无理由退货：签收后七天内可申请。"), ("发票.txt", "电子发票在订单完成后开具。")]:
        status, created = call("POST", f"/datasets/{ds}/document/create_by_text", key,
                               {"indexing_technique": "high_quality", "process_rule": {"mode": "automatic"},
                                "name": name, "text": text})
        check(status == 200, f"create_document_by_text: {status} {created}")
        docs[name] = created["document"]["id"]
    status, built_in = call("GET", f"/datasets/{ds}/metadata/built-in", key)
    names = [f["name"] for f in built_in.get("fields", [])] if status == 200 else []
    check(names == ["document_name", "uploader", "upload_date", "last_update_date", "source"],
          f"get_built_in_metadata: {status} {built_in}")
    status, result = call("POST", f"/datasets/{ds}/metadata/built-in/enable", key, {})
    check(status == 200 and result == {"result": "success"}, f"manage_built_in_metadata('enable'): {status} {result}")
    status, fields = call("GET", f"/datasets/{ds}/metadata", key)
    check(status == 200 and fields["built_in_field_enabled"] is True, f"get_dataset_metadata after enable: {fields}")
    status, listed = call("GET", f"/datasets/{ds}/documents", key)
    check(all(d["doc_metadata"].get("document_name") == d["name"] for d in listed["data"]),
          f"documents show the built-in values: {listed}")
    status, result = call("POST", f"/datasets/{ds}/metadata/built-in/disable", key, {})
    status, fields = call("GET", f"/datasets/{ds}/metadata", key)
    check(fields["built_in_field_enabled"] is False, f"manage_built_in_metadata('disable'): {fields}")
    status, refused = call("POST", f"/datasets/{ds}/metadata/built-in/toggle", key, {})
    check(status == 400 and refused["code"] == "invalid_param", f"an unknown built-in action: {status} {refused}")

    # batch_update_document_status: a disabled document is not retrieved, an enabled one is.
    def retrieved(query):
        status, found = call("POST", f"/datasets/{ds}/retrieve", key, {"query": query})
        check(status == 200, f"retrieve: {status} {found}")
        return {r["segment"]["document_id"] for r in found["records"]}

    check(docs["退货.txt"] in retrieved("退货"), "the document is retrieved before it is disabled")
    status, result = call("PATCH", f"/datasets/{ds}/documents/status/disable", key, {"document_ids": [docs["退货.txt"]]})
    check(status == 200 and result == {"result": "success"}, f"batch_update_document_status('disable'): {status} {result}")
    check(docs["退货.txt"] not in retrieved("退货"), "a disabled document is not retrieved")
    status, got = call("GET", f"/datasets/{ds}/documents/{docs['退货.txt']}", key)
    check(got["enabled"] is False and got["display_status"] == "disabled", f"the document says it is disabled: {got}")
    status, result = call("PATCH", f"/datasets/{ds}/documents/status/enable", key, {"document_ids": [docs["退货.txt"]]})
    check(status == 200 and docs["退货.txt"] in retrieved("退货"), "enabled again, it is retrieved")
    status, refused = call("PATCH", f"/datasets/{ds}/documents/status/disable", key,
                           {"document_ids": [docs["发票.txt"], "no-such-document"]})
    check(status == 404, f"an unknown document among them: {status} {refused}")
    check(docs["发票.txt"] in retrieved("发票"), "and nothing was changed")
    status, _ = call("PATCH", f"/datasets/{ds}/documents/status/archive", key, {"document_ids": [docs["发票.txt"]]})
    check(docs["发票.txt"] not in retrieved("发票"), "an archived document is not retrieved")
    status, refused = call("POST", f"/datasets/{ds}/documents/{docs['发票.txt']}/update_by_text", key,
                           {"name": "发票.txt", "text": "改"})
    check(status == 403 and refused["code"] == "archived_document_immutable", f"an archived document is not editable: {status} {refused}")
    status, _ = call("PATCH", f"/datasets/{ds}/documents/status/un_archive", key, {"document_ids": [docs["发票.txt"]]})
    check(docs["发票.txt"] in retrieved("发票"), "un-archived, it is retrieved")

    # create_document_by_file with original_document_id replaces that document.
    settings = {"process_rule": {"mode": "automatic"}, "indexing_technique": "high_quality",
                "original_document_id": docs["退货.txt"]}
    status, replaced = multipart(f"{base}/datasets/{ds}/document/create_by_file", key,
                                 {"data": json.dumps(settings)}, "退货规则.txt", "退货须保持商品完好，十五天内可退。".encode())
    check(status == 200 and replaced["document"]["id"] == docs["退货.txt"], f"create_document_by_file(original_document_id): {status} {replaced}")
    status, listed = call("GET", f"/datasets/{ds}/documents", key)
    check(listed["total"] == 2, f"no new document beside the replaced one: {listed}")
    status, found = call("POST", f"/datasets/{ds}/retrieve", key, {"query": "十五天"})
    check(found["records"] and "十五天" in found["records"][0]["segment"]["content"], f"the new text is retrieved: {found}")

    # update_document_by_file: the SDK sends `data` as "{}" when there are no settings.
    status, updated = multipart(f"{base}/datasets/{ds}/documents/{docs['发票.txt']}/update_by_file", key,
                                {"data": "{}"}, "发票说明.txt", "纸质发票随货寄出。".encode())
    check(status == 200 and updated["document"]["id"] == docs["发票.txt"], f"update_document_by_file: {status} {updated}")

    # duplicate_dataset: the server token makes a copy, its documents and metadata fields with
    # it, under ids of their own, opened by the copy's own key; the source is unchanged.
    status, field = call("POST", f"/datasets/{ds}/metadata", key, {"type": "string", "name": "类别"})
    check(status == 200, f"create_dataset_metadata: {status} {field}")
    status, refused = call("POST", f"/datasets/{ds}/duplicate", key, {"name": "退换货（副本）"})
    check(status == 401, f"a dataset key does not create datasets, copies neither: {status} {refused}")
    status, copy = call("POST", f"/datasets/{ds}/duplicate", token, {"name": "退换货（副本）"})
    check(status == 200 and copy["name"] == "退换货（副本）" and copy["id"] != ds, f"duplicate_dataset: {status} {copy}")
    copy_id, copy_key = copy["id"], copy["api_key"]
    status, listed = call("GET", f"/datasets/{ds}/documents", key)
    status, copied = call("GET", f"/datasets/{copy_id}/documents", copy_key)
    check(status == 200 and sorted(d["name"] for d in copied["data"]) == sorted(d["name"] for d in listed["data"])
          and not {d["id"] for d in copied["data"]} & {d["id"] for d in listed["data"]},
          f"the copy holds the documents under ids of its own: {copied}")
    status, found = call("POST", f"/datasets/{copy_id}/retrieve", copy_key, {"query": "十五天"})
    check(found["records"] and "十五天" in found["records"][0]["segment"]["content"], f"the copy is retrieved from: {found}")
    status, fields = call("GET", f"/datasets/{copy_id}/metadata", copy_key)
    check([f["name"] for f in fields["doc_metadata"]] == ["类别"], f"the copy has the metadata fields: {fields}")
    status, refused = call("GET", f"/datasets/{copy_id}", key)
    check(status in (401, 403), f"the source's key does not open the copy: {status}")
    status, refused = call("POST", "/datasets/no-such-dataset/duplicate", token, {"name": "无"})
    check(status == 404 and refused["code"] == "not_found", f"duplicate of no dataset: {status} {refused}")

    # create_dataset_from_template: a template is a dataset (by name or id); the new one takes its
    # settings, not its documents.
    status, made = call("POST", "/datasets/from-template", token,
                        {"template_name": "退换货", "name": "退换货（新）", "description": None})
    check(status == 200 and made["name"] == "退换货（新）" and made["document_count"] == 0,
          f"create_dataset_from_template: {status} {made}")
    status, fields = call("GET", f"/datasets/{made['id']}/metadata", made["api_key"])
    check([f["name"] for f in fields["doc_metadata"]] == ["类别"], f"it has the template's fields: {fields}")
    status, refused = call("POST", "/datasets/from-template", token, {"template_name": "没有这个模板", "name": "无"})
    check(status == 404, f"an unknown template: {status} {refused}")

    # The RAG pipeline calls: Atlas has no pipelines; each is Dify's 404 in Dify's shape.
    for method, path, body in [
        ("GET", f"/datasets/{ds}/pipeline/datasource-plugins", None),
        ("POST", f"/datasets/{ds}/pipeline/datasource/nodes/n1/run", {"inputs": {}, "datasource_type": "local_file"}),
        ("POST", f"/datasets/{ds}/pipeline/run", {"inputs": {}, "datasource_type": "local_file",
                                                  "datasource_info_list": [], "start_node_id": "n1"}),
    ]:
        status, answer = call(method, path, key, body)
        check(status == 404 and answer["code"] == "not_found", f"{method} {path}: {status} {answer}")
    # upload_pipeline_file: a multipart upload to a route Atlas does not have is its 404, not a
    # refusal of the upload's content type.
    status, answer = multipart(f"{base}/datasets/pipeline/file-upload", key, {}, "说明.txt", "流水线".encode())
    check(status == 404 and answer["code"] == "not_found", f"upload_pipeline_file: {status} {answer}")

    # delete_dataset with its own key.
    status, _ = call("DELETE", f"/datasets/{ds}", key)
    check(status == 204, f"delete_dataset: {status}")


def test_the_server_and_its_openapi_document_agree(token_server, check):
    """Where schemathesis once found the server and the schema disagreeing: each case against the
    schema the server serves (at /openapi.json too) and the server's answer."""
    base, token = token_server
    root = base[: -len("/v1")]
    status, document = request_json("GET", root + "/openapi.json", None, {"Authorization": f"Bearer {token}"})
    status_api, document_api = request_json("GET", root + "/api/v1/openapi.json", None, {"Authorization": f"Bearer {token}"})
    check(status == 200 and document == document_api, "/openapi.json serves the API's document")

    def resolved(schema, depth=0):
        """The schema with its references to the document's components replaced by them."""
        if isinstance(schema, list):
            return [resolved(item, depth) for item in schema]
        if not isinstance(schema, dict) or depth > 8:
            return schema
        ref = schema.get("$ref", "")
        if ref.startswith("#/components/schemas/"):
            named = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
            return resolved({**named, **{k: v for k, v in schema.items() if k != "$ref"}}, depth + 1)
        return {key: resolved(value, depth) for key, value in schema.items()}

    def body_schema(method, path):
        return resolved(document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"])

    def call(method, path, body=None):
        return request_json(method, base + path, body, {"Authorization": f"Bearer {key}"})

    status, dataset = request_json("POST", base + "/datasets", {"name": "契约"}, {"Authorization": f"Bearer {token}"})
    ds, key = dataset["id"], dataset["api_key"]

    # A document's name may be 255 characters, and the schema says so.
    create = body_schema("post", "/v1/datasets/{dataset_id}/document/create-by-text")
    check(create["properties"]["name"]["maxLength"] == 255, f"create-by-text's name: {create}")
    status, created = call("POST", f"/datasets/{ds}/document/create_by_text", {"name": "名" * 105, "text": "正文：发票七天内开具。"})
    check(status == 200, f"a 105-character name is taken: {status} {created}")
    doc = created["document"]["id"]
    status, refused = call("POST", f"/datasets/{ds}/document/create_by_text", {"name": "名" * 256, "text": "正文"})
    check(status == 400, f"a 256-character name is refused: {status}")

    # operation_data needs at least one item, on both sides.
    metadata = body_schema("post", "/v1/datasets/{dataset_id}/documents/metadata")
    check(metadata["properties"]["operation_data"]["minItems"] == 1, f"operation_data's schema: {metadata}")
    status, refused = call("POST", f"/datasets/{ds}/documents/metadata", {"operation_data": []})
    check(status == 400 and refused["code"] == "invalid_param", f"an empty operation_data: {status} {refused}")

    # Segments are objects with content; the schema says it.
    segments = body_schema("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments")
    check(segments["properties"]["segments"]["items"]["required"] == ["content"], f"segments' items: {segments}")
    status, refused = call("POST", f"/datasets/{ds}/documents/{doc}/segments", {"segments": [None, None]})
    check(status == 400, f"null segments are refused: {status} {refused}")
    segment = body_schema("post", "/v1/datasets/{dataset_id}/documents/{document_id}/segments/{segment_id}")
    check(segment["properties"]["segment"]["required"] == ["content"], f"a segment's schema: {segment}")

    # update-by-text: a name, a text, or both; `{}` is refused and the schema says why.
    update = body_schema("post", "/v1/datasets/{dataset_id}/documents/{document_id}/update-by-text")
    check(len(update["anyOf"]) == 2, f"update-by-text's schema: {update}")
    status, refused = call("POST", f"/datasets/{ds}/documents/{doc}/update-by-text", {})
    check(status == 400, f"an empty update: {status} {refused}")
    status, renamed = call("POST", f"/datasets/{ds}/documents/{doc}/update-by-text", {"name": "发票.txt"})
    check(status == 200 and renamed["document"]["name"] == "发票.txt", f"a name alone renames: {status} {renamed}")
    status, found = call("POST", f"/datasets/{ds}/retrieve", {"query": "发票"})
    check(found["records"] and "七天" in found["records"][0]["segment"]["content"], f"and keeps the content: {found}")

    # A metadata field's type is one of three, on both sides.
    field = body_schema("post", "/v1/datasets/{dataset_id}/metadata")
    check(field["properties"]["type"]["enum"] == ["string", "number", "time"], f"the type's schema: {field}")
    status, refused = call("POST", f"/datasets/{ds}/metadata", {"type": "0", "name": "类别"})
    check(status == 400, f"type \"0\" is refused: {status} {refused}")
