#!/usr/bin/env bash
# Installs the PostgreSQL server binaries the postgres tests start a throw-away cluster from
# (chant/tests/integration/postgres_cluster.rs), when they are missing. Idempotent: with
# /usr/lib/postgresql/<version>/bin/initdb and pgbench present it does nothing. Debian/Ubuntu,
# as root (CI) or through sudo. The package's own system cluster is not used (the tests pick a
# free port); on a host where it starts, it stays on 5432 and is left alone.
set -euo pipefail

have_server() {
  for bin in /usr/lib/postgresql/*/bin; do
    [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] && [ -x "$bin/pgbench" ] && return 0
  done
  return 1
}

if have_server; then
  echo "postgres.sh: server binaries present: $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  exit 0
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Do not create (or start) the package's own cluster on 5432; the tests start their own.
if [ -f /etc/postgresql-common/createcluster.conf ] || $SUDO mkdir -p /etc/postgresql-common; then
  grep -q '^create_main_cluster' /etc/postgresql-common/createcluster.conf 2>/dev/null \
    || echo 'create_main_cluster = false' | $SUDO tee -a /etc/postgresql-common/createcluster.conf >/dev/null
fi
timeout 300 $SUDO apt-get update -qq
timeout 600 $SUDO apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib >/dev/null
have_server || { echo "postgres.sh: installed, but no server binaries under /usr/lib/postgresql/*/bin" >&2; exit 1; }
echo "postgres.sh: installed $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
