#!/usr/bin/env bash
# The figures of docs/data-folder.md's "A full disk", as issue 63 measured the problem:
# `atlas serve --demo` with its data folder on a 24 MiB tmpfs, the disk filled to 64 KiB free,
# `report_transition` sent on one edge until refused and 90 times more, the filler removed
# (writes must resume without a restart), SIGTERM, a restart: the edge must hold exactly the
# acknowledged reports. Prints each figure. Needs root (to mount the tmpfs; elsewhere run it
# under `unshare -rm`), curl and python3.
#   scripts/full-disk-figures.sh            with the default reserve for checkpoints
#   RESERVE=0 scripts/full-disk-figures.sh  no reserve: the journal meets the full disk itself
# ATLAS_BIN names the atlas binary (default target/release/atlas).
set -u
cd "$(dirname "$0")/.."
BIN=${ATLAS_BIN:-target/release/atlas}
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release -p atlas-cli" >&2; exit 2; }
BIN=$(realpath "$BIN")
work=$(mktemp -d)
M="$work/disk"; mkdir "$M"
mount -t tmpfs -o size=24m tmpfs "$M" || { echo "cannot mount a tmpfs (run as root, or under unshare -rm)" >&2; exit 2; }
trap 'umount "$M" 2>/dev/null; rm -rf "$work"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
[ -n "${RESERVE:-}" ] && export ATLAS_DISK_RESERVE_MB=$RESERVE
"$BIN" serve --demo --data "$M/data" --addr "127.0.0.1:$PORT" --embedder hash 2>"$work/serve.log" &
PID=$!
for _ in $(seq 300); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.2; done
python3 - "$URL" "$M" <<'PY'
import json, os, subprocess, sys, time, urllib.request, urllib.error
url, mount = sys.argv[1], sys.argv[2]
def call(name, body):
    req = urllib.request.Request(f"{url}/api/v1/{name}", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r: return r.status, dict(r.headers), json.load(r)
    except urllib.error.HTTPError as e: return e.code, dict(e.headers), json.load(e)
def health():
    with urllib.request.urlopen(f"{url}/healthz") as r: return json.load(r)
home = call("match_current_page", {"app_id": "com.meituan.app", "page_title": "首页"})[2]["page"]["page_id"]
act = call("get_available_actions", {"page_id": home})[2]["actions"][0]
rep = {"from_page": home, "to_page": act["target_page_id"], "success": True, "latency_ms": 50,
       "action": {"type": act["action_type"], "widget_text": act["widget_text"]}, "app_id": "com.meituan.app"}
def count():
    return call("get_graph_stats", {"app_id": "com.meituan.app"})[2]["by_app"][0]["reports"]
start = count()
free = int(subprocess.check_output(["df", "--output=avail", "-B1", mount]).split()[1])
with open(os.path.join(mount, "filler"), "wb") as f:
    try:
        f.write(b"\0" * max(0, free - 64 * 1024)); f.flush(); os.fsync(f.fileno())
    except OSError: pass
time.sleep(0.2)
ack = refused = 0; first = None
t = time.time()
while refused < 90:
    s, h, b = call("report_transition", rep)
    if s == 200: ack += 1
    else:
        refused += 1
        first = first or (s, h.get("retry-after", h.get("Retry-After")), b["error"]["message"])
print("acknowledged", ack, "refused", refused, "first refusal", first)
print("health while full", health())
print("count in memory", count() - start, "of", ack)
os.remove(os.path.join(mount, "filler"))
t = time.time()
while call("report_transition", rep)[0] != 200: time.sleep(0.1)
print("writes resumed %.1f s after the filler went" % (time.time() - t)); ack += 1
print("health after", health()["status"])
open(os.path.join(mount, "..", "expected"), "w").write(str(start + ack))
PY
kill -TERM $PID; wait $PID; echo "SIGTERM: exit $?"
"$BIN" serve --data "$M/data" --addr "127.0.0.1:$PORT" --embedder hash 2>>"$work/serve.log" &
PID=$!
for _ in $(seq 300); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.2; done
python3 - "$URL" "$work/expected" <<'PY'
import json, sys, urllib.request
request = urllib.request.Request(f"{sys.argv[1]}/api/v1/get_graph_stats", data=b'{"app_id":"com.meituan.app"}',
                                 method="POST", headers={"Content-Type": "application/json"})
held = json.load(urllib.request.urlopen(request))["by_app"][0]["reports"]
expected = int(open(sys.argv[2]).read())
print("after the restart the app holds", held, "reports; acknowledged:", expected, "(exact)" if held == expected else "(NOT exact)")
PY
kill -TERM $PID; wait $PID
echo "log lines: $(grep -c 'writes stopped' "$work/serve.log") 'writes stopped', $(grep -c 'writes resumed' "$work/serve.log") 'writes resumed'"
