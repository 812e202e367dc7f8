"""GET_KNOWLEDGE_DATA through a Dify-compatible knowledge base, as an ActionHandler extension."""

import json
import os
import subprocess
import time
import urllib.error
import urllib.request

from phone_agent.actions.handler import ActionHandler, ActionResult
from phone_agent.device_factory import DeviceType, get_device_factory


class KnowledgeBase:
    """A Dify dataset's retrieve API: ``POST {base}/v1/datasets/{id}/retrieve``."""

    def __init__(self, base_url, dataset_id, token="", timeout=15.0):
        self.url = f"{base_url.rstrip('/')}/v1/datasets/{dataset_id}/retrieve"
        self.token = token
        self.timeout = timeout

    @classmethod
    def from_env(cls):
        """The seed's variables; ``None`` when no knowledge base is configured."""
        base = os.environ.get("PHONE_AGENT_KNOWLEDGE_BASE_URL", "").strip()
        dataset = os.environ.get("PHONE_AGENT_KNOWLEDGE_DATASET_ID", "").strip()
        if not base or not dataset:
            return None
        return cls(base, dataset, os.environ.get("PHONE_AGENT_KNOWLEDGE_AUTH_TOKEN", ""))

    def retrieve(self, query):
        """The best record's content, or ``None`` when nothing was found."""
        body = json.dumps({"query": query}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(self.url, body, headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                found = json.load(response)
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:300]
            raise RuntimeError(f"the knowledge base answered {e.code}: {detail}") from None
        records = found.get("records") or []
        if not records:
            return None
        content = (records[0].get("segment") or {}).get("content", "").strip()
        return content or None


class AtlasActionHandler(ActionHandler):
    """phone-agent's ActionHandler plus ``do(action="GET_KNOWLEDGE_DATA", query="...")``.

    Extended through its public ``execute`` only: the lookup is answered here, every other action
    by phone-agent as it is.
    """

    def __init__(self, *args, knowledge=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.knowledge = knowledge if knowledge is not None else KnowledgeBase.from_env()

    def execute(self, action, screen_width, screen_height):
        if action.get("_metadata") == "do" and action.get("action") == "GET_KNOWLEDGE_DATA":
            return self.look_up(action)
        return super().execute(action, screen_width, screen_height)

    def press_enter(self):
        """Sends what was typed: the Enter key, on an Android or a HarmonyOS device."""
        if get_device_factory().device_type == DeviceType.HDC:
            command = ["hdc"] + (["-t", self.device_id] if self.device_id else []) + \
                ["shell", "uitest", "uiInput", "keyEvent", "2054"]
        else:
            command = ["adb"] + (["-s", self.device_id] if self.device_id else []) + \
                ["shell", "input", "keyevent", "KEYCODE_ENTER"]
        subprocess.run(command, capture_output=True, timeout=30, check=False)

    def look_up(self, action):
        """``GET_KNOWLEDGE_DATA``: the knowledge base's answer typed into the focused field and sent."""
        query = (action.get("query") or action.get("text") or "").strip()
        if not query:
            return ActionResult(False, False, "GET_KNOWLEDGE_DATA needs query=\"...\"")
        if self.knowledge is None:
            return ActionResult(False, False, "GET_KNOWLEDGE_DATA has no knowledge base: set "
                                "PHONE_AGENT_KNOWLEDGE_BASE_URL and PHONE_AGENT_KNOWLEDGE_DATASET_ID")
        try:
            answer = self.knowledge.retrieve(query)
        except (OSError, RuntimeError, ValueError) as e:
            return ActionResult(False, False, f"The knowledge base failed: {e}")
        if answer is None:
            return ActionResult(False, False,
                                f"The knowledge base has no answer for {query!r}; nothing was sent.")
        device = get_device_factory()
        ime = device.detect_and_set_adb_keyboard(self.device_id)
        try:
            device.clear_text(self.device_id)
            device.type_text(answer, self.device_id)
        finally:
            device.restore_keyboard(ime, self.device_id)
        self.press_enter()
        time.sleep(0.1)
        return ActionResult(True, False, f"Sent the knowledge base's answer: {answer}")
