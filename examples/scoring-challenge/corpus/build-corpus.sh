#!/usr/bin/env bash
# Rebuild the scoring corpus from pinned Debian packages (licence-clean, see SOURCES.md).
#   bash build-corpus.sh          write corpus.txt.gz and corpus.json here
#   bash build-corpus.sh --check  rebuild in a temp dir and compare with the committed sha256
# Needs apt-get (with `apt-get update` done once), dpkg-deb and python3. A pinned version that
# left the mirror makes it fail loudly; the committed corpus stays the reference.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# package=version: the exact inputs of corpus version 1.
packages=(
  dict-devil=1.0-13.1
  dict-jargon=4.4.7-3.1
  python3.11-doc=3.11.2-6+deb12u9
  sqlite3-doc=3.40.1-2+deb12u2
  libsqlite3-dev=3.40.1-2+deb12u2
  libpython3.11-stdlib=3.11.2-6+deb12u9
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/debs" "$work/x"
echo "build-corpus: downloading ${#packages[@]} packages" >&2
# apt-get download runs as the _apt user when it can: give it a directory it may write.
chmod 777 "$work/debs"
(cd "$work/debs" && apt-get download -q "${packages[@]}" >/dev/null)
for deb in "$work"/debs/*.deb; do
  name=$(dpkg-deb -f "$deb" Package)
  echo "build-corpus: $(basename "$deb") sha256 $(sha256sum "$deb" | cut -c1-16)…" >&2
  dpkg-deb -x "$deb" "$work/x/$name"
done

if [ "${1:-}" = --check ]; then
  python3 "$here/build_corpus.py" "$work/x" "$work/out" >/dev/null
  want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' "$here/corpus.json")
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sha256"])' "$work/out/corpus.json")
  if [ "$want" != "$got" ]; then
    echo "build-corpus: MISMATCH: committed $want, rebuilt $got" >&2
    exit 1
  fi
  echo "build-corpus: rebuilt corpus matches the committed sha256 $want" >&2
else
  python3 "$here/build_corpus.py" "$work/x" "$here"
fi
