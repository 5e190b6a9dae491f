"""Rebuild bundles/<name>.zip from bundles/<name>/, byte for byte the same every time.

Entries sorted, a fixed timestamp (1980-01-01), fixed permissions (0644), deflate level 9, no
directory entries and no extra fields: the ZIP's sha256 (the service's code_hash) is stable.
  python3 make-zips.py          rewrite the zips
  python3 make-zips.py --check  exit 1 if a committed zip differs from a rebuild
"""

from __future__ import annotations

import io
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLES = ("good", "cheat-weights", "lookahead", "broken", "malicious", "duplicate")
EPOCH = (1980, 1, 1, 0, 0, 0)


def build(name: str) -> bytes:
    root = os.path.join(HERE, name)
    paths = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for filename in filenames:
            if filename.endswith((".pyc", ".pyo")):
                continue
            paths.append(os.path.relpath(os.path.join(directory, filename), root).replace(os.sep, "/"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(paths):
            info = zipfile.ZipInfo(path, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, so the permission bits below mean what they say
            info.external_attr = 0o100644 << 16
            with open(os.path.join(root, path), "rb") as handle:
                archive.writestr(info, handle.read(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return buffer.getvalue()


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for name in BUNDLES:
        data = build(name)
        target = os.path.join(HERE, f"{name}.zip")
        if check:
            with open(target, "rb") as handle:
                if handle.read() != data:
                    stale.append(name)
        else:
            with open(target, "wb") as handle:
                handle.write(data)
            print(f"{name}.zip {len(data)} bytes")
    if stale:
        print("stale zips (run python3 make-zips.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
