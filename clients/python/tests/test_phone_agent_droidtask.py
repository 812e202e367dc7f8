"""Open-AutoGLM's own agent, as its users run it: phone-agent's `PhoneAgent` (from PyPI, unchanged
and unpatched) on DroidTask's demonstrated tasks, driving `atlas device sim` (the app's recording,
started on the task's first screen) through Debian's adb, its model `atlas model-sim --droidtask`
(DroidTask's ideal model over HTTP). phone-agent saves every screenshot again through PIL (other
bytes, the same pixels) and reads the model's answer with its own parser, so this passes only if
the model recognises a screen by what it shows and answers in the format phone-agent reads
(`phone_agent_runs.py` runs it; over every development task it is a measurement of its own).

Run with a Python >= 3.12 that has phone-agent and PyYAML installed (scripts/test.sh makes one).
"""

import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("phone_agent", reason="runs where phone-agent is installed")
pytest.importorskip("yaml", reason="reads the suite atlas writes as YAML")

from phone_agent_runs import ModelSim, run_task, suite_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
RECORDING = ROOT.parent / "shared" / "data" / "droidtask-dev" / "user_tasks" / "notes"
# The tasks the issue measured phone-agent on (notes 1-4): typing, checklists, menus.
TASKS = 4


def test_phone_agent_does_droidtask_tasks_with_model_sim_unpatched(atlas_bin):
    if not RECORDING.is_dir():
        pytest.skip("no DroidTask folder")
    tests = suite_of(atlas_bin, RECORDING)[:TASKS]
    assert len(tests) == TASKS, tests
    work = tempfile.mkdtemp(prefix="atlas-phone-agent-")
    outcomes = {}
    with ModelSim(atlas_bin, RECORDING) as model:
        for test in tests:
            said, ended_right, _ = run_task(atlas_bin, RECORDING, test, model.url, work)
            outcomes[test["name"]] = (said, ended_right)
        # What it was asked, as the scripted model lists it: every request, screenshots left out.
        asked = model.requests()
    assert len(asked) >= 2 * TASKS, len(asked)
    assert all(m["role"] for r in asked for m in r["messages"])
    assert "bytes of base64 left out" in json.dumps(asked[0])
    # Every task finished by the model's own finish, on the task's last screen.
    assert all(done and said == "done" for said, done in outcomes.values()), outcomes
