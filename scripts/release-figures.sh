#!/bin/sh
# The explorer on a real release (the figures of docs/versions.md): a web application at its OLD
# release explored, brought to NEW on the same address (its data kept) and explored again from
# what the folder knows, and a copy of the new release's site explored afresh at the same budget;
# prints the time each took, how many of the fresh exploration's states and templates (paths,
# numeric and hash-like segments abstracted: scripts/explore_figures.py) the re-exploration has,
# and how many pages both releases have kept their identity.
#   scripts/release-figures.sh roundup [OLD [NEW]]     Roundup, upgraded in place as its notes
#                                                      say (default 2.2.0 2.6.0), signed in
#   scripts/release-figures.sh datasette [OLD [NEW]]   Datasette over one SQLite database
#                                                      (default 0.59.4 0.65.5); its version read
#                                                      off its own footer
# Each release is installed from PyPI into its own virtual environment, once. ATLAS_BIN names
# the atlas binary (default target/release/atlas); EXPLORE_ARGS the budget (default
# --max-states 60 --max-seconds 600).
set -eu
cd "$(dirname "$0")/.."
app=${1:?roundup or datasette}
atlas=${ATLAS_BIN:-target/release/atlas}
args=${EXPLORE_ARGS:---max-states 60 --max-seconds 600}
work=$(mktemp -d /tmp/atlas-release.XXXXXX)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
server=
case $app in
roundup)
  old=${2:-2.2.0} new=${3:-2.6.0}
  url="http://127.0.0.1:$port/demo/"
  # The tracker's own version is on no page: the releases are named on the command line.
  name_old="--app-version $old" name_new="--app-version $new" sign_in="--credentials admin:admin"
  install_release() { scripts/roundup-tracker.sh install "$1"; }
  make_site() { scripts/roundup-tracker.sh make "$1" "$2"; }
  upgrade() { scripts/roundup-tracker.sh upgrade "$1" "$2"; }
  start() { exec scripts/roundup-tracker.sh serve "$1" "$port" "$2"; }
  ;;
datasette)
  old=${2:-0.59.4} new=${3:-0.65.5}
  url="http://127.0.0.1:$port/"
  name_old="" name_new="" sign_in=""
  venvs="${ATLAS_DATASETTE_DIR:-$HOME/.cache/atlas-datasette}"
  install_release() {
    if [ ! -x "$venvs/$1/bin/datasette" ]; then
      python3 -m venv "$venvs/$1" && "$venvs/$1/bin/pip" install --quiet "datasette==$1"
    fi
  }
  make_site() {
    mkdir -p "$2"
    python3 - "$2/site.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("create table issues (id integer primary key, title text, status text, body text)")
db.executemany("insert into issues (title, status, body) values (?, ?, ?)", [
    ("Login fails", "open", "The form says the password is wrong"),
    ("搜索很慢", "closed", "数据多时搜索需要十秒"),
    ("Export to CSV", "open", "Add an export button"),
])
db.commit()
PY
  }
  upgrade() { :; }
  start() { exec "$venvs/$1/bin/datasette" "$2/site.db" -p "$port"; }
  ;;
*)
  echo "release-figures.sh: roundup or datasette, not $app" >&2
  exit 2
  ;;
esac
for release in "$old" "$new"; do install_release "$release"; done
serve() { # RELEASE DIR
  start "$1" "$2" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 150); do curl -sf "$url" >/dev/null && return; sleep 0.2; done
  echo "$app $1 did not start" >&2; exit 1
}
explore() { # DATA NAME REPORT
  # shellcheck disable=SC2086
  "$atlas" explore "$url" --data "$1" --app-id "$app" $2 $sign_in --embedder hash $args --json "$3" 2>&1 \
    | grep -v '^state: ' >&2
}
stop() { kill $server; wait $server 2>/dev/null || true; server=; }
make_site "$old" "$work/site"
serve "$old" "$work/site"; explore "$work/data" "$name_old" "$work/first.json"; stop
upgrade "$new" "$work/site"
cp -r "$work/site" "$work/site-copy"
serve "$new" "$work/site"; explore "$work/data" "$name_new" "$work/again.json"; stop
serve "$new" "$work/site-copy"; explore "$work/fresh" "$name_new" "$work/fresh.json"; stop
python3 - "$work" "$app" <<'PY'
import json, sys
sys.path.insert(0, "scripts")
from explore_figures import template  # the path, numeric and hash-like segments abstracted
work, app = sys.argv[1], sys.argv[2]
def saved(folder):
    return json.load(open(f"{work}/{folder}/apps/{app}/.atlas/explore.json"))["states"]
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
      f"{release['same']} pages the same, {len(release['changed'])} changed, {len(release['gone'])} gone, {again['new_states']} new; "
      f"recorded ways {release['ways_kept']} kept, {len(release['ways_repaired'])} repaired, {len(release['ways_replaced'])} replaced")
print(f"fresh exploration ({fresh['version']}): {fresh['seconds']:.1f} s, {fresh['states']} states, {fresh['actions']} actions")
print(f"re-exploration's time: {again['seconds'] / fresh['seconds']:.2f} of the fresh exploration's, {again['seconds'] / first['seconds']:.2f} of the first's")
print(f"states of the fresh exploration the re-exploration has: {len(found)} of {len(anew)} ({len(found) / max(len(anew), 1):.3f})")
def templates(states):
    return {template(u) for s in states if not s.get("gone") for u in [s["url"]] + [e["url"] for e in s.get("examples", [])]}
mine, theirs = templates(known), templates(anew)
print(f"templates of the fresh exploration the re-exploration has: {len(mine & theirs)} of {len(theirs)} ({len(mine & theirs) / max(len(theirs), 1):.3f})")
for t in sorted(theirs - mine):
    print(f"  template not found: {t}")
print(f"pages both releases have (an address of {first['version']}) that kept their identity: {len(kept)} of {len(both)} ({len(kept) / max(len(both), 1):.3f})")
for s in anew:
    if s not in found:
        print(f"  not found: {s['name']} {s['url'][:100]}")
PY
