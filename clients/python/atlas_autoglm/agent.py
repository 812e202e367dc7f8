"""phone-agent's PhoneAgent with Atlas in the loop."""

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
    """A PhoneAgent that asks its model only where Atlas's graph is unsure.

    ``atlas_url`` and ``app_id`` name the Atlas and the app's graph; ``fast_path`` is the
    confidence at which the graph's next action is taken without the model. Counters of the last
    run: ``model_calls``, ``graph_steps``; ``steps`` lists who chose each action.
    """

    def __init__(self, model_config=None, agent_config=None, confirmation_callback=None,
                 takeover_callback=None, *, atlas_url, app_id, fast_path=0.95, token=None,
                 knowledge=None):
        super().__init__(model_config, agent_config, confirmation_callback, takeover_callback)
        self.action_handler = AtlasActionHandler(
            device_id=self.agent_config.device_id,
            confirmation_callback=self.action_handler.confirmation_callback,
            takeover_callback=self.action_handler.takeover_callback,
            knowledge=knowledge,
        )
        self.link = AtlasLink(atlas_url, app_id, fast_path=fast_path, token=token)
        self._task = ""
        self._observation = None
        self.model_calls = 0
        self.graph_steps = 0
        self.steps = []

    def run(self, task):
        self._task = task
        self._observation = None
        self.model_calls = self.graph_steps = 0
        self.steps = []
        self.link.reset()
        finished = False
        try:
            result = self._execute_step(task, is_first=True)
            finished = result.finished
            while not finished and self._step_count < self.agent_config.max_steps:
                result = self._execute_step(is_first=False)
                finished = result.finished
        finally:
            try:
                self.link.end(task, finished and bool(self.steps) and self.steps[-1]["finished"])
            except AtlasError as e:
                print(f"Atlas did not take the run's end: {e}")
        return (result.message or "Task completed") if finished else "Max steps reached"

    def _execute_step(self, user_prompt=None, is_first=False):
        self._step_count += 1
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
        text = f"{user_prompt}\n\n{json.dumps(info, ensure_ascii=False)}" if is_first \
            else f"** Screen Info **\n\n{json.dumps(info, ensure_ascii=False)}"
        if is_first:
            self._context.append(MessageBuilder.create_system_message(self.agent_config.system_prompt))

        thinking = ""
        if action is not None:
            chosen = "graph"
            self.graph_steps += 1
            self._context.append(MessageBuilder.create_user_message(text=text))
            self._context.append(MessageBuilder.create_assistant_message(f"<answer>{_grammar(action)}</answer>"))
        else:
            chosen = "model"
            self._context.append(MessageBuilder.create_user_message(text=text, image_base64=shot.base64_data))
            try:
                response = self.model_client.request(self._context)
            except Exception as e:  # the model's client raises what its HTTP library raises
                return StepResult(False, True, None, "", f"Model error: {e}")
            self.model_calls += 1
            self._context[-1] = MessageBuilder.remove_images_from_message(self._context[-1])
            self._context.append(MessageBuilder.create_assistant_message(response.raw_content))
            thinking = response.thinking
            action, why = self.link.parse(response.raw_content)
            if action is None:
                # Told, not turned into a finish: the task goes on.
                self._observation = (f"Your last reply had no well-formed action ({why}). Answer with "
                                     "exactly one do(...) or finish(...) inside <answer>.")
                self.steps.append({"chosen_by": chosen, "action": None, "finished": False})
                return StepResult(False, False, None, thinking, self._observation)

        if focus is not None:
            device.tap(focus[0], focus[1], device_id)
        try:
            result = self.action_handler.execute(action, *size)
        except Exception as e:  # a device command failed: tell the model, do not end the task
            self._observation = f"The action failed: {e}"
            self.steps.append({"chosen_by": chosen, "action": action, "finished": False})
            return StepResult(False, False, action, thinking, self._observation)
        if page:
            self.link.executed(action, focus, by_graph=chosen == "graph")
        finished = action.get("_metadata") == "finish" or result.should_finish
        self._observation = result.message
        self.steps.append({"chosen_by": chosen, "action": action, "finished": finished and result.success})
        return StepResult(result.success, finished, action, thinking, result.message or action.get("message"))
