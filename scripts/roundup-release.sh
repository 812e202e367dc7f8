#!/bin/sh
# The explorer on a real release (the figures of docs/versions.md): Roundup OLD explored, upgraded
# to NEW in place (its data kept) and explored again from what the folder knows, and a copy of the
# upgraded tracker explored afresh at the same budget; prints the time each took, how many of the
# fresh exploration's states the re-exploration has, and how many pages both releases have kept
# their identity.
#   scripts/roundup-release.sh [OLD [NEW]]     (default 2.2.0 2.6.0)
# ATLAS_BIN names the atlas binary (default target/release/atlas); EXPLORE_ARGS the budget
# (default --max-states 60 --max-seconds 600 --credentials admin:admin).
set -eu
cd "$(dirname "$0")/.."
old=${1:-2.2.0} new=${2:-2.6.0}
atlas=${ATLAS_BIN:-target/release/atlas}
args=${EXPLORE_ARGS:---max-states 60 --max-seconds 600 --credentials admin:admin}
work=$(mktemp -d /tmp/atlas-release.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
server=
for release in "$old" "$new"; do scripts/roundup-tracker.sh install "$release"; done
serve() { # RELEASE DIR
  scripts/roundup-tracker.sh serve "$1" "$port" "$2" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 150); do curl -sf "http://127.0.0.1:$port/demo/" >/dev/null && return; sleep 0.2; done
  echo "Roundup $1 did not start" >&2; exit 1
}
explore() { # DATA RELEASE REPORT
  # shellcheck disable=SC2086
  "$atlas" explore "http://127.0.0.1:$port/demo/" --data "$1" --app-id roundup --app-version "$2" \
    --embedder hash $args --json "$3" 2>&1 | grep -v '^state: ' >&2
}
scripts/roundup-tracker.sh make "$old" "$work/site"
serve "$old" "$work/site"; explore "$work/data" "$old" "$work/first.json"; kill $server; wait $server 2>/dev/null || true
scripts/roundup-tracker.sh upgrade "$new" "$work/site"
cp -r "$work/site" "$work/site-copy"
serve "$new" "$work/site"; explore "$work/data" "$new" "$work/again.json"; kill $server; wait $server 2>/dev/null || true
serve "$new" "$work/site-copy"; explore "$work/fresh" "$new" "$work/fresh.json"; kill $server; wait $server 2>/dev/null || true
server=
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def saved(folder):
    return json.load(open(f"{work}/{folder}/apps/roundup/.atlas/explore.json"))["states"]
def report(name):
    return json.load(open(f"{work}/{name}.json"))
def same(a, b):  # one screen, as the explorer decides
    if a["fingerprint"] == b["fingerprint"]:
        return True
    x, y = set(a["links"]), set(b["links"])
    return a["key"] == b["key"] and len(x & y) >= 0.7 * max(len(x), len(y), 1)
first, again, fresh = report("first"), report("again"), report("fresh")
known, anew = saved("data"), saved("fresh")
old = known[: first["states"]]
live = [s for s in known if not s.get("gone")]
found = [s for s in anew if any(same(k, s) for k in live)]
addresses = {s["url"] for s in old}
both = [s for s in anew if s["url"] in addresses]
kept = [s for s in both if any(same(k, s) for k in old)]
release = again["release"]
print(f"first exploration ({first['version']}): {first['seconds']:.1f} s, {first['states']} states, {first['actions']} actions")
print(f"re-exploration ({again['version']}): {again['seconds']:.1f} s, {again['actions']} actions; "
      f"{release['same']} pages the same, {len(release['changed'])} changed, {len(release['gone'])} gone, {again['new_states']} new")
print(f"fresh exploration ({fresh['version']}): {fresh['seconds']:.1f} s, {fresh['states']} states, {fresh['actions']} actions")
print(f"re-exploration's time: {again['seconds'] / fresh['seconds']:.2f} of the fresh exploration's, {again['seconds'] / first['seconds']:.2f} of the first's")
print(f"states of the fresh exploration the re-exploration has: {len(found)} of {len(anew)} ({len(found) / max(len(anew), 1):.3f})")
print(f"pages both releases have (an address of {first['version']}) that kept their identity: {len(kept)} of {len(both)} ({len(kept) / max(len(both), 1):.3f})")
for s in anew:
    if s not in found:
        print(f"  not found: {s['name']} {s['url'][:100]}")
PY
