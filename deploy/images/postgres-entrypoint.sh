#!/bin/sh
# The PostgreSQL image's entrypoint. On the first start (an empty data directory) it creates the
# cluster: superuser POSTGRES_USER (default platform) with the password in POSTGRES_PASSWORD_FILE
# (a Compose or Swarm secret; its first line), database POSTGRES_DB (default platform), UTF-8,
# scram-sha-256 for every TCP client, trust on the container's own Unix socket (only processes in
# this container reach it: `pg_dump`/`pg_restore` through `docker exec`). Then, and on every later
# start, it runs `postgres` in the foreground with any extra arguments ("-c name=value").
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
user=${POSTGRES_USER:-platform}
db=${POSTGRES_DB:-platform}

log() { printf 'platform-postgres: %s\n' "$*" >&2; }

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=${POSTGRES_PASSWORD_FILE:-}
  if [ -z "$pwfile" ] || [ ! -r "$pwfile" ] || [ ! -s "$pwfile" ]; then
    log "the data directory is empty and POSTGRES_PASSWORD_FILE (${pwfile:-unset}) is not a readable, non-empty file"
    exit 64
  fi
  log "initialising $PGDATA (user $user, database $db)"
  # initdb reads the first line of --pwfile; nothing of it is printed.
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  {
    echo "listen_addresses = '*'"
    echo "password_encryption = 'scram-sha-256'"
  } >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ "$db" != postgres ]; then
    createdb -U "$user" -O "$user" "$db"
  fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  log "initialised"
fi

exec postgres -D "$PGDATA" "$@"
