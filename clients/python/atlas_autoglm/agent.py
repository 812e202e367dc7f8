"""phone-agent's PhoneAgent with Atlas in the loop.

Only phone-agent's public interface is used: the agent keeps its own conversation and step count
(``context`` and ``step_count`` answer them), so nothing here reads or writes phone-agent's
private fields or overrides its private methods, and a new phone-agent release that renames them
changes nothing.
"""

import json

from phone_agent import PhoneAgent
from phone_agent.agent import StepResult
from phone_agent.device_factory import get_device_factory
from phone_agent.model.client import MessageBuilder

from .knowledge import AtlasActionHandler
from .link import AtlasError, AtlasLink


def _grammar(action):
    """An action dict written back in the grammar, for the conversation's record."""
    if action.get("_metadata") == "finish":
        return f"finish(message={json.dumps(action.get('message', ''), ensure_ascii=False)})"
    args = [f'action="{action["action"]}"']
    for key, value in action.items():
        if key not in ("_metadata", "action"):
            args.append(f"{key}={json.dumps(value, ensure_ascii=False)}")
    return f"do({', '.join(args)})"


class AtlasPhoneAgent(PhoneAgent):
    """A PhoneAgent that asks its model only where Atlas's graph is unsure, under the guard's rules.

    ``atlas_url`` and ``app_id`` name the Atlas and the app's graph; ``fast_path`` is the
    confidence at which the graph's next action is taken without the model; ``rules`` are paths of
    guard rule files (YAML, as ``atlas agent run --rules`` takes them), which Atlas applies beside
    its shipped QQ customer-service gate to every action before it runs. Counters of the last
    run: ``model_calls``, ``graph_steps``; ``steps`` lists who chose each action (``model``,
    ``graph``, or ``guard`` when a rule replaced it) and the rules that fired.
    """

    def __init__(self, model_config=None, agent_config=None, confirmation_callback=None,
                 takeover_callback=None, *, atlas_url, app_id, fast_path=0.95, token=None,
                 knowledge=None, rules=()):
        super().__init__(model_config, agent_config, confirmation_callback, takeover_callback)
        self.action_handler = AtlasActionHandler(
            device_id=self.agent_config.device_id,
            confirmation_callback=confirmation_callback,
            takeover_callback=takeover_callback,
            knowledge=knowledge,
        )
        texts = []
        for path in rules:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read().replace("\r\n", "\n"))
        self.link = AtlasLink(atlas_url, app_id, fast_path=fast_path, token=token, rules=texts)
        self._messages = []
        self._steps_taken = 0
        self._task = ""
        self._observation = None
        self.model_calls = 0
        self.graph_steps = 0
        self.steps = []

    @property
    def context(self):
        """The conversation with the model so far."""
        return list(self._messages)

    @property
    def step_count(self):
        """The steps taken in this run."""
        return self._steps_taken

    def reset(self):
        """A new run: no conversation, no steps, a new Atlas session."""
        self._messages = []
        self._steps_taken = 0
        self._observation = None
        self.model_calls = self.graph_steps = 0
        self.steps = []
        self.link.reset()

    def run(self, task):
        self.reset()
        finished, result = False, None
        try:
            while not finished and self._steps_taken < self.agent_config.max_steps:
                result = self.step(task)
                finished = result.finished
        finally:
            last = self.steps[-1] if self.steps else {}
            try:
                self.link.end(task, finished and last.get("finished", False),
                              message=(last.get("action") or {}).get("message"))
            except AtlasError as e:
                print(f"Atlas did not take the run's end: {e}")
        return (result.message or "Task completed") if finished else "Max steps reached"

    def step(self, task=None):
        """One step: the screen to Atlas, the graph's sure action or the model's, the guard's
        review, the action on the phone, its outcome to the guard."""
        if not self._messages:
            if not task:
                raise ValueError("Task is required for the first step")
            self._task = task
        first = not self._messages
        self._steps_taken += 1
        device_id = self.agent_config.device_id
        device = get_device_factory()
        shot = device.get_screenshot(device_id)
        size = (shot.width, shot.height)
        app = device.get_current_app(device_id)

        page, action, focus, hint = None, None, None, None
        try:
            seen = self.link.observe(self.link.dump(device_id), self._task, size)
            page, hint = seen["page_id"] or None, seen["hint"]
            if page and seen["sure"]:
                action, focus = seen["action"], seen.get("focus")
        except (AtlasError, OSError) as e:
            print(f"Atlas did not answer: {e}")

        info = {"current_app": app}
        if self._observation:
            info["last_observation"] = self._observation
        if hint:
            info["atlas_hint"] = hint
        self._observation = None
        text = f"{self._task}\n\n{json.dumps(info, ensure_ascii=False)}" if first \
            else f"** Screen Info **\n\n{json.dumps(info, ensure_ascii=False)}"
        if first:
            self._messages.append(MessageBuilder.create_system_message(self.agent_config.system_prompt))

        thinking = ""
        if action is not None:
            chosen = "graph"
            self.graph_steps += 1
            self._messages.append(MessageBuilder.create_user_message(text=text))
            self._messages.append(MessageBuilder.create_assistant_message(f"<answer>{_grammar(action)}</answer>"))
        else:
            chosen = "model"
            self._messages.append(MessageBuilder.create_user_message(text=text, image_base64=shot.base64_data))
            try:
                response = self.model_client.request(self._messages)
            except Exception as e:  # the model's client raises what its HTTP library raises
                return StepResult(False, True, None, "", f"Model error: {e}")
            self.model_calls += 1
            self._messages[-1] = MessageBuilder.remove_images_from_message(self._messages[-1])
            self._messages.append(MessageBuilder.create_assistant_message(response.raw_content))
            thinking = response.thinking
            action, why = self.link.parse(response.raw_content)
            if action is None:
                # Told, not turned into a finish: the task goes on.
                self._observation = (f"Your last reply had no well-formed action ({why}). Answer with "
                                     "exactly one do(...) or finish(...) inside <answer>.")
                self.steps.append({"chosen_by": chosen, "action": None, "finished": False, "rules": []})
                return StepResult(False, False, None, thinking, self._observation)

        # The guard's rules, evaluated by Atlas, on every action: the graph's and the model's.
        reviewed = {"action": action, "changed": False, "fired": [], "observation": None}
        try:
            reviewed = self.link.review(self._task, action, [app])
        except AtlasError as e:
            print(f"Atlas did not review the action: {e}")
        if reviewed["changed"]:
            chosen, action, focus = "guard", reviewed["action"], None

        if focus is not None:
            device.tap(focus[0], focus[1], device_id)
        try:
            result = self.action_handler.execute(action, *size)
        except Exception as e:  # a device command failed: tell the model, do not end the task
            self._observation = self._outcome(action, False, str(e)) or f"The action failed: {e}"
            self.steps.append({"chosen_by": chosen, "action": action, "finished": False,
                               "rules": reviewed["fired"]})
            return StepResult(False, False, action, thinking, self._observation)
        if page:
            self.link.executed(action, focus, by_graph=chosen == "graph")
        finished = action.get("_metadata") == "finish" or result.should_finish
        said = self._outcome(action, result.success, result.message or "")
        self._observation = said or reviewed.get("observation") or result.message
        self.steps.append({"chosen_by": chosen, "action": action, "finished": finished and result.success,
                           "rules": reviewed["fired"]})
        return StepResult(result.success, finished, action, thinking, result.message or action.get("message"))

    def _outcome(self, action, success, result):
        """Tells the guard how the action went: what its rules say to tell the model, if anything."""
        try:
            return self.link.outcome(self._task, action, success, result)
        except AtlasError as e:
            print(f"Atlas did not take the action's outcome: {e}")
            return None
