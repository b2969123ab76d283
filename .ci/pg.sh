#!/usr/bin/env bash
# Start a throwaway PostgreSQL on loopback for the tests and print the line to export its URL:
#     eval "$(bash .ci/pg.sh)"
# Idempotent: a server already answering on the port is reused. Everything but the final
# `export` line goes to stderr, so the output is safe to eval.
set -euo pipefail

port="${TOOLTRAY_PG_PORT:-54329}"
base="${TOOLTRAY_PG_DIR:-${TMPDIR:-/tmp}/tooltray-pg-$port}"
dbname="tooltray_test"

find_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | while read -r dir; do
        [ -x "$dir/initdb" ] && echo "$dir"
    done | tail -n 1
}

bin="$(find_bin)"
if [ -z "$bin" ]; then
    echo "pg.sh: no PostgreSQL found, installing it" >&2
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
    bin="$(find_bin)"
fi
[ -n "$bin" ] || { echo "pg.sh: initdb not found after install" >&2; exit 1; }

# PostgreSQL refuses to run as root: run its commands as the `postgres` user when we are root.
if [ "$(id -u)" = "0" ]; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$base" --shell /bin/bash postgres
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

# A throwaway server needs no durability: without fsync, the checkpoint each DROP DATABASE
# forces (one per PostgreSQL test) costs next to nothing. Crash tests kill clients, never it.
fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"

mkdir -p "$base"
[ "$(id -u)" = "0" ] && chown postgres: "$base"
data="$base/data"
sock="$base/sock"

if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
    if [ ! -s "$data/PG_VERSION" ]; then
        as_pg mkdir -p "$sock"
        as_pg "$bin/initdb" -D "$data" -A trust -U postgres -E UTF8 --no-instructions >&2
    fi
    as_pg mkdir -p "$sock"
    as_pg "$bin/pg_ctl" -D "$data" -l "$base/server.log" -w -t 60 start \
        -o "-k $sock -c listen_addresses=127.0.0.1 -p $port -c max_connections=200 $fast" >&2
fi

exists="$(as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$dbname'")"
if [ "$exists" != "1" ]; then
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$dbname" >&2
fi

echo "export TOOLTRAY_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$port/$dbname"
