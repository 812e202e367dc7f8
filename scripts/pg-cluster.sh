#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for the tests and the benchmarks.
#
#   scripts/pg-cluster.sh start DIR PORT   creates (if new) and starts a cluster in DIR; prints its URL
#   scripts/pg-cluster.sh stop DIR         stops it (fast: open connections are cut)
#   scripts/pg-cluster.sh restart DIR      stops and starts it again, same port, same data
#   scripts/pg-cluster.sh kill DIR         stops it at once (immediate: as a crash would)
#
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (which
# Debian's package creates); the folder is made theirs. Installs Debian's postgresql when missing.
set -euo pipefail
cmd=${1:?usage: pg-cluster.sh start|stop|restart|kill DIR [PORT]}
dir=${2:?the folder of the cluster}

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/pg_ctl" ] && bindir=$d
done
if [ -z "$bindir" ] && [ "$cmd" = start ]; then
  echo "installing postgresql" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null 2>&1 \
    || { echo "could not install postgresql" >&2; exit 2; }
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/pg_ctl" ] && bindir=$d
  done
fi
[ -n "$bindir" ] || { echo "no PostgreSQL server found (install Debian's postgresql)" >&2; exit 2; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

case "$cmd" in
  start)
    port=${3:?the port}
    if [ ! -f "$dir/PG_VERSION" ]; then
      mkdir -p "$dir"
      [ "$(id -u)" = 0 ] && chown postgres: "$dir" && chmod 700 "$dir"
      as_owner "$bindir/initdb" -D "$dir" --auth=trust --username=postgres --encoding=UTF8 \
        --locale=C.UTF-8 >/dev/null
      cat >>"$dir/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 200
fsync = on
synchronous_commit = on
EOF
    fi
    as_owner "$bindir/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null
    as_owner "$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qtAc \
      "SELECT 1 FROM pg_database WHERE datname = 'atlas'" | grep -q 1 \
      || as_owner "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres atlas
    echo "postgres://postgres@127.0.0.1:$port/atlas?sslmode=disable"
    ;;
  stop) as_owner "$bindir/pg_ctl" -D "$dir" -m fast -w stop >/dev/null ;;
  kill) as_owner "$bindir/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null ;;
  restart) as_owner "$bindir/pg_ctl" -D "$dir" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
