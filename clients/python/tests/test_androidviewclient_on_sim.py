"""AndroidViewClient (from PyPI, unchanged) on the simulated phone, through Debian's adb server, as
its users drive a phone: the view tree from `uiautomator dump` (nested as a phone's), a view found
by its text and touched, the top activity, a snapshot of the screen. On two DroidTask recordings,
the views' texts read from the dump, none written into the test.
"""

import subprocess

import pytest

viewclient = pytest.importorskip("com.dtmilano.android.viewclient", reason="installed by scripts/test.sh")


def adb(*args):
    return subprocess.run(["adb", *args], capture_output=True, text=True, timeout=60).stdout


@pytest.mark.parametrize("app", ["notes", "clock"])
def test_androidviewclient_finds_touches_and_snaps(app, simulated_phone):
    serial, package = simulated_phone(app)
    device, serialno = viewclient.ViewClient.connectToDeviceOrExit(serialno=serial, verbose=False)
    vc = viewclient.ViewClient(device, serialno, autodump=False)
    views = vc.dump(window=-1)
    assert len(views) > 5
    # The tree is nested: the root holds the rest.
    assert any(v.getChildren() for v in views)
    assert device.getTopActivityName().startswith(package + "/")
    snap = device.takeSnapshot(reconnect=True)
    assert snap.size[0] > 0 and snap.size[1] > 0
    screen = lambda: adb("-s", serial, "shell", "atlas-sim", "screen").strip()
    before = screen()
    # Some view found by its text leads somewhere when touched.
    texts = [v.getText() for v in views if v.getText()]
    assert texts, "no view with text"
    moved = False
    for text in texts:
        view = vc.findViewWithText(text)
        assert view is not None, text
        view.touch()
        if screen() != before:
            moved = True
            break
    assert moved, texts


def test_androidviewclient_sets_a_fields_text_and_reads_it_back(simulated_phone, tap_to_a_focused_field):
    serial, _ = simulated_phone("calendar")
    device, serialno = viewclient.ViewClient.connectToDeviceOrExit(serialno=serial, verbose=False)
    vc = viewclient.ViewClient(device, serialno, autodump=False)
    screen = lambda: adb("-s", serial, "shell", "atlas-sim", "screen").strip()
    for start, x, y, opened, resource_id in tap_to_a_focused_field("calendar"):
        adb("-s", serial, "shell", "atlas-sim", "reset", start)
        device.touch(x, y)
        if screen() == opened:
            break
    else:
        pytest.fail("no recorded tap to a focused field lands as recorded")
    vc.dump(window=-1)
    field = vc.findViewById(resource_id)
    assert field is not None and field.isFocused()
    # EditText.setText touches the field, deletes what it shows (Del and Forward-Del, once a
    # character and once more), and types: the dump reads back what was set, twice over.
    for text in ("laundry day", "visit parents"):
        field.setText(text)
        vc.dump(window=-1)
        field = vc.findViewById(resource_id)
        assert field.getText() == text
