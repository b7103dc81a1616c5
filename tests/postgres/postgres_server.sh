#!/usr/bin/env bash
# A PostgreSQL server of the tests' (or a benchmark's) own: initdb in a folder, the server run by
# an unprivileged user (the `postgres` account when run as root: PostgreSQL refuses root) on a free
# loopback port, password logins only over TCP (scram-sha-256), the password in a pgpass file.
#   postgres_server.sh start DIR [durable]   writes DIR/uri (postgresql://optune@127.0.0.1:PORT)
#                                            and DIR/pgpass (for PGPASSFILE); without `durable`
#                                            the server skips fsync (tests), with it a benchmark
#                                            measures what a real server does (and may ask for
#                                            its plans: auto_explain)
#   postgres_server.sh stop DIR              stops it and removes DIR and the server's folder
#   postgres_server.sh restart DIR           stops it at once (-m immediate) and starts it again
#   postgres_server.sh halt DIR              stops it at once, keeping it (start-again starts it)
#   postgres_server.sh start-again DIR
#   postgres_server.sh log DIR               prints the server's log
# The server's own folder (its data, socket and server.log) is made under /tmp, not in DIR: DIR may
# lie where the unprivileged user cannot go (a clone in /root); DIR/server names it.
set -euo pipefail
action=${1:?start, stop, restart, halt or start-again}
dir=${2:?the server\'s folder}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/initdb" ] || { echo "postgres_server.sh: no PostgreSQL server installed (scripts/setup.sh installs it)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

server_dir() { cat "$dir/server"; }

start_server() {
  local server
  server=$(server_dir)
  as_owner "$bin/pg_ctl" -D "$server/data" -l "$server/server.log" -w -t 60 start >/dev/null
}

case $action in
start)
  [ -f "$dir/server" ] && bash "$0" stop "$dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  server=$(mktemp -d /tmp/optune-postgres.XXXXXX)
  chmod 700 "$server"
  [ "$(id -u)" = 0 ] && chown postgres "$server"
  echo "$server" >"$dir/server"
  password=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  as_owner bash -c "umask 077 && printf '%s\n' '$password' > '$server/pwfile'"
  as_owner "$bin/initdb" -D "$server/data" -U optune --pwfile="$server/pwfile" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  fsync=off
  extra=
  if [ "${3:-}" = durable ]; then
    fsync=on
    # A benchmark's query plans, asked for per session (PGOPTIONS=-c auto_explain.log_min_duration=0).
    extra="session_preload_libraries = 'auto_explain'"
  fi
  as_owner bash -c "cat >> '$server/data/postgresql.conf'" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$server'
fsync = $fsync
max_connections = 200
$extra
CONF
  start_server
  (umask 077 && printf '127.0.0.1:%s:*:optune:%s\n' "$port" "$password" >"$dir/pgpass")
  printf 'postgresql://optune@127.0.0.1:%s\n' "$port" >"$dir/uri"
  ;;
stop)
  if [ -f "$dir/server" ]; then
    server=$(server_dir)
    [ -d "$server/data" ] && as_owner "$bin/pg_ctl" -D "$server/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$server"
  fi
  rm -rf "$dir"
  ;;
restart)
  as_owner "$bin/pg_ctl" -D "$(server_dir)/data" -m immediate -w stop >/dev/null
  start_server
  ;;
halt)
  as_owner "$bin/pg_ctl" -D "$(server_dir)/data" -m immediate -w stop >/dev/null
  ;;
start-again)
  start_server
  ;;
log)  # the server's log, for a benchmark's plans
  cat "$(server_dir)/server.log"
  ;;
*)
  echo "postgres_server.sh: unknown action $action" >&2
  exit 2
  ;;
esac
