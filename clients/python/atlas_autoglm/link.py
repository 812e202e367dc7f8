"""Atlas's graph for one run of a phone-agent task, over Atlas's HTTP API.

Each screen goes to Atlas's ``observe_screen`` with what was executed on the last one, as
``atlas agent`` sends it: Atlas reads the dump, takes the screen for a page (adding it when new),
reports the step, and answers its next action resolved on this screen. The answer's ``carry``
goes back with the next screen; nothing about screens is decided here.

Every action goes to Atlas's ``review_action`` before it runs and its outcome to
``record_outcome`` after: the guard's rules (the shipped QQ customer-service gate and the rule
files given) are evaluated by Atlas, by the code ``atlas agent run`` uses, and the guard's
``memory`` comes back with each answer, to be sent with the next call.
"""

import subprocess
import uuid

from agent_interface import KGClient, KGError


class AtlasError(RuntimeError):
    """Atlas answered with an error, or could not be reached."""


class AtlasLink:
    """One run's link to the graph of ``app_id`` in the Atlas at ``url``."""

    def __init__(self, url, app_id, fast_path=0.95, token=None, session=None, timeout=30.0, rules=()):
        self.url = url.rstrip("/")
        self.app_id = app_id
        self.fast_path = fast_path
        self.token = token
        self.timeout = timeout
        self.rules = list(rules)
        self._client = KGClient(self.url, token=token or "", timeout=timeout)
        self.reset(session)

    def reset(self, session=None):
        """A new run: a new session, nothing carried, a guard that remembers nothing."""
        self.session = session or f"autoglm-{uuid.uuid4().hex[:12]}"
        self._carry = None
        self._executed = None
        self._guard = None

    def call(self, name, **body):
        """Atlas's interface ``name`` with ``body``, through ``agent_interface``'s client."""
        try:
            return self._client.call(name, **body)
        except KGError as e:
            status = f"{e.status} " if e.status else ""
            raise AtlasError(f"{name}: {status}{e.code} {e.message}".strip()) from None
        except OSError as e:
            raise AtlasError(f"{name}: Atlas at {self.url} is unreachable: {e}") from None

    def parse(self, reply):
        """The first well-formed action of a model's reply, as Atlas's parser reads it (prose,
        tags, several actions, quotes of either kind, a missing closing parenthesis); ``None``
        with the reason when nothing parses."""
        parsed = self.call("parse_agent_reply", reply=reply)
        return parsed.get("action"), parsed.get("error")

    @staticmethod
    def dump(device_id=None):
        """The screen's ``uiautomator dump``, through adb."""
        prefix = ["adb"] + (["-s", device_id] if device_id else [])
        subprocess.run(prefix + ["shell", "uiautomator", "dump", "/sdcard/window_dump.xml"],
                       capture_output=True, timeout=30, check=False)
        xml = subprocess.run(prefix + ["exec-out", "cat", "/sdcard/window_dump.xml"],
                             capture_output=True, timeout=30, check=False).stdout.decode("utf-8", "replace")
        if "<hierarchy" not in xml:
            raise AtlasError(f"no uiautomator dump from {device_id or 'the device'}")
        return xml

    def observe(self, dump, task, size):
        """Sends the screen (with the step that led here) and answers ``observe_screen``'s
        answer: ``page_id``, ``action`` (a dict, or ``None``), ``focus`` (pixels to tap first),
        ``sure`` (take the action without the model: its confidence and the app's record of trust in
        that kind of answer both reach the fast path), ``confidence``, ``trust``, ``hint``,
        ``basis``."""
        answer = self.call("observe_screen", app_id=self.app_id, task=task, session_id=self.session,
                           ui_hierarchy={"dump": dump}, screen_width=size[0], screen_height=size[1],
                           executed=self._executed, carry=self._carry, fast_path=self.fast_path)
        self._carry = answer["carry"]
        self._executed = None
        return answer

    def executed(self, action, focus=None, by_graph=False):
        """What ran on the screen last observed (after a tap on ``focus``, in pixels, when the
        graph typed into a field; ``by_graph`` when it was the graph's own action)."""
        self._executed = {"action": action, "focus": list(focus) if focus else None, "by_graph": by_graph}

    def review(self, task, action, app):
        """The guard's review of an action before it runs, in the app named ``app`` (a list of
        its names): ``action`` (the one to run), ``changed``, ``fired`` (the rules),
        ``observation`` (for the model, or ``None``)."""
        answer = self.call("review_action", task=task, action=action, app=list(app), rules=self.rules,
                           memory=self._guard)
        self._guard = answer["memory"]
        answer.setdefault("observation", None)
        return answer

    def outcome(self, task, action, success, result=""):
        """Tells the guard how an action went; what its rules say to tell the model, or ``None``."""
        answer = self.call("record_outcome", task=task, action=action, success=bool(success),
                           result=result or "", rules=self.rules, memory=self._guard)
        self._guard = answer["memory"]
        return answer.get("observation")

    def end(self, task, finished, message=None):
        """Says how the run ended (with the model's finish message): only a finished run whose
        every step the graph saw is replayed to the next agent, its message with it."""
        carry = self._carry or {}
        if not carry.get("reported"):
            return
        # The last screen's carry and action let Atlas check its answer there (a finish, mostly).
        self.call("end_session", app_id=self.app_id, session_id=self.session, intent=task,
                  finished=bool(finished and carry.get("replayable", True)), message=message,
                  carry=self._carry, executed=self._executed)
