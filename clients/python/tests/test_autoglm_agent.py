"""Open-AutoGLM's phone-agent (from PyPI, unchanged) with atlas_autoglm, against Atlas for real:
`atlas serve --demo`, the demo app played by `atlas device sim` and driven through Debian's adb,
the model being `atlas model-sim`.

1. A task the graph was never told: the model does every step, each step is reported, and a
   widget the demo graph knows by its text alone (`我的`) stays one edge though the plugin reads
   its id off the dump.
2. The same task again: the graph replays it, its finish included (with the model's own words),
   with no model call.
3. GET_KNOWLEDGE_DATA: the knowledge base's answer is typed into the field and sent (read back
   from the simulator's action log); a reply that does not parse is told to the model, not
   turned into a finish; the run is not offered as memory (the lookup cannot be replayed).
4. The guard's rules, evaluated by Atlas: the QQ customer-service gate blocks a finish before the
   knowledge lookup, as `atlas agent run` does, and a rule file given to the agent applies too.

Run with a Python >= 3.12 that has phone-agent installed (pip install -e 'clients/python[phone-agent,test]').
"""

import json
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("phone_agent", reason="atlas_autoglm's test runs where phone-agent is installed")

from phone_agent.agent import AgentConfig  # noqa: E402
from phone_agent.model import ModelConfig  # noqa: E402

from atlas_autoglm import AtlasPhoneAgent, KnowledgeBase  # noqa: E402
from atlas_autoglm.link import AtlasLink  # noqa: E402

APP = "com.meituan.app"
# No pauses after actions: the simulator answers at once.
for name in ("TAP", "DOUBLE_TAP", "LONG_PRESS", "SWIPE", "BACK", "HOME", "LAUNCH"):
    os.environ.setdefault(f"PHONE_AGENT_{name}_DELAY", "0")
for name in ("KEYBOARD_SWITCH", "TEXT_CLEAR", "TEXT_INPUT", "KEYBOARD_RESTORE"):
    os.environ.setdefault(f"PHONE_AGENT_{name}_DELAY", "0")


def adb(*args):
    return subprocess.run(["adb", *args], capture_output=True, text=True, timeout=60).stdout


def test_phone_agent_asks_its_model_only_where_the_graph_is_unsure(atlas_bin, demo_dataset, free_port, wait_for, check):
    dataset, key = demo_dataset
    work = tempfile.mkdtemp(prefix="atlas-autoglm-")
    data, log = os.path.join(work, "data"), os.path.join(work, "phone.jsonl")
    port, sim_port, model_port = free_port(), free_port(), free_port()
    children = []
    try:
        children.append(subprocess.Popen([atlas_bin, "serve", "--demo", "--data", data, "--addr", f"127.0.0.1:{port}",
                                          "--embedder", "hash"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        atlas = f"http://127.0.0.1:{port}"
        wait_for(f"{atlas}/healthz")
        serial = f"127.0.0.1:{sim_port}"
        sim = subprocess.Popen([atlas_bin, "device", "sim", "--app", APP, "--data", data, "--listen", serial, "--log", log],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        children.append(sim)
        check("simulated phone" in sim.stderr.readline(), "the simulator starts")
        check("connected" in adb("connect", serial), "adb connects to the simulator")

        def relative(label):
            """Where a person would tap `label` (or the text field) on the current screen, in
            0..999, and taps it."""
            nodes = list(ET.fromstring(AtlasLink.dump(serial)).iter("node"))
            field = lambda n: "EditText" in n.get("class", "")
            node = next(n for n in nodes if field(n)) if label == "field" else \
                next(n for n in nodes if label in (n.get("text"), n.get("content-desc")) and not field(n))
            l, t, r, b = (int(v) for v in node.get("bounds").replace("][", ",").strip("[]").split(","))
            x, y = (l + r) // 2, (t + b) // 2
            adb("-s", serial, "shell", "input", "tap", str(x), str(y))
            return [x * 1000 // 1080, y * 1000 // 2400]

        def home():
            adb("-s", serial, "shell", "monkey", "-p", APP, "1")

        home()
        mine, orders = relative("我的"), relative("全部订单")
        home()
        search, field = relative("搜索框"), relative("field")
        task = "看一下账户里存的东西"
        question = "退货运费谁出？"
        script = os.path.join(work, "model.json")
        answer = lambda text: {"content": text}
        with open(script, "w", encoding="utf-8") as f:
            json.dump({"conversations": [
                {"match": task, "session": True, "turns": [
                    answer(f"<think>先进入我的</think><answer>do(action=\"Tap\", element={mine})</answer>"),
                    answer(f"打开订单：do(action='Tap', element={orders})"),
                    answer("<answer>finish(message=\"找到了\")</answer>")]},
                {"match": "QQ 智能客服", "session": True, "turns": [
                    answer("<answer>finish(message=\"已回复\")</answer>"),
                    answer("<answer>finish(message=\"已回复\")</answer>")]},
                {"match": "回答顾客", "session": True, "turns": [
                    answer(f"<answer>do(action=\"Tap\", element={search})</answer>"),
                    answer(f"do(action=\"Tap\", element={field}"),
                    answer("嗯……让我想想。"),
                    answer(f"<answer>do(action=\"GET_KNOWLEDGE_DATA\", query=\"{question}\")</answer>"),
                    answer("<answer>finish(message=\"已回答\")</answer>")]},
            ]}, f, ensure_ascii=False)
        children.append(subprocess.Popen([atlas_bin, "model-sim", script, "--addr", f"127.0.0.1:{model_port}"],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(f"http://127.0.0.1:{model_port}/v1/models")

        def agent(fast_path, max_steps=8, rules=()):
            return AtlasPhoneAgent(
                ModelConfig(base_url=f"http://127.0.0.1:{model_port}/v1", model_name="sim", api_key="x"),
                AgentConfig(device_id=serial, max_steps=max_steps, lang="cn", verbose=False),
                atlas_url=atlas, app_id=APP, fast_path=fast_path, rules=rules,
                knowledge=KnowledgeBase(atlas, dataset, key))

        link = AtlasLink(atlas, APP)

        def edges_named(label):
            """The home page's edges on the widget labelled `label`."""
            home()
            page = link.observe(AtlasLink.dump(serial), "看看", (1080, 2400))["page_id"]
            actions = link.call("get_available_actions", page_id=page)["actions"]
            return [a for a in actions if a["widget_text"] == label]

        demo_edges = edges_named("我的")
        check(len(demo_edges) == 1 and not demo_edges[0]["widget_id"], demo_edges)

        def taps(since):
            with open(log, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f][since:]
            return [a["to"] for a in lines if a["action"] == "tap"]

        def lines():
            with open(log, encoding="utf-8") as f:
                return sum(1 for _ in f)

        # 1. New to the graph: the model does it, the steps are reported.
        home()
        before = lines()
        first = agent(1.01)
        said = first.run(task)
        check(said == "找到了", said)
        check((first.model_calls, first.graph_steps) == (3, 0), first.steps)
        first_taps = taps(before)
        check(len(first_taps) == 2, first_taps)
        mine_edges = edges_named("我的")
        check(len(mine_edges) == 1, f"one widget, one edge: {mine_edges}")

        # 2. The same task again: the way the first run confirmed is replayed from the graph at
        # once, step by step under check. That the task is done where it ended is only the first
        # run's agent's claim (nobody judged it): the model is asked there, once.
        home()
        before = lines()
        second = agent(0.95)
        said = second.run(task)
        check(said == "找到了", said)
        check([s["chosen_by"] for s in second.steps] == ["graph", "graph", "model"], second.steps)
        check(taps(before) == first_taps, "the same screens as the first run")
        # It finished there too: the run after replays the finish as well, with no model call.
        home()
        again = agent(0.95)
        said = again.run(task)
        check(said == "找到了", f"the replayed finish ends with the model's words, not {said!r}")
        check(again.model_calls == 0, again.steps)
        check([s["chosen_by"] for s in again.steps] == ["graph"] * 3, again.steps)

        # 3. The knowledge base's answer is typed and sent.
        expected = KnowledgeBase(atlas, dataset, key).retrieve(question)
        check(expected and "运费" in expected, expected)
        home()
        before = lines()
        third = agent(0.95)
        said = third.run("回答顾客的问题")
        check(said == "已回答", said)
        check(third.model_calls == 5, third.steps)
        check(third.steps[2]["action"] is None, "an unparseable reply is a step, not a finish")
        with open(log, encoding="utf-8") as f:
            done = [json.loads(line) for line in f][before:]
        typed = [a for a in done if a["action"] in ("type", "text", "input")]
        check(any(a.get("text") == expected for a in typed), typed)
        check(any(a["action"] == "key" and str(a.get("key")) in ("66", "KEYCODE_ENTER", "enter") for a in done), done)
        # Not offered as memory (the lookup cannot be replayed): the graph's answer for the same
        # task rests on anything but a remembered session.
        home()
        link = AtlasLink(atlas, APP)
        answer = link.observe(AtlasLink.dump(serial), "回答顾客的问题", (1080, 2400))
        check(answer["page_id"], answer)
        check(answer.get("basis") != "memory", answer)

        # 4. The guard: the QQ gate holds the finish (twice), and the rule file given fires too.
        rules = os.path.join(work, "rules.yaml")
        with open(rules, "w", encoding="utf-8") as f:
            f.write("name: tester\nbefore:\n  - name: a finish is noted\n    if: { action: [Wait] }\n")
        home()
        gated = agent(0.95, max_steps=2, rules=[rules])
        said = gated.run("QQ 智能客服回复联系人11的问题")
        check(said == "Max steps reached", said)
        check(gated.model_calls == 2, gated.steps)
        check([s["chosen_by"] for s in gated.steps] == ["guard", "guard"], gated.steps)
        check([s["action"]["action"] for s in gated.steps] == ["Wait", "Wait"], gated.steps)
        check("no finish before the knowledge lookup succeeded" in gated.steps[0]["rules"], gated.steps)
        check("a finish is noted" in gated.steps[0]["rules"], gated.steps)
        check(gated.step_count == 2 and len(gated.context) == 5, gated.context)
    finally:
        adb("disconnect", f"127.0.0.1:{sim_port}")
        for child in children:
            child.kill()
            child.wait()
