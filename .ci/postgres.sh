#!/usr/bin/env bash
# Start a PostgreSQL server on 127.0.0.1 for the test suite and print the URL to use (the only line on stdout).
# Idempotent: installs the Debian packages only when missing, reuses a running server, and creates the role and
# database only when absent. CI machines start without PostgreSQL; developer machines may already have a cluster.
#
#   TEST_DATABASE_URL=$(.ci/postgres.sh) pytest -q
#
# The server is tuned for throwaway test data (fsync off): never point this script at a cluster holding real data.
set -euo pipefail

PG_USER=${PG_TEST_USER:-gpuradar}
PG_PASSWORD=${PG_TEST_PASSWORD:-gpuradar}
PG_DB=${PG_TEST_DB:-gpuradar_test}
PG_PORT=${PG_TEST_PORT:-5432}
# Durability is irrelevant for test databases; turning it off makes CREATE/DROP DATABASE per test cheap.
FAST_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c listen_addresses=127.0.0.1"

log() { echo "postgres.sh: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

as_postgres() {
    if [ "$(id -un)" = postgres ]; then "$@"; else as_root runuser -u postgres -- "$@"; fi
}

pg_bindir() {
    # The newest installed server version; Debian keeps each under /usr/lib/postgresql/<version>/bin.
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
    [ -n "$dir" ] && [ -x "$dir/postgres" ] && echo "$dir"
}

install_postgres() {
    if pg_bindir >/dev/null; then
        return
    fi
    log "installing PostgreSQL from the Debian packages"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
}

# Prints "<port> <socket dir>" of a server that is running (starting it when needed).
start_cluster() {
    # PG_TEST_PRIVATE=1 skips the system cluster (a developer's machine may keep real data there).
    if [ -z "${PG_TEST_PRIVATE:-}" ] && command -v pg_lsclusters >/dev/null && [ -n "$(pg_lsclusters -h 2>/dev/null)" ]; then
        local line version name port status
        # Prefer the cluster on the wanted port, else the first one.
        line=$(pg_lsclusters -h | awk -v p="$PG_PORT" '$3 == p' | head -n1)
        [ -n "$line" ] || line=$(pg_lsclusters -h | head -n1)
        read -r version name port status _ <<<"$line"
        if [ "$status" != online ]; then
            log "starting cluster $version/$name on port $port"
            as_root pg_ctlcluster -o "$FAST_OPTS" "$version" "$name" start >&2
        fi
        echo "$port /var/run/postgresql"
        return
    fi
    # No Debian cluster (packages installed without one): a private data directory, owned by postgres.
    local bindir datadir
    bindir=$(pg_bindir)
    datadir=${PG_TEST_DATADIR:-/tmp/gpuradar-pgdata}
    if [ ! -f "$datadir/PG_VERSION" ]; then
        log "initdb into $datadir"
        as_root mkdir -p "$datadir"
        as_root chown postgres: "$datadir"
        as_postgres "$bindir/initdb" -D "$datadir" -U postgres --auth-local=peer --auth-host=scram-sha-256 >&2
    fi
    if ! as_postgres "$bindir/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
        log "starting private server in $datadir on port $PG_PORT"
        as_postgres "$bindir/pg_ctl" -D "$datadir" -l "$datadir/server.log" -w start \
            -o "$FAST_OPTS -p $PG_PORT -k $datadir" >&2
    fi
    echo "$PG_PORT $datadir"
}

wait_ready() {
    local port=$1 tries=60
    until pg_isready_bin -h 127.0.0.1 -p "$port" -q; do
        tries=$((tries - 1))
        if [ "$tries" -le 0 ]; then
            log "server on 127.0.0.1:$port did not become ready"
            exit 1
        fi
        sleep 0.5
    done
}

pg_isready_bin() {
    if command -v pg_isready >/dev/null; then pg_isready "$@"; else "$(pg_bindir)/pg_isready" "$@"; fi
}

psql_admin() {
    local port=$1 sock=$2
    shift 2
    as_postgres "$(pg_bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d postgres "$@"
}

install_postgres
read -r PORT SOCK < <(start_cluster)
wait_ready "$PORT"

# The test role creates and drops one database per test, hence CREATEDB.
psql_admin "$PORT" "$SOCK" >&2 <<SQL
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
        CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
    ELSE
        ALTER ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
    END IF;
END
\$\$;
SQL
if [ -z "$(psql_admin "$PORT" "$SOCK" -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]; then
    log "creating database $PG_DB"
    psql_admin "$PORT" "$SOCK" -c "CREATE DATABASE $PG_DB OWNER $PG_USER" >&2
fi

echo "postgresql+asyncpg://$PG_USER:$PG_PASSWORD@127.0.0.1:$PORT/$PG_DB"
