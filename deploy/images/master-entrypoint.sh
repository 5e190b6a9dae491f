#!/bin/sh
# The master image's entrypoint: runs `platform "$@"` (default `master serve`). The database's
# password needs no step here any more: the master reads DATABASE_PASSWORD_FILE (or the whole
# URL from DATABASE_URL_FILE) itself (docs/operations.md, "Secrets as files").
set -eu
exec /usr/local/bin/platform "$@"
