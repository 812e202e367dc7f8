"""Debian's adb sending the simulated phone what DroidBot (honeynet/droidbot) sends a phone while
it explores an app, in DroidBot's own form (`adb -s SERIAL shell` with every word quoted, or an
adb command of its own), each answer read for what DroidBot reads from it: the display's size and
orientation, density, properties, packages, the activity stack, the main activity from
`dumpsys package`, processes, files, screenshots, input. On a recording the test was written for
(notes) and one it was not (clock).

Left out, as they need what no simulated phone has: DroidBot's own app and IME (installed from
its APK), `sqlite3` on the settings database (root), `reboot -p`, the emulator console, minicap's
binary, and the profiler.
"""

import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("adb") is None, reason="Debian's adb is installed by scripts/test.sh")


def adb(serial, *args, timeout=60):
    """`adb -s SERIAL ARGS…` as DroidBot runs it: its output, stripped; an error when it fails."""
    done = subprocess.run(["adb", "-s", serial, *args], capture_output=True, timeout=timeout)
    assert done.returncode == 0, (args, done.stderr.decode(errors="replace"))
    return done.stdout.strip().decode("utf-8", errors="replace")


def shell(serial, command):
    """DroidBot's `shell`: the command split on whitespace, each word quoted."""
    return adb(serial, "shell", *[shlex.quote(word) for word in command.split()])


def droidbot_commands(package, main_activity):
    """(what DroidBot asks, the command, how DroidBot reads the answer: True when it can)."""
    number = re.compile(r"[-+]?\d*\.\d+|\d+")
    return [
        ("model", "getprop ro.product.model", lambda out: out != ""),
        ("sdk version", "getprop ro.build.version.sdk", lambda out: int(out) >= 21),
        ("release", "getprop ro.build.version.release", lambda out: out != ""),
        ("ro.secure", "getprop ro.secure", lambda out: int(out) in (0, 1)),
        ("ro.debuggable", "getprop ro.debuggable", lambda out: int(out) in (0, 1)),
        ("display viewport", "dumpsys display",
         lambda out: re.search(r"DisplayViewport\{valid=true, .*orientation=\d+, .*deviceWidth=\d+, deviceHeight=\d+", out)),
        ("physical size", "wm size", lambda out: re.search(r"Physical size: \d+x\d+", out)),
        ("window", "dumpsys window", lambda out: out != ""),
        ("orientation", "dumpsys input", lambda out: re.search(r"SurfaceOrientation:\s+\d+", out)),
        ("density", "getprop ro.sf.lcd_density", lambda out: number.match(out) or out == ""),
        ("physical density", "wm density", lambda out: re.search(r"Physical density: [\d.]+", out)),
        ("accessibility services", "settings get secure enabled_accessibility_services", lambda out: True),
        ("enable a service", "settings put secure enabled_accessibility_services a.b/.C", lambda out: True),
        ("the service enabled", "settings get secure enabled_accessibility_services", lambda out: out == "a.b/.C"),
        ("accessibility on", "settings put secure accessibility_enabled 1", lambda out: True),
        ("installed apps", "pm list packages -f",
         lambda out: any(re.match(rf"package:(.+)={re.escape(package)}$", line) for line in out.splitlines())),
        ("package path", f"pm path {package}", lambda out: re.match(r"^package:(.+)$", out)),
        ("main activity", f"dumpsys package {package}", lambda out: main_activity_of(out, package)),
        ("start the app", f"am start {package}/{main_activity}", lambda out: "Error" not in out),
        ("top activity", "dumpsys activity activities",
         lambda out: (m := re.search(r"\*\s*Hist\s*#\d+:\s*ActivityRecord\{[^ ]+\s*[^ ]+\s*([^ ]+)\s*t(\d+)}", out))
         and m.group(1).startswith(package + "/")),
        ("tasks", "dumpsys activity activities",
         lambda out: any(re.match(r"^\s*Task\s*id\s*#(\d+)|^\s*Task\{\w+\s*#(\d+)", line.strip()) for line in out.splitlines())),
        ("services", "dumpsys activity services", lambda out: True),
        ("processes", "ps", lambda out: ps_has(out, package)),
        ("menu", "input keyevent MENU", lambda out: True),
        ("back", "input keyevent BACK", lambda out: True),
        ("tap", "input tap 540 960", lambda out: True),
        ("old swipe", "input swipe 540 1500 540 500", lambda out: True),
        ("swipe", "input touchscreen swipe 540 1500 540 500 300", lambda out: True),
        ("long touch", "input touchscreen swipe 540 960 540 960 2000", lambda out: True),
        ("text", "input text hello%sworld", lambda out: True),
        ("home", "input keyevent HOME", lambda out: True),
        ("monkey start", f"monkey -p {package}",
         lambda out: not re.search(r"(Error)|(Cannot find 'App')", out, re.IGNORECASE | re.MULTILINE)),
        ("stop the app", f"am force-stop {package}", lambda out: True),
    ]


def main_activity_of(dumpsys, package):
    """The launcher activity of `dumpsys package` as DroidBot reads it: a `PKG/ACT filter` line
    followed by the MAIN action and the LAUNCHER category."""
    current, actions, categories, found = None, [], [], []
    for line in dumpsys.splitlines() + ["x a/b filter end"]:
        line = line.strip()
        m = re.match(r"[^ ]+ ([^ ]+)/([^ ]+) filter [^ ]+", line)
        if m:
            if current and "android.intent.action.MAIN" in actions and "android.intent.category.LAUNCHER" in categories:
                found.append(current)
            pkg, act = m.group(1), m.group(2)
            current = pkg + act if act.startswith(".") else act
            actions, categories = [], []
        elif (a := re.match(r'Action: "([^ ]+)"', line)):
            actions.append(a.group(1))
        elif (c := re.match(r'Category: "([^ ]+)"', line)):
            categories.append(c.group(1))
    return found


def ps_has(out, package):
    lines = out.splitlines()
    head = lines[0].split()
    return head[1] == "PID" and head[-1] == "NAME" and any(
        line.split()[-1] == package and int(line.split()[1]) > 0 for line in lines[1:] if len(line.split()) >= 4)


@pytest.mark.parametrize("app", ["notes", "clock"])
def test_droidbot_s_commands_answer_as_a_phone_does(app, simulated_phone):
    serial, package = simulated_phone(app)
    assert adb(serial, "get-state") == "device"
    adb(serial, "wait-for-device")
    main = main_activity_of(shell(serial, f"dumpsys package {package}"), package)
    assert main, "no launcher activity in dumpsys package"
    commands = droidbot_commands(package, main[0])
    failed = []
    for what, command, reads in commands:
        try:
            if not reads(shell(serial, command)):
                failed.append((what, command))
        except (AssertionError, ValueError, IndexError) as e:
            failed.append((what, command, str(e)[:200]))
    # Files and screenshots as DroidBot moves them: push, pull, screencap to a file, rm.
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp) / "in.txt"
        local.write_text("droidbot 你好\n", encoding="utf-8")
        adb(serial, "push", str(local), "/sdcard/")
        adb(serial, "pull", "/sdcard/in.txt", str(Path(tmp) / "back.txt"))
        assert (Path(tmp) / "back.txt").read_text(encoding="utf-8") == "droidbot 你好\n"
        remote = "/sdcard/screen_2026-11-28_120000.png"
        shell(serial, f"screencap -p {remote}")
        adb(serial, "pull", remote, str(Path(tmp) / "shot.png"))
        assert (Path(tmp) / "shot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        shell(serial, f"rm {remote}")
        assert "screen_" not in shell(serial, "ls /sdcard")
    adb(serial, "logcat", "-c")
    # Whether minicap is on the phone: as on a phone without it, `ls` fails (DroidBot quotes its
    # `2>/dev/null` into an argument, so the error is ls's own).
    missing = subprocess.run(["adb", "-s", serial, "shell", "'ls'", "'/data/local/tmp/minicap-devel'", "'2>/dev/null'"],
                             capture_output=True, timeout=60)
    assert missing.returncode == 1 and b"No such file" in missing.stdout + missing.stderr, missing
    assert failed == [], f"{len(failed)} of {len(commands)} commands DroidBot cannot read: {failed}"
