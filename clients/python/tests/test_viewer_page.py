"""The viewer in headless Chromium: `viewer_page.py`, the browser test `atlas bench viewer` also
runs to measure frames, run against the demo server (and the large app's at ATLAS_BIG_URL, when
given), in a browser with WebGL and in one without (the 2D canvas drawing)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("webgl", ["on", "off"])
def test_the_viewer_draws_asks_and_follows_live(atlas_url, webgl):
    script = Path(__file__).with_name("viewer_page.py")
    env = {**os.environ, "ATLAS_URL": atlas_url, "ATLAS_VIEWER_WEBGL": webgl}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert run.stdout.rstrip().endswith("viewer checks passed"), run.stdout[-2000:]
