#!/usr/bin/env bash
# Restore the platform's database from a dump of the `backup` service (platform-backup: a
# `pg_dump --format=custom` file), on a Compose deployment:
#
#   deploy/restore.sh ./platform-20261129T030000Z.dump
#
# 1. the dump is checked (`pg_restore --list`) before anything stops;
# 2. the master, the validator and the backups stop, so nothing writes during the restore;
# 3. `pg_restore --clean --if-exists --single-transaction --exit-on-error` in the postgres
#    container: every object of the dump is dropped and recreated in ONE transaction, so a failed
#    restore leaves the database as it was; it works on a wiped (new, empty) volume too;
# 4. the master and the backups start again (and the validator, if it was running).
#
# The master key must be the one the dump was made under (PLATFORM_MASTER_KEY_FILE): challenge
# and broker tokens are derived from it, and a database restored under another key serves
# challenges whose tokens no longer match.
#
# Environment: COMPOSE (the command; default `docker compose` when that plugin answers, else
# `docker-compose`), and Compose's own COMPOSE_FILE (default deploy/docker-compose.yml),
# COMPOSE_PROJECT_NAME. POSTGRES_USER / POSTGRES_DB: default platform.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { printf 'restore: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$#" -eq 1 ] || die "usage: $0 DUMP_FILE"
dump=$1
[ -f "$dump" ] && [ -s "$dump" ] || die "$dump is not a non-empty file"
export COMPOSE_FILE=${COMPOSE_FILE:-$here/docker-compose.yml}
if [ -n "${COMPOSE:-}" ]; then
  read -r -a compose <<<"$COMPOSE"
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
else
  compose=(docker-compose)
fi
user=${POSTGRES_USER:-platform}
db=${POSTGRES_DB:-platform}

running() { "${compose[@]}" ps --services --filter status=running 2>/dev/null; }

log "checking $dump"
"${compose[@]}" exec -T postgres pg_restore --list <"$dump" >/dev/null ||
  die "$dump is not a pg_dump archive the postgres service can read (is it running?)"

was_running=$(running)
stop=()
for service in master validator backup; do
  grep -qx "$service" <<<"$was_running" && stop+=("$service")
done
if [ "${#stop[@]}" -gt 0 ]; then
  log "stopping ${stop[*]}"
  "${compose[@]}" stop "${stop[@]}" >/dev/null
fi

log "restoring into $db (one transaction)"
if ! "${compose[@]}" exec -T postgres pg_restore --clean --if-exists --no-owner \
  --single-transaction --exit-on-error -U "$user" -d "$db" <"$dump"; then
  log "pg_restore failed: the database is as it was before"
  [ "${#stop[@]}" -eq 0 ] || "${compose[@]}" start "${stop[@]}" >/dev/null
  exit 1
fi

start=(master backup)
grep -qx validator <<<"$was_running" && start+=(validator)
log "starting ${start[*]}"
"${compose[@]}" up -d "${start[@]}" >/dev/null 2>&1
log "restored $dump"
