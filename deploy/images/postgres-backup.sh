#!/bin/sh
# Scheduled logical backups of the platform's database (the PostgreSQL image's
# /usr/local/bin/platform-backup, run by the deployment's `backup` service).
#
#   platform-backup loop    every BACKUP_INTERVAL_SECONDS (default 86400): a dump now, then again
#   platform-backup once    one dump now; prints its path
#   platform-backup check   exit 0 when the newest dump is younger than twice the interval
#                           (the service's healthcheck: a stopped schedule turns it unhealthy)
#
# A dump is `pg_dump --format=custom` of PGDATABASE, written under a temporary name and renamed
# when complete, so BACKUP_DIR (default /backups) never holds a partial platform-*.dump. The
# newest BACKUP_KEEP (default 14) are kept. Connection: PGHOST, PGPORT, PGUSER, PGDATABASE
# (defaults postgres, 5432, platform, platform) and the password in PGPASSWORD_FILE (a secret),
# given to libpq through a private pgpass file, never on a command line or in a variable.
set -eu
dir=${BACKUP_DIR:-/backups}
interval=${BACKUP_INTERVAL_SECONDS:-86400}
keep=${BACKUP_KEEP:-14}
export PGHOST="${PGHOST:-postgres}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-platform}" \
  PGDATABASE="${PGDATABASE:-platform}"

log() { printf 'platform-backup: %s\n' "$*" >&2; }

pgpass() {
  [ -n "${PGPASSWORD_FILE:-}" ] || return 0
  [ -r "$PGPASSWORD_FILE" ] || { log "cannot read PGPASSWORD_FILE ($PGPASSWORD_FILE)"; exit 66; }
  umask 077
  PGPASSFILE=$(mktemp)
  export PGPASSFILE
  # pgpass escapes ':' and '\' in each field.
  password=$(head -n 1 "$PGPASSWORD_FILE" | sed -e 's/\\/\\\\/g' -e 's/:/\\:/g')
  printf '*:*:*:*:%s\n' "$password" >"$PGPASSFILE"
  unset password
}

once() {
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  part="$dir/.platform-$stamp.dump.part"
  out="$dir/platform-$stamp.dump"
  if ! pg_dump --format=custom --file="$part"; then
    rm -f "$part"
    log "pg_dump of $PGDATABASE on $PGHOST failed"
    return 1
  fi
  mv "$part" "$out"
  log "dumped $PGDATABASE to $out ($(wc -c <"$out") bytes)"
  # Keep the newest $keep (names sort by time).
  ls -1 "$dir"/platform-*.dump 2>/dev/null | sort | head -n "-$keep" | while read -r old; do
    rm -f "$old" && log "removed $old"
  done
  echo "$out"
}

check() {
  minutes=$((interval * 2 / 60 + 1))
  [ -n "$(find "$dir" -maxdepth 1 -name 'platform-*.dump' -mmin "-$minutes" 2>/dev/null | head -n 1)" ]
}

mkdir -p "$dir"
case "${1:-loop}" in
  once) pgpass; once ;;
  check) check ;;
  loop)
    # PID 1 of its container: a signal without a handler would be ignored.
    trap 'exit 0' TERM INT
    pgpass
    log "a dump of $PGDATABASE every ${interval}s into $dir, keeping $keep"
    until pg_isready -q; do sleep 2; done
    while :; do
      once >/dev/null || log "will try again in ${interval}s"
      sleep "$interval" &
      wait $! || true
    done
    ;;
  *) log "usage: platform-backup [loop|once|check]"; exit 64 ;;
esac
