"""Open-AutoGLM's phone-agent (`PhoneAgent`, unchanged) on DroidTask's demonstrated tasks: each task
on a fresh `atlas device sim` of its app's recording (started on the task's first screen, reached
through Debian's adb), the model `atlas model-sim --droidtask`. A task is done when the agent
finishes, by the model's own finish, on the task's recorded last screen (the phone's action log
says which screen it showed last).

Used by `test_phone_agent_droidtask.py`, and a measurement of its own over a whole DroidTask folder:

    python clients/python/tests/phone_agent_runs.py ../shared/data/droidtask-dev [--json FILE]

(with a Python >= 3.12 that has phone-agent and PyYAML, e.g. `target/autoglm-venv/bin/python`;
`ATLAS_BIN` names the binary, else `target/release/atlas`).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml
from phone_agent import PhoneAgent
from phone_agent.agent import AgentConfig
from phone_agent.model import ModelConfig

# No pauses after actions: the simulator answers at once.
for _name in ("TAP", "DOUBLE_TAP", "LONG_PRESS", "SWIPE", "BACK", "HOME", "LAUNCH",
              "KEYBOARD_SWITCH", "TEXT_CLEAR", "TEXT_INPUT", "KEYBOARD_RESTORE"):
    os.environ.setdefault(f"PHONE_AGENT_{_name}_DELAY", "0")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


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


def suite_of(atlas_bin, folder):
    """`atlas test droidtask-suite FOLDER`'s tests."""
    out = subprocess.run([atlas_bin, "test", "droidtask-suite", str(folder)],
                         capture_output=True, text=True, check=True).stdout
    return yaml.safe_load(out)["tests"]


def recording_of(folder, app):
    """The recording of `app` (its folder name) under a DroidTask folder, its `user_tasks` or itself."""
    folder = Path(folder)
    for candidate in (folder / "user_tasks" / app, folder / app, folder):
        if (candidate / "states").is_dir() and candidate.name == app:
            return candidate
    raise FileNotFoundError(f"no recording of {app} under {folder}")


class ModelSim:
    """`atlas model-sim --droidtask FOLDER` on a free port, for a `with` block."""

    def __init__(self, atlas_bin, folder):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen([atlas_bin, "model-sim", "--droidtask", str(folder),
                                         "--addr", f"127.0.0.1:{self.port}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __enter__(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/v1/models", timeout=2)
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("model-sim did not start")

    def requests(self):
        with urllib.request.urlopen(f"{self.url}/requests", timeout=30) as answer:
            return json.loads(answer.read())

    def __exit__(self, *_):
        self.process.kill()
        self.process.wait()


def run_task(atlas_bin, folder, test, model_url, work):
    """One test of a DroidTask suite by PhoneAgent: (the agent's last words, whether it ended on
    the task's last screen, steps)."""
    serial = f"127.0.0.1:{free_port()}"
    log = os.path.join(work, test["name"].replace("/", "-") + ".jsonl")
    sim = subprocess.Popen([atlas_bin, "device", "sim", str(recording_of(folder, test["app"])),
                            "--listen", serial, "--start", test["start"], "--log", log],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        said = ""
        # Warnings about the recording (a damaged event file) may come first.
        while "simulated phone" not in said:
            line = sim.stderr.readline()
            assert line, f"the simulator did not start: {said}"
            said += line
        assert "connected" in adb("connect", serial)
        agent = PhoneAgent(
            model_config=ModelConfig(base_url=f"{model_url}/v1", model_name="droidtask-ideal", api_key="x"),
            agent_config=AgentConfig(device_id=serial, max_steps=test["max_steps"], lang="en", verbose=False),
        )
        said = agent.run(test["task"])
        return said, last_screen(log) in test["expect"]["page"], agent.step_count
    finally:
        adb("disconnect", serial)
        sim.kill()
        sim.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="a DroidTask folder (or its user_tasks, or one recording)")
    parser.add_argument("--json", help="write each task's outcome here")
    args = parser.parse_args()
    atlas_bin = os.environ.get("ATLAS_BIN", str(Path(__file__).resolve().parents[3] / "target/release/atlas"))
    tests = suite_of(atlas_bin, args.folder)
    work = tempfile.mkdtemp(prefix="atlas-phone-agent-")
    outcomes = []
    started = time.time()
    with ModelSim(atlas_bin, args.folder) as model:
        for test in tests:
            try:
                said, ended_right, steps = run_task(atlas_bin, args.folder, test, model.url, work)
                done = ended_right and said == "done"
            except Exception as e:  # a task that breaks the agent counts as not done, and says why
                said, done, steps = f"{type(e).__name__}: {e}", False, None
            outcomes.append({"name": test["name"], "app": test["app"], "done": done, "said": said, "steps": steps})
            print(f"{test['name']}: {'done' if done else 'not done'} ({said!r}, {steps} steps)", flush=True)
    by_app = {}
    for o in outcomes:
        done, total = by_app.get(o["app"], (0, 0))
        by_app[o["app"]] = (done + o["done"], total + 1)
    for app, (done, total) in sorted(by_app.items()):
        print(f"{app}: {done} of {total}")
    print(f"PhoneAgent: {sum(o['done'] for o in outcomes)} of {len(outcomes)} tasks done "
          f"in {time.time() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"tasks": outcomes, "by_app": by_app}, ensure_ascii=False, indent=1),
                                   encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
