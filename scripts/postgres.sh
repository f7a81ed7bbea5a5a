# A private, throwaway PostgreSQL cluster for the tests (sourced by test.sh): initdb into a
# temporary directory, start on a free loopback port, export GRADLAB_TEST_POSTGRES_URL, and stop
# and remove it when the script exits. PostgreSQL refuses to run as root, so as root the
# cluster belongs to the `postgres` system user that Debian's package creates.

PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}"

as_cluster_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop_test_postgres() {
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
    as_cluster_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
  fi
}

start_test_postgres() {
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2
    return 1
  fi
  PG_DIR="$(mktemp -d /tmp/gradlab-pg.XXXXXX)"
  chmod 755 "$PG_DIR"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$PG_DIR"; fi
  local port
  port="$(free_port)"
  as_cluster_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  as_cluster_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
    -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on" start >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; return 1; }
  trap stop_test_postgres EXIT
  export GRADLAB_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  say "PostgreSQL test server on port $port"
}
