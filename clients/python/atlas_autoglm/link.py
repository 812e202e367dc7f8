"""Atlas's graph for one run of a phone-agent task, over Atlas's HTTP API.

What it does is what ``atlas agent`` does (crates/apps/atlas-agent/src/graph.rs): match each screen to
a page (adding it when new), report each executed step with the task as intent and the run as
session, ask for the next action and take it only at a stated confidence of ``fast_path`` or
more, finish only where a remembered session finished, and say how the run ended.
"""

import hashlib
import json
import subprocess
import urllib.error
import urllib.request
import uuid
import xml.etree.ElementTree as ET


class AtlasError(RuntimeError):
    """Atlas answered with an error, or could not be reached."""


def _widgets(xml):
    """The widgets of a ``uiautomator dump``, read as Atlas reads them: nodes with a text or a
    description, or that one can click, check or type into."""
    widgets = []
    for node in ET.fromstring(xml).iter("node"):
        a = node.attrib
        text = (a.get("text") or "").strip() or (a.get("content-desc") or "").strip()
        cls = a.get("class", "")
        field = "EditText" in cls
        actionable = field or any(a.get(k) == "true" for k in ("clickable", "checkable", "long-clickable"))
        bounds = a.get("bounds", "")
        nums = [int(n) for n in bounds.replace("][", ",").strip("[]").split(",") if n.strip().lstrip("-").isdigit()]
        if (text or actionable) and len(nums) == 4 and nums[2] > nums[0] and nums[3] > nums[1]:
            widgets.append({"id": a.get("resource-id", "").rsplit(":id/", 1)[-1], "text": text,
                            "type": cls.rsplit(".", 1)[-1], "rect": nums, "field": field})
    return widgets


def _widget_at(widgets, x, y):
    """The smallest widget under a point."""
    under = [w for w in widgets if w["rect"][0] <= x < w["rect"][2] and w["rect"][1] <= y < w["rect"][3]]
    return min(under, key=lambda w: (w["rect"][2] - w["rect"][0]) * (w["rect"][3] - w["rect"][1]), default=None)


def _centre(w):
    l, t, r, b = w["rect"]
    return (l + r) // 2, (t + b) // 2


class AtlasLink:
    """One run's link to the graph of ``app_id`` in the Atlas at ``url``."""

    def __init__(self, url, app_id, fast_path=0.95, token=None, session=None, timeout=30.0):
        self.url = url.rstrip("/")
        self.app_id = app_id
        self.fast_path = fast_path
        self.token = token
        self.timeout = timeout
        self.reset(session)

    def reset(self, session=None):
        """A new run: a new session, nothing pending."""
        self.session = session or f"autoglm-{uuid.uuid4().hex[:12]}"
        self._pending = None
        self._focused = None
        self._last = None
        self._reported = False
        self._unreplayable = False

    def call(self, name, **body):
        data = json.dumps({k: v for k, v in body.items() if v is not None}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(f"{self.url}/api/v1/{name}", data, headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as e:
            try:
                error = json.load(e).get("error", {})
            except ValueError:
                error = {}
            raise AtlasError(f"{name}: {e.code} {error.get('code', '')} {error.get('message', '')}".strip()) from None
        except OSError as e:
            raise AtlasError(f"{name}: Atlas at {self.url} is unreachable: {e}") from None

    def parse(self, reply):
        """The first well-formed action of a model's reply, as Atlas's parser reads it (prose,
        tags, several actions, quotes of either kind, a missing closing parenthesis); ``None``
        with the reason when nothing parses."""
        parsed = self.call("parse_agent_reply", reply=reply)
        return parsed.get("action"), parsed.get("error")

    @staticmethod
    def screen(device_id=None):
        """The screen's ``uiautomator dump`` and its widgets, through adb."""
        prefix = ["adb"] + (["-s", device_id] if device_id else [])
        subprocess.run(prefix + ["shell", "uiautomator", "dump", "/sdcard/window_dump.xml"],
                       capture_output=True, timeout=30, check=False)
        xml = subprocess.run(prefix + ["exec-out", "cat", "/sdcard/window_dump.xml"],
                             capture_output=True, timeout=30, check=False).stdout.decode("utf-8", "replace")
        if "<hierarchy" not in xml:
            raise AtlasError(f"no uiautomator dump from {device_id or 'the device'}")
        return xml, _widgets(xml)

    def arrive(self, xml, widgets, task):
        """The page of this screen (matched, or added), after reporting the step that led here."""
        ui = {"dump": xml}
        try:
            matched = self.call("match_current_page", app_id=self.app_id, ui_hierarchy=ui)
        except AtlasError as e:
            # A new app has no pages yet: that is "nothing matches", not a failure.
            if "NOT_FOUND" not in str(e):
                raise
            matched = {}
        if matched.get("matched"):
            page = matched["page"]["page_id"]
        else:
            title = next((w["text"] for w in widgets if w["text"]), "screen")[:40]
            shape = "\0".join(sorted(f"{w['type']}|{w['id']}|{w['text']}" for w in widgets))
            name = f"{title} {hashlib.sha256(shape.encode()).hexdigest()[:6]}"
            page = self.call("add_page", app_id=self.app_id, page_name=name, ui_hierarchy=ui)["page_id"]
        if self._last and self._last[0] == page:
            self._last = (page, self._last[1], False)
        elif self._last:
            self._last = (self._last[0], self._last[1], True)
        if self._pending:
            from_page, action, before, focus = self._pending
            did_nothing = not focus and before == widgets
            self.call("report_transition", app_id=self.app_id, from_page=from_page, to_page=page,
                      action=action, success=not did_nothing, session_id=self.session, intent=task,
                      reason="the screen did not change" if did_nothing else None)
            self._reported = True
            self._pending = None
        return page

    def suggest(self, page, task, widgets, size):
        """``(action dict, focus point, confidence, hint)``; the action is ``None`` unless the
        graph is sure."""
        answer = self.call("get_next_action", app_id=self.app_id, intent=task, current_page=page,
                           session_id=self.session)
        action = answer.get("action")
        confidence = (action or {}).get("confidence") or answer.get("confidence") or 0.0
        hint = {"suggested": action["description"] if action else ("finish" if answer.get("is_complete") else "unknown"),
                "confidence": round(confidence, 3)}
        # An action that changed nothing here is not repeated without asking.
        if self._last and not self._last[2] and self._last[0] == page and self._last[1] == action:
            confidence = 0.0
        if confidence < self.fast_path:
            return None, None, confidence, hint
        if action is None:
            # A finish ends the run: only where a remembered session of the task ended.
            if answer.get("is_complete") and answer.get("basis") == "memory":
                return {"_metadata": "finish", "message": "done (the graph remembers this task ending here)"}, None, confidence, hint
            return None, None, confidence, hint
        resolved = self._resolve(action, widgets, size)
        if resolved is None:
            return None, None, confidence, hint
        self._last = (page, action, False)
        return resolved[0], resolved[1], confidence, hint

    @staticmethod
    def _resolve(action, widgets, size):
        kind = action.get("action_type", "")
        if kind == "back":
            return {"_metadata": "do", "action": "Back"}, None
        wid, text = action.get("widget_id") or "", (action.get("widget_text") or "").strip()
        pool = [w for w in widgets if wid and w["id"] == wid] or widgets
        if len(pool) == 1 and (wid or not text or pool[0]["text"] == text):
            chosen = pool
        else:
            chosen = [w for w in pool if text and w["text"] == text]
        if len(chosen) != 1:
            return None
        x, y = _centre(chosen[0])
        element = [x * 1000 // size[0], y * 1000 // size[1]]
        if kind == "input":
            return {"_metadata": "do", "action": "Type", "text": action.get("input_text", "")}, (x, y)
        if kind in ("long_click", "long_press"):
            return {"_metadata": "do", "action": "Long Press", "element": element}, None
        return {"_metadata": "do", "action": "Tap", "element": element}, None

    def executed(self, page, action, widgets, size, focus=None):
        """Remembers what ran from ``page``, to report it when the next screen is known."""
        if page is None:
            return
        if focus is not None:
            self._focused = _widget_at(widgets, *focus)
        name = action.get("action")
        reported, is_focus = None, False
        if name == "Back":
            reported = {"type": "back"}
        elif name == "Tap" and action.get("element"):
            x = action["element"][0] * size[0] // 1000
            y = action["element"][1] * size[1] // 1000
            w = _widget_at(widgets, x, y)
            if w is not None:
                if w["field"]:
                    self._focused, is_focus = w, True
                reported = {"type": "click", "widget": w["id"], "widget_text": w["text"]}
        elif name in ("Type", "Type_Name") and self._focused is not None:
            w = self._focused
            reported = {"type": "input", "widget": w["id"], "widget_text": w["text"] or w["id"],
                        "input_text": action.get("text", "")}
        if reported is None and name in ("Type", "Type_Name", "Swipe", "Long Press", "Double Tap", "GET_KNOWLEDGE_DATA"):
            self._unreplayable = True
        self._pending = (page, reported, widgets, is_focus) if reported else None

    def end(self, task, finished):
        """Says how the run ended: only a finished run whose every step the graph saw is
        replayed to the next agent."""
        if not self._reported:
            return
        self.call("end_session", app_id=self.app_id, session_id=self.session, intent=task,
                  finished=bool(finished and not self._unreplayable))
