"""Open-AutoGLM's own agent, as its users run it: phone-agent's `PhoneAgent` (from PyPI, unchanged
and unpatched) on DroidTask's demonstrated tasks, driving `atlas device sim` (the app's recording,
started on the task's first screen) through Debian's adb, its model `atlas model-sim --droidtask`
(DroidTask's ideal model over HTTP). phone-agent saves every screenshot again through PIL (other
bytes, the same pixels) and reads the model's answer with its own parser, so this passes only if
the model recognises a screen by what it shows and answers in the format phone-agent reads. A
task passes when the agent finishes on the task's recorded last screen (the phone's action log
says which screen it showed last).

Run with a Python >= 3.12 that has phone-agent and PyYAML installed (scripts/test.sh makes one).
"""

import json
import os
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("phone_agent", reason="runs where phone-agent is installed")
yaml = pytest.importorskip("yaml", reason="reads the suite atlas writes as YAML")

from phone_agent import PhoneAgent  # noqa: E402
from phone_agent.agent import AgentConfig  # noqa: E402
from phone_agent.model import ModelConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
RECORDING = ROOT.parent / "shared" / "data" / "droidtask-dev" / "user_tasks" / "notes"
# The tasks the issue measured phone-agent on (notes 1-4): typing, checklists, menus.
TASKS = 4
# No pauses after actions: the simulator answers at once.
for name in ("TAP", "DOUBLE_TAP", "LONG_PRESS", "SWIPE", "BACK", "HOME", "LAUNCH",
             "KEYBOARD_SWITCH", "TEXT_CLEAR", "TEXT_INPUT", "KEYBOARD_RESTORE"):
    os.environ.setdefault(f"PHONE_AGENT_{name}_DELAY", "0")


def adb(*args):
    return subprocess.run(["adb", *args], capture_output=True, text=True, timeout=60).stdout


def last_screen(log):
    """The screen the phone showed last, from its action log."""
    shown = None
    with open(log, encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            shown = entry.get("to", entry.get("screen", shown))
    return shown


def test_phone_agent_does_droidtask_tasks_with_model_sim_unpatched(atlas_bin, free_port, wait_for):
    if not RECORDING.is_dir():
        pytest.skip("no DroidTask folder")
    suite = yaml.safe_load(subprocess.run([atlas_bin, "test", "droidtask-suite", str(RECORDING)],
                                          capture_output=True, text=True, check=True).stdout)
    tests = suite["tests"][:TASKS]
    assert len(tests) == TASKS, suite
    work = tempfile.mkdtemp(prefix="atlas-phone-agent-")
    model_port = free_port()
    model = subprocess.Popen([atlas_bin, "model-sim", "--droidtask", str(RECORDING),
                              "--addr", f"127.0.0.1:{model_port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    outcomes = {}
    try:
        wait_for(f"http://127.0.0.1:{model_port}/v1/models")
        for test in tests:
            serial = f"127.0.0.1:{free_port()}"
            log = os.path.join(work, test["name"].replace("/", "-") + ".jsonl")
            sim = subprocess.Popen([atlas_bin, "device", "sim", str(RECORDING), "--listen", serial,
                                    "--start", test["start"], "--log", log],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                assert "simulated phone" in sim.stderr.readline()
                assert "connected" in adb("connect", serial)
                agent = PhoneAgent(
                    model_config=ModelConfig(base_url=f"http://127.0.0.1:{model_port}/v1",
                                             model_name="droidtask-ideal", api_key="x"),
                    agent_config=AgentConfig(device_id=serial, max_steps=test["max_steps"], lang="en",
                                             verbose=False),
                )
                said = agent.run(test["task"])
                shown = last_screen(log)
                outcomes[test["name"]] = (said, shown in test["expect"]["page"])
            finally:
                adb("disconnect", serial)
                sim.kill()
                sim.wait()
        # What it was asked, as the scripted model lists it: every request, screenshots left out.
        with urllib.request.urlopen(f"http://127.0.0.1:{model_port}/requests", timeout=30) as answer:
            asked = json.loads(answer.read())
        assert len(asked) >= 2 * TASKS, len(asked)
        assert all(m["role"] for r in asked for m in r["messages"])
        assert "bytes of base64 left out" in json.dumps(asked[0])
    finally:
        model.kill()
        model.wait()
    # Every task finished by the model's own finish, on the task's last screen.
    assert all(done and said == "done" for said, done in outcomes.values()), outcomes
