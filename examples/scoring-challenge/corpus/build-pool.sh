#!/usr/bin/env bash
# Build the scoring pool (~130 MB of public text from pinned Debian bookworm packages; POOL.md).
#   bash build-pool.sh                 write corpus/pool/ (a no-op when it already holds the pinned pool)
#   bash build-pool.sh --out DIR       write DIR instead
#   bash build-pool.sh --check         rebuild in a temp dir and compare with pool.lock.json's sha256
#   bash build-pool.sh --allow-drift   a pinned version left the mirror: build from the current one
#                                      (recorded in corpus.json) instead of failing
#   bash build-pool.sh --repin         pin the mirror's current versions in pool.lock.json
# Needs apt-get, dpkg-deb and python3 (standard library only). Progress goes to stderr.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec python3 "$here/build_pool.py" "$@"
