"""adbutils (from PyPI, unchanged) on the simulated phone, through Debian's adb server, as its users
call it: shell (plain, `shell2` reading the status through `$?`, and over shell_v2), screenshots
(screencap and the `framebuffer:` service, the same picture), input, apps, files, and what a
phone reports of itself. Every call on a DroidTask recording the test was not written for
(clock), beside the one it was (notes).
"""

import os
import tempfile

import pytest

adbutils = pytest.importorskip("adbutils", reason="installed by scripts/test.sh")


@pytest.mark.parametrize("app", ["notes", "clock"])
def test_adbutils_calls_answer_as_a_phone_does(app, simulated_phone):
    serial, package = simulated_phone(app)
    client = adbutils.AdbClient(host="127.0.0.1", port=5037)
    d = client.device(serial)
    # The shell: output, status both ways, variables, redirection, test.
    assert d.shell("echo hi") == "hi"
    assert d.shell2("false").returncode == 1
    assert d.shell2("true").returncode == 0
    assert d.shell2("nothing-here").returncode == 127
    assert d.shell2("false", v2=True).returncode == 1
    assert d.shell("N=/sdcard/n.txt; echo one > $N; echo two >> $N; cat $N") == "one\ntwo"
    assert d.shell("[ -f /sdcard/n.txt ] && echo yes") == "yes"
    assert d.get_state() == "device"
    assert d.get_serialno() == serial
    # The screen: its size, a screenshot two ways, the same picture.
    size = d.window_size()
    shot = d.screenshot()
    frame = d.framebuffer()
    assert shot.size == frame.size == (size.width, size.height)
    assert shot.convert("RGB").tobytes() == frame.convert("RGB").tobytes()
    assert d.rotation() == 0
    assert d.is_screen_on()
    assert len(d.dump_hierarchy()) > 100
    # Input.
    d.click(size.width // 2, size.height // 2)
    d.swipe(size.width // 2, size.height * 3 // 4, size.width // 2, size.height // 4, 0.1)
    d.keyevent("BACK")
    d.send_keys("hello")
    # Apps.
    assert package in d.list_packages()
    d.app_start(package)
    assert d.app_current().package == package
    info = d.app_info(package)
    assert info is not None and info.version_name == "1.0"
    d.app_stop(package)
    d.app_clear(package)
    battery = d.battery()
    assert battery.level == 80 and battery.usb_powered is True
    # Files: push, read back, list, stat, remove; a folder stays when its last file goes, and
    # rmtree takes it.
    local = os.path.join(tempfile.mkdtemp(), "f.txt")
    with open(local, "w", encoding="utf-8") as f:
        f.write("x")
    d.sync.push(local, "/sdcard/t/f.txt")
    assert d.sync.read_text("/sdcard/t/f.txt") == "x"
    assert "f.txt" in [e.path for e in d.sync.list("/sdcard/t")]
    assert d.sync.stat("/sdcard/t/f.txt").size == 1
    d.remove("/sdcard/t/f.txt")
    assert not d.sync.exists("/sdcard/t/f.txt")
    assert d.shell2("[ -d /sdcard/t ]").returncode == 0
    d.rmtree("/sdcard/t")
    assert d.shell2("[ -d /sdcard/t ]").returncode == 1
    assert "rm: /sdcard: Is a directory" in d.shell("rm /sdcard")


def test_adbutils_types_into_the_field_a_tap_opened_and_reads_it_back(simulated_phone, tap_to_a_focused_field):
    import xml.etree.ElementTree as ET

    serial, _ = simulated_phone("calendar")
    d = adbutils.AdbClient(host="127.0.0.1", port=5037).device(serial)

    def field(resource_id):
        tree = ET.fromstring(d.dump_hierarchy())
        return next(n for n in tree.iter("node") if n.get("resource-id") == resource_id)

    for start, x, y, opened, resource_id in tap_to_a_focused_field("calendar"):
        d.shell(f"atlas-sim reset {start}")
        d.click(x, y)
        if d.shell("atlas-sim screen") == opened:
            break
    else:
        pytest.fail("no recorded tap to a focused field lands as recorded")
    # The field the tap opened has the focus: what is typed shows in it, and a second typing
    # goes on from the first, as on a phone.
    assert field(resource_id).get("focused") == "true"
    d.send_keys("laundry")
    d.send_keys(" day")
    assert field(resource_id).get("text") == "laundry day"
    # Del takes a character; the cursor kept at the end, Del as often as there are characters
    # clears it.
    d.keyevent("KEYCODE_DEL")
    assert field(resource_id).get("text") == "laundry da"
    d.keyevent("KEYCODE_MOVE_END")
    for _ in range(len("laundry da")):
        d.keyevent("KEYCODE_DEL")
    assert field(resource_id).get("text") == ""
