#!/usr/bin/env bash
# A MoinMoin 2 wiki (PyPI's moin) in DIR, open to anonymous users for reading, writing, creating
# and destroying, with its English help pages and a welcome page: a real web application for
# `atlas explore` to be tested on. Usage: scripts/moin-wiki.sh MOIN DIR  (MOIN: the moin command).
set -euo pipefail
moin="$1"
dir="$2"
"$moin" create-instance --path "$dir" >/dev/null 2>&1
cd "$dir"
sed -i 's/before="YOUR-SUPER-EDITOR:read,write,create,destroy,admin"/before="All:read,write,create,destroy,admin"/' wikiconfig.py
grep -q 'before="All:read,write,create,destroy,admin"' wikiconfig.py
"$moin" index-create >/dev/null 2>&1
"$moin" load-help -n help-en >/dev/null 2>&1
"$moin" welcome >/dev/null 2>&1
