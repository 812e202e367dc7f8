"""Seed 002's GET_KNOWLEDGE_DATA client, its logic unchanged (KnowledgeConfig.from_env, urllib POST
with a Bearer header, records[0].segment.content), against `atlas serve --demo`.

The environment names the server as the seed's agent would be configured:
PHONE_AGENT_KNOWLEDGE_BASE_URL, PHONE_AGENT_KNOWLEDGE_DATASET_ID, PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN.
"""

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass


@dataclass(frozen=True)
class KnowledgeConfig:
    base_url: str = "http://xxxx"
    dataset_id: str = "tokenxxxxxxxx"
    timeout_seconds: float = 10.0
    auth_token: str = ""

    @property
    def retrieve_url(self) -> str:
        return f"{self.base_url}/v1/datasets/{self.dataset_id}/retrieve"

    @staticmethod
    def from_env() -> "KnowledgeConfig":
        base_url = os.getenv("PHONE_AGENT_KNOWLEDGE_BASE_URL")
        dataset_id = os.getenv("PHONE_AGENT_KNOWLEDGE_DATASET_ID")
        timeout = os.getenv("PHONE_AGENT_KNOWLEDGE_TIMEOUT_SECONDS")
        auth_token = os.getenv("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN") or os.getenv("PHONE_AGENT_KNOWLEDGE_TOKEN")
        cfg = KnowledgeConfig()
        if base_url:
            cfg = KnowledgeConfig(base_url=base_url, dataset_id=cfg.dataset_id, timeout_seconds=cfg.timeout_seconds, auth_token=cfg.auth_token)
        if dataset_id:
            cfg = KnowledgeConfig(base_url=cfg.base_url, dataset_id=dataset_id, timeout_seconds=cfg.timeout_seconds, auth_token=cfg.auth_token)
        if timeout:
            try:
                cfg = KnowledgeConfig(base_url=cfg.base_url, dataset_id=cfg.dataset_id, timeout_seconds=float(timeout), auth_token=cfg.auth_token)
            except ValueError:
                pass
        if auth_token:
            cfg = KnowledgeConfig(base_url=cfg.base_url, dataset_id=cfg.dataset_id, timeout_seconds=cfg.timeout_seconds, auth_token=auth_token)
        return cfg


def get_knowledge_data(query):
    """The seed's _handle_get_knowledge_data up to the reply text (the ADB typing is the phone's)."""
    if not query or not isinstance(query, str):
        return (False, "Missing query")
    cfg = KnowledgeConfig.from_env()
    payload = json.dumps({"query": query}, ensure_ascii=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "*/*"}
    token = (cfg.auth_token or "").strip()
    if token:
        headers["Authorization"] = token if token.lower().startswith("bearer ") else f"Bearer {token}"
    req = urllib.request.Request(cfg.retrieve_url, data=payload, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=cfg.timeout_seconds) as resp:
            raw = resp.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return (False, f"Knowledge API HTTP error: {e.code}")
    except urllib.error.URLError as e:
        return (False, f"Knowledge API URL error: {e.reason}")
    data = json.loads(raw)
    records = data.get("records")
    if not records:
        result_text = "未检索到相关知识"
    else:
        segment = (records[0] or {}).get("segment") or {}
        result_text = segment.get("content") or "未检索到相关知识"
    return (True, result_text)



def test_the_seeds_knowledge_client_gets_the_shops_answers(atlas_url, demo_dataset, monkeypatch, check):
    dataset, key = demo_dataset
    monkeypatch.setenv("PHONE_AGENT_KNOWLEDGE_BASE_URL", atlas_url)
    monkeypatch.setenv("PHONE_AGENT_KNOWLEDGE_DATASET_ID", dataset)
    monkeypatch.setenv("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN", key)
    ok, text = get_knowledge_data("退货运费是谁出的")
    check(ok and "运费" in text and "承担" in text, "a customer's question gets the shop's answer: " + text)
    ok, text = get_knowledge_data("发票开错了怎么办")
    check(ok and "重开" in text or "作废" in text, "another phrasing, another answer: " + text)
    monkeypatch.setenv("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN", "dataset-wrong-key")
    ok, text = get_knowledge_data("怎么退款")
    check(not ok and text.endswith("401"), "a wrong key is refused with HTTP 401: " + text)
