"""The viewer's runs page (GET /runs) in headless Chromium, live: `atlas test run` on two
simulated phones reports to a running `atlas serve` (`--atlas`), DroidTask's ideal model answering
over HTTP after 400 ms (`atlas model-sim --droidtask`). While the suite runs the page shows each
phone's test and step; when it is over, every test's result, the model calls and the calls the
graph saved, and a test's steps with their screenshots. No request leaves the server's origin
and the console shows no error."""

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[3]
NOTES = ROOT.parent / "shared" / "data" / "droidtask-dev" / "user_tasks" / "notes"
KEEP = ["notes/task1", "notes/task3", "notes/task4", "notes/task5", "notes/task6", "notes/task9"]


def rows_of(driver, table):
    """The cells' texts of a table's body rows, read in one go."""
    return driver.execute_script(
        f"return [...document.querySelectorAll('{table} tbody tr')].map(r => "
        "[...r.querySelectorAll('td')].map(c => c.textContent))")


def _suite(atlas_bin, folder):
    import yaml

    text = subprocess.run([atlas_bin, "test", "droidtask-suite", str(NOTES), "--name", "网页冒烟"],
                          check=True, capture_output=True, text=True).stdout
    suite = yaml.safe_load(text)
    suite["tests"] = [t for t in suite["tests"] if t["name"] in KEEP]
    path = Path(folder) / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, allow_unicode=True), encoding="utf-8")
    return path


def test_the_runs_page_follows_a_suite_live(atlas_bin, free_port, wait_for, chromium, check):
    if not NOTES.joinpath("states").is_dir():
        pytest.skip("no DroidTask folder")
    work = tempfile.mkdtemp(prefix="atlas-runs-")
    port, model_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    children = [
        subprocess.Popen([atlas_bin, "serve", "--data", os.path.join(work, "data"), "--addr", f"127.0.0.1:{port}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([atlas_bin, "model-sim", "--droidtask", str(NOTES), "--delay-ms", "400",
                          "--addr", f"127.0.0.1:{model_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        wait_for(f"{url}/healthz", 600)
        wait_for(f"http://127.0.0.1:{model_port}/v1/models", 120)
        suite = _suite(atlas_bin, work)
        run = subprocess.Popen(
            [atlas_bin, "test", "run", str(suite), "--devices", f"simulate:{NOTES}*2", "--atlas", url,
             "--model-url", f"http://127.0.0.1:{model_port}/v1", "--lang", "en",
             "--json", os.path.join(work, "r.json")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        children.append(run)
        driver = chromium
        driver.get(f"{url}/runs")
        # The run appears; its page shows what each phone does while the suite runs.
        deadline = time.time() + 120
        while not driver.find_elements(By.CSS_SELECTOR, "#runs tbody a") and time.time() < deadline:
            time.sleep(0.2)
        check(driver.find_elements(By.CSS_SELECTOR, "#runs tbody a"), "the run is listed")
        check("网页冒烟" in driver.execute_script("return document.getElementById('runs').textContent"),
              "the suite's Chinese name")
        driver.execute_script("document.querySelector('#runs tbody a').click()")
        seen_busy = False
        while run.poll() is None and time.time() < deadline:
            # Read at once: the page redraws its tables each second.
            cells = rows_of(driver, "#devices")
            if any(len(c) == 3 and c[1].startswith("notes/") and c[2].strip() for c in cells):
                seen_busy = True
            time.sleep(0.1)
        check(seen_busy, "a phone's test and step were shown while the suite ran")
        check(run.wait(timeout=120) == 0, run.stderr.read()[-2000:])
        # When it is over: every test passed, with the model calls and the calls the graph saved.
        deadline = time.time() + 30
        while "ended" not in driver.find_element(By.ID, "run-summary").text and \
                "已结束" not in driver.find_element(By.ID, "run-summary").text and time.time() < deadline:
            time.sleep(0.2)
        summary = driver.find_element(By.ID, "run-summary").text
        check(f"{len(KEEP)} " in summary and "已结束" in summary, summary)
        states = [c[1] for c in rows_of(driver, "#tests")]
        check(len(states) == len(KEEP) and all(s.startswith("通过") for s in states), states)
        # A test's steps, with their screenshots and who chose each action.
        driver.execute_script("document.querySelector('#tests tbody tr a').click()")
        deadline = time.time() + 30
        while not driver.find_elements(By.CSS_SELECTOR, "#steps figure img") and time.time() < deadline:
            time.sleep(0.2)
        figures = driver.execute_script(
            "return [...document.querySelectorAll('#steps figure')].map(f => "
            "[f.querySelectorAll('img').length, f.querySelector('.by').textContent])")
        check(figures and all(images == 1 for images, _ in figures), f"a screenshot a step: {figures}")
        check(all(by in ("model", "graph", "plan", "guard") for _, by in figures), figures)
        natural = driver.execute_script("return document.querySelector('#steps img').naturalWidth")
        check(natural and natural <= 240, f"a shrunk screenshot that decodes ({natural} px)")
        # English, and nothing fetched from elsewhere, no console error.
        driver.find_element(By.ID, "lang").click()
        time.sleep(0.5)
        check("ended" in driver.find_element(By.ID, "run-summary").text, "the English switch")
        origins = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
        check(all(o == url for o in origins), origins)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check(not errors, errors)
    finally:
        for child in children:
            child.kill()
            child.wait()
