"""What the Python tests share: the atlas binary, a demo server with a scripted model behind its
chat (started here unless ATLAS_URL names one), free ports, waiting for a server, JSON calls, and
headless Chromium."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# The packages under test, when they are not installed (pip install -e clients/python).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEMO_APP = "com.meituan.app"
DEMO_DATASET = "6f1d7d1e-6b0a-4d1e-9f1e-000000000001"
DEMO_DATASET_KEY = "dataset-demo-key"


def _free_port():
    """A loopback port nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _wait_for(url, seconds=60):
    """Waits until `url` answers."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def request_json(method, url, body=None, headers=None, timeout=60):
    """An HTTP request with a JSON body (and `Content-Type: application/json` on every method, as
    Dify's SDK sends it): (status, the answer's JSON or None)."""
    data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read().decode("utf-8")
            return answer.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8")
        return e.code, (json.loads(text) if text else None)


@pytest.fixture(scope="session")
def atlas_bin():
    """The atlas binary the tests run."""
    path = Path(os.environ.get("ATLAS_BIN", ROOT / "target" / "debug" / "atlas"))
    if not path.is_file():
        raise RuntimeError(f"no atlas binary at {path}: build it (cargo build) or set ATLAS_BIN")
    return str(path)


@pytest.fixture(scope="session")
def atlas_url(atlas_bin):
    """A running `atlas serve --demo` whose chat asks `atlas model-sim` with the demo script."""
    given = os.environ.get("ATLAS_URL")
    if given:
        yield given.rstrip("/")
        return
    work = tempfile.mkdtemp(prefix="atlas-pytest-")
    port, sim_port = _free_port(), _free_port()
    script = ROOT / "crates" / "faces" / "atlas-chat" / "demo" / "business.json"
    children = [subprocess.Popen([atlas_bin, "model-sim", str(script), "--addr", f"127.0.0.1:{sim_port}"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        children.append(subprocess.Popen(
            [atlas_bin, "serve", "--demo", "--data", os.path.join(work, "data"), "--addr", f"127.0.0.1:{port}",
             "--llm-url", f"http://127.0.0.1:{sim_port}/v1", "--llm-model", "atlas-sim"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        url = f"http://127.0.0.1:{port}"
        _wait_for(f"{url}/healthz", 600)
        yield url
    finally:
        for child in children:
            child.kill()
            child.wait()


@pytest.fixture(scope="session")
def free_port():
    """free_port(): a loopback port nothing listens on now."""
    return _free_port


@pytest.fixture(scope="session")
def wait_for():
    """wait_for(url, seconds=60): waits until `url` answers."""
    return _wait_for


@pytest.fixture(scope="session")
def http():
    """request_json(method, url, body=None, headers=None)."""
    return request_json


@pytest.fixture(scope="session")
def demo_dataset():
    """The demo knowledge base: (dataset id, its key)."""
    return DEMO_DATASET, DEMO_DATASET_KEY


@pytest.fixture
def check():
    """An assertion with its reason, as the tests write them: check(condition, what)."""
    def check(condition, what=""):
        assert condition, what
    return check


@pytest.fixture
def chromium():
    """Headless Chromium (Debian's) driven by selenium, with the console's log kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tempfile.mkdtemp()}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")),
                              options=options)
    # A command may wait past selenium's 120 s on a loaded machine.
    driver.command_executor.client_config.timeout = 600
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def simulated_phone(atlas_bin, free_port):
    """simulated_phone(app): `atlas device sim` playing the DroidTask development recording of
    `app`, connected through Debian's adb server: (serial, the app's package); the test is
    skipped where the data is not here. Stopped and disconnected after the test."""
    started = []

    def start(app):
        recording = ROOT.parent / "shared" / "data" / "droidtask-dev" / "user_tasks" / app
        if not recording.is_dir():
            pytest.skip("no DroidTask folder")
        serial = f"127.0.0.1:{free_port()}"
        sim = subprocess.Popen([atlas_bin, "device", "sim", str(recording), "--listen", serial],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        started.append((sim, serial))
        said = sim.stderr.readline()
        assert "simulated phone" in said, said
        package = said.split("simulated phone ", 1)[1].split(" ", 1)[0]
        connected = subprocess.run(["adb", "connect", serial], capture_output=True, text=True, timeout=60)
        assert "connected" in connected.stdout, connected
        return serial, package

    yield start
    for sim, serial in started:
        subprocess.run(["adb", "disconnect", serial], capture_output=True, timeout=60)
        sim.kill()
        sim.wait()


@pytest.fixture
def tap_to_a_focused_field():
    """tap_to_a_focused_field(app): from the DroidTask recording of `app`, the recorded taps that
    open a screen with a text field focused (a search bar opened, a form, a dialog asking for a
    name), each as (the screen tapped on, the tap's x and y, the screen it opens, the field's
    resource id). Read from the recording's files, none written into a test."""

    def find(app):
        found = []
        recording = ROOT.parent / "shared" / "data" / "droidtask-dev" / "user_tasks" / app
        states = {}
        for path in sorted((recording / "states").glob("*.json")):
            state = json.loads(path.read_text(encoding="utf-8"))
            states[state["state_str"]] = state

        def focused(state):
            views = states[state]["views"] if state in states else []
            return next((v for v in views if v.get("editable") and v.get("focused")
                         and v.get("visible", True) and v.get("resource_id")), None)

        for path in sorted((recording / "events").glob("*.json")):
            try:
                event = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue  # a run stopped mid-write
            view = event["event"].get("view") or {}
            start, stop = event.get("start_state"), event.get("stop_state")
            if event["event"].get("event_type") != "click" or not view.get("bounds") or start == stop:
                continue
            field = focused(stop)
            if start in states and field and not focused(start):
                (left, top), (right, bottom) = view["bounds"]
                found.append((start, (left + right) // 2, (top + bottom) // 2, stop, field["resource_id"]))
        assert found, f"no tap opens a focused field in {app}"
        return found

    return find
