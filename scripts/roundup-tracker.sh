#!/bin/sh
# A Roundup issue tracker (a Python issue tracker from PyPI) at one of its published releases,
# for the explorer's release tests and figures:
#   scripts/roundup-tracker.sh install VERSION       Roundup VERSION from PyPI into its own virtual
#                                                    environment, $ATLAS_ROUNDUP_DIR/VERSION
#                                                    (default ~/.cache/atlas-roundup), once
#   scripts/roundup-tracker.sh make VERSION DIR      a new classic tracker (sqlite) in DIR/tracker
#   scripts/roundup-tracker.sh upgrade VERSION DIR   the tracker in DIR upgraded to VERSION as
#                                                    Roundup's upgrading notes say: its data kept,
#                                                    its templates the new release's classic ones,
#                                                    its database migrated
#   scripts/roundup-tracker.sh serve VERSION PORT DIR  the tracker in DIR served by VERSION at
#                                                    http://127.0.0.1:PORT/demo/, in the foreground
set -eu
cd "$(dirname "$0")/.."
what=$1 version=$2
venv="${ATLAS_ROUNDUP_DIR:-$HOME/.cache/atlas-roundup}/$version"
# Older releases install their templates under an odd prefix: the one found is the one.
classic() { dirname "$(find "$venv" -path '*templates/classic/TEMPLATE-INFO.txt' | head -1)"; }
case $what in
install)
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import roundup' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "roundup==$version"
  fi
  ;;
make)
  home=$3
  rm -rf "$home/tracker"
  mkdir -p "$home"
  templates=$(classic)
  (cd "$(dirname "$templates")" && "$venv/bin/roundup-admin" -i "$home/tracker" install classic sqlite </dev/null >/dev/null)
  sed -i "s|^#domain = NO DEFAULT|domain = example.com|; s|^#web = NO DEFAULT|web = http://127.0.0.1/demo/|" "$home/tracker/config.ini"
  "$venv/bin/roundup-admin" -i "$home/tracker" initialise admin </dev/null >/dev/null
  ;;
upgrade)
  home=$3
  templates=$(classic)
  rm -rf "$home/tracker/html"
  cp -r "$templates/html" "$home/tracker/html"
  for file in schema.py initial_data.py; do cp "$templates/$file" "$home/tracker/$file"; done
  "$venv/bin/roundup-admin" -i "$home/tracker" migrate </dev/null >/dev/null
  ;;
serve)
  port=$3 home=$4
  sed -i "s|^web = .*|web = http://127.0.0.1:$port/demo/|" "$home/tracker/config.ini"
  exec "$venv/bin/python" scripts/roundup_wsgi.py "$home/tracker" "$port"
  ;;
*)
  echo "usage: $0 install VERSION | make VERSION DIR | upgrade VERSION DIR | serve VERSION PORT DIR" >&2
  exit 2
  ;;
esac
