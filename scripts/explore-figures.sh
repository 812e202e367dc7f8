#!/bin/sh
# The explorer against a plain breadth-first crawl, on real web applications (the figures of
# docs/explorer.md and the README): each site is served on loopback, explored with `atlas
# explore`'s defaults (EXPLORE_ARGS adds to them), then crawled by `atlas crawl` with the page
# loads the explorer spent; scripts/explore_figures.py reads the folder and both reports and
# prints a row: templates the crawl reached that the explorer has, states that are the
# explorer's own input, the most states a template, time.
#   scripts/explore-figures.sh datasette|sqliteweb|rustdoc|pypiserver|pelican|roundup|moin|trac|hg ...
# Each application is installed from PyPI into its own virtual environment under ~/.cache
# (once); rustdoc is the documentation of serde_json, from the lockfile. Where the site keeps a database file (datasette, sqliteweb), a line says whether
# the file is byte for byte what it was: the explorer wrote nothing. ATLAS_BIN names the
# atlas binary (default target/release/atlas). Anonymous throughout: the crawl cannot sign
# in, so neither does the explorer here. (Python's pydoc server is left out: it serves one
# connection at a time, and a browser's spare connections hold it, the crawl's as well.)
set -eu
cd "$(dirname "$0")/.."
atlas=${ATLAS_BIN:-target/release/atlas}
cache=${ATLAS_SITES_DIR:-$HOME/.cache}
venv() { # NAME PACKAGE...: a virtual environment with the packages, made once
  dir="$cache/atlas-$1"; shift
  if [ ! -x "$dir/.ready" ]; then
    python3 -m venv "$dir" && "$dir/bin/pip" install --quiet "$@" && touch "$dir/.ready" && chmod +x "$dir/.ready"
  fi
  echo "$dir"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

shop_db() { # FILE: a small shop database, Chinese text in it
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("create table customers (id integer primary key, name text, city text)")
db.execute("create table orders (id integer primary key, customer_id integer references customers(id), item text, status text, total real)")
db.executemany("insert into customers (name, city) values (?, ?)",
               [("Ann", "Berlin"), ("Bo", "上海"), ("Cy", "Paris"), ("Di", "Berlin"), ("Ed", "Lyon")])
db.executemany("insert into orders (customer_id, item, status, total) values (?, ?, ?, ?)",
               [(1 + i % 5, ["Book", "茶", "Pen", "Lamp", "Desk"][i % 5], ["open", "shipped", "closed"][i % 3], 2.5 * i) for i in range(40)])
db.commit()
PY
}

blog() { # DIR: a small blog's sources for Pelican, Chinese text in it
  python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "pages"), exist_ok=True)
with open(os.path.join(root, "pelicanconf.py"), "w") as f:
    f.write('SITENAME = "Field notes"\nSITEURL = ""\nTIMEZONE = "UTC"\nDEFAULT_LANG = "en"\n'
            'DEFAULT_PAGINATION = 4\nRELATIVE_URLS = True\nPATH = %r\n' % root)
categories = ["Travel", "Tea", "Code"]
authors = ["Ann", "Bo"]
tags = ["notes", "上海", "python", "green", "trains"]
for i in range(1, 15):
    with open(os.path.join(root, "article-%d.rst" % i), "w") as f:
        title = "Note %d: %s" % (i, ["a walk", "绿茶", "a parser", "night train"][i % 4])
        f.write("%s\n%s\n\n:date: 2026-0%d-%02d 10:00\n:category: %s\n:tags: %s, %s\n"
                ":author: %s\n:slug: note-%d\n\nWhat happened on day %d. 第%d篇。\n"
                % (title, "#" * (2 * len(title)), 1 + i % 9, 1 + i, categories[i % 3],
                   tags[i % 5], tags[(i + 2) % 5], authors[i % 2], i, i, i))
for name in ("About", "Contact"):
    with open(os.path.join(root, "pages", name.lower() + ".rst"), "w") as f:
        f.write("%s\n%s\n\nThe %s page. 关于本站。\n" % (name, "#" * (2 * len(name)), name))
PY
}

site_up() { # NAME WORK PORT: makes the site in WORK and serves it on PORT in the background
  case $1 in
  datasette)
    dir=$(venv datasette-figures "datasette==0.65.5")
    shop_db "$2/shop.db"
    "$dir/bin/datasette" "$2/shop.db" -p "$3" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  sqliteweb)
    dir=$(venv sqliteweb sqlite-web)
    shop_db "$2/shop.db"
    "$dir/bin/sqlite_web" --no-browser --port "$3" "$2/shop.db" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  rustdoc)
    # A crate's API documentation as rustdoc writes it, served as static files.
    cargo doc --quiet --offline -p serde_json --no-deps --target-dir "$2/doc" >/dev/null 2>&1
    python3 -m http.server --bind 127.0.0.1 --directory "$2/doc/doc" "$3" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/serde_json/index.html"
    ;;
  pelican)
    # A blog as Pelican writes it (articles, categories, tags, authors, pages of the index),
    # served as static files. Added after the other sites' rules, and run as it came: held back.
    dir=$(venv pelican "pelican==4.12.0")
    blog "$2/content"
    "$dir/bin/pelican" --quiet "$2/content" -o "$2/output" -s "$2/content/pelicanconf.py" >/dev/null
    python3 -m http.server --bind 127.0.0.1 --directory "$2/output" "$3" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  pypiserver)
    dir=$(venv pypiserver pypiserver)
    "$dir/bin/pip" download --quiet --no-deps six idna packaging -d "$2/packages"
    "$dir/bin/pypi-server" run --disable-fallback -i 127.0.0.1 -p "$3" "$2/packages" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  roundup)
    export ATLAS_ROUNDUP_DIR="${ATLAS_ROUNDUP_DIR:-$cache/atlas-roundup}"
    scripts/roundup-tracker.sh install 2.6.0 >/dev/null
    scripts/roundup-tracker.sh make 2.6.0 "$2/site" >/dev/null
    scripts/roundup-tracker.sh serve 2.6.0 "$3" "$2/site" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/demo/"
    ;;
  moin)
    moin=${ATLAS_MOIN:-$(venv moin-venv --pre moin)/bin/moin}
    scripts/moin-wiki.sh "$moin" "$2/wiki"
    (cd "$2/wiki" && exec "$moin" run --port "$3") >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  trac)
    dir=$(venv trac Trac)
    "$dir/bin/trac-admin" "$2/trac" initenv Demo sqlite:db/trac.db >/dev/null
    "$dir/bin/python" - "$2/trac" <<'PY'
import sys
from trac.env import Environment
from trac.ticket.model import Ticket
env = Environment(sys.argv[1])
for i, (summary, kind) in enumerate([("Login fails", "defect"), ("搜索很慢", "defect"),
                                     ("Export to CSV", "enhancement"), ("Docs for the API", "task"),
                                     ("Crash on save", "defect"), ("Dark mode", "enhancement")]):
    t = Ticket(env)
    t.populate({"summary": summary, "type": kind, "reporter": "ann", "status": "new",
                "component": "component1", "milestone": "milestone%d" % (1 + i % 4),
                "description": "Ticket %d of the demo." % (i + 1)})
    t.insert()
PY
    "$dir/bin/tracd" -s --port "$3" -b 127.0.0.1 "$2/trac" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  hg)
    dir=$(venv hg mercurial)
    mkdir -p "$2/repo" && cd "$2/repo"
    "$dir/bin/hg" init
    for i in 1 2 3 4 5 6; do
      mkdir -p "src/part$i" && echo "line $i" >"src/part$i/file.txt" && echo "说明 $i" >"README.md"
      "$dir/bin/hg" add -q . && "$dir/bin/hg" commit -q -u ann -m "Change $i: part $i"
    done
    cd - >/dev/null
    "$dir/bin/hg" serve -R "$2/repo" -a 127.0.0.1 -p "$3" >/dev/null 2>&1 &
    url="http://127.0.0.1:$3/"
    ;;
  *)
    echo "explore-figures.sh: datasette, sqliteweb, rustdoc, pypiserver, pelican, roundup, moin, trac or hg, not $1" >&2
    exit 2
    ;;
  esac
  server=$!
  for _ in $(seq 300); do curl -sf -o /dev/null "$url" && return; sleep 0.2; done
  echo "$1 did not start" >&2
  exit 1
}

for name in "$@"; do
  work=$(mktemp -d /tmp/atlas-figures.XXXXXX)
  port=$(free_port)
  server=
  site_up "$name" "$work" "$port"
  before=$(sha256sum "$work"/*.db 2>/dev/null || true)
  # shellcheck disable=SC2086
  "$atlas" explore "$url" --data "$work/data" --app-id "$name" --embedder hash ${EXPLORE_ARGS:-} \
    --json "$work/explore.json" 2>&1 | grep -v '^state: ' >&2
  loads=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loads"])' "$work/explore.json")
  "$atlas" crawl "$url" --max-loads "$loads" --json "$work/crawl.json" >&2
  python3 scripts/explore_figures.py "$work/data/apps/$name" "$work/explore.json" "$work/crawl.json" "$name"
  if [ -n "$before" ]; then
    if [ "$before" = "$(sha256sum "$work"/*.db)" ]; then echo "$name: database unchanged"; else echo "$name: DATABASE CHANGED"; fi
  fi
  kill "$server" 2>/dev/null || true
  pkill -P "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
done
