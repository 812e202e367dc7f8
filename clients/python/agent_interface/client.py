"""A thin JSON-over-HTTP client: each seed-000 interface is ``POST /api/v1/{name}``."""

import json
import os
import time
import urllib.error
import urllib.request

#: How many times a call refused for now (503 with ``Retry-After``: the server's disk is full,
#: its database away, or it is busy) is tried again. Nothing was written by the refused call,
#: so trying again counts it once.
RETRIES = 2
#: The longest a call waits in all for the server to take it again.
MAX_RETRY_WAIT = 10.0


class KGError(Exception):
    """An error answered in seed 000's format: ``code``, ``message``, ``details``, ``status``."""

    def __init__(self, code, message, details=None, status=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.status = status
        #: Seconds the server asked to wait before trying again (a 503 with ``Retry-After``).
        self.retry_after = None


class KGClient:
    """Client of an ``atlas serve`` instance."""

    def __init__(self, base_url=None, token=None, timeout=30.0):
        self.base_url = (base_url or os.environ.get("ATLAS_URL") or "http://127.0.0.1:7700").rstrip("/")
        self.token = token if token is not None else os.environ.get("ATLAS_TOKEN")
        self.timeout = timeout

    def call(self, name, **params):
        """Calls interface ``name`` with ``params`` (None values are left out). A refusal for now
        (503 with ``Retry-After``) is tried again after the time it asks, ``RETRIES`` times at
        most and ``MAX_RETRY_WAIT`` seconds in all; then its ``KGError`` is raised."""
        body = json.dumps({k: v for k, v in params.items() if v is not None}, ensure_ascii=False).encode("utf-8")
        waited = 0.0
        for attempt in range(RETRIES + 1):
            try:
                return self._call_once(name, body)
            except KGError as e:
                wait = e.retry_after
                if wait is None or attempt == RETRIES or waited + wait > MAX_RETRY_WAIT:
                    raise
                time.sleep(wait)
                waited += wait

    def _call_once(self, name, body):
        request = urllib.request.Request(
            f"{self.base_url}/api/v1/{name}", data=body, method="POST",
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raw = e.read().decode("utf-8", "replace")
            try:
                error = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                error = {"code": "HTTP_ERROR", "message": raw or str(e)}
            failure = KGError(error.get("code"), error.get("message"), error.get("details"), e.code)
            if e.code == 503:
                try:
                    failure.retry_after = float(e.headers.get("Retry-After", ""))
                except ValueError:
                    pass
            raise failure from None

    # 1. core queries
    def query_path(self, app_id, intent, current_page=None, max_steps=None, include_history=None):
        return self.call("query_path", app_id=app_id, intent=intent, current_page=current_page,
                         max_steps=max_steps, include_history=include_history)

    def get_next_action(self, current_page, intent, app_id=None, session_id=None, app_version=None,
                        explain=None):
        return self.call("get_next_action", current_page=current_page, intent=intent, app_id=app_id,
                         session_id=session_id, app_version=app_version, explain=explain)

    def match_current_page(self, app_id, ui_hierarchy=None, page_title=None, page_screenshot=None):
        return self.call("match_current_page", app_id=app_id, ui_hierarchy=ui_hierarchy,
                         page_title=page_title, page_screenshot=page_screenshot)

    def get_rag_context(self, app_id, query, current_page=None):
        return self.call("get_rag_context", app_id=app_id, query=query, current_page=current_page)

    # 2. learning
    def report_transition(self, from_page, action, to_page, success, latency_ms=None,
                          app_id=None, intent=None, session_id=None, reason=None, app_version=None):
        return self.call("report_transition", from_page=from_page, action=action, to_page=to_page,
                         success=success, latency_ms=latency_ms, app_id=app_id, intent=intent,
                         session_id=session_id, reason=reason, app_version=app_version)

    def end_session(self, app_id, session_id, intent, finished, message=None, carry=None,
                    executed=None, app_version=None):
        """Say how a session ended: only sessions not said to have failed are replayed. With the
        ``carry`` of a run's last ``observe_screen`` answer and what was ``executed`` on that
        screen, the graph's last answer there is checked too."""
        return self.call("end_session", app_id=app_id, session_id=session_id, intent=intent,
                         finished=finished, message=message, carry=carry, executed=executed,
                         app_version=app_version)

    def report_verdict(self, app_id, session_id, intent, passed, reason=None, judge=None):
        """Say what someone other than the agent judged of a session (a test's expectations, a
        person): passed or failed, and why. The verdict outranks the agent's word: a failed
        session confirms nothing, and the remembered ways it replayed are doubted."""
        return self.call("report_verdict", app_id=app_id, session_id=session_id, intent=intent,
                         passed=passed, reason=reason, judge=judge)

    def add_page(self, app_id, page_name, page_type=None, description=None, intents=None, ui_hierarchy=None,
                 url=None, dom_fingerprint=None, app_version=None, title=None, url_template=None):
        return self.call("add_page", app_id=app_id, page_name=page_name, page_type=page_type,
                         description=description, intents=intents, ui_hierarchy=ui_hierarchy, url=url,
                         dom_fingerprint=dom_fingerprint, app_version=app_version, title=title,
                         url_template=url_template)

    def register_intent(self, app_id, intent_text, target_page=None, keywords=None):
        return self.call("register_intent", app_id=app_id, intent_text=intent_text,
                         target_page=target_page, keywords=keywords)

    # 3. auxiliary queries
    def get_available_actions(self, page_id):
        return self.call("get_available_actions", page_id=page_id)

    def find_similar_intents(self, query, app_id=None, top_k=None):
        return self.call("find_similar_intents", query=query, app_id=app_id, top_k=top_k)

    def get_graph_stats(self, app_id=None):
        return self.call("get_graph_stats", app_id=app_id)

    def get_app_graph(self, app_id, center=None, radius=None, max_pages=None):
        """Beyond the seed: an app's pages and transitions for drawing, whole or around a page."""
        return self.call("get_app_graph", app_id=app_id, center=center, radius=radius, max_pages=max_pages)

    # 4. batch
    def batch_add_transitions(self, transitions):
        return self.call("batch_add_transitions", transitions=transitions)

    # 5. versions of an app (beyond the seed)
    def record_app_version(self, app_id, version, source=None, seen_pages=None, seen_transitions=None,
                           gone_pages=None, gone_transitions=None):
        """A version of an app (a new one becomes current), with the pages and transitions seen in
        it and those found gone (marked, never deleted)."""
        return self.call("record_app_version", app_id=app_id, version=version, source=source,
                         seen_pages=seen_pages, seen_transitions=seen_transitions,
                         gone_pages=gone_pages, gone_transitions=gone_transitions)

    def get_app_diff(self, app_id, from_version=None, to_version=None):
        """What changed between two versions of an app (by default the last two)."""
        return self.call("get_app_diff", app_id=app_id, from_version=from_version, to_version=to_version)

    def get_ways(self, app_id, intent=None, app_version=None):
        """The app's remembered ways (for one task, when given), each with its steps and its own
        record: the runs that confirmed it, replays that passed and parted, whether it replays."""
        return self.call("get_ways", app_id=app_id, intent=intent, app_version=app_version)

    def forget_way(self, app_id, way):
        """Forgets a remembered way (its key from get_ways): not replayed until a finished run
        goes it again."""
        return self.call("forget_way", app_id=app_id, way=way)
