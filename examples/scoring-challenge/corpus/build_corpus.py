"""Assemble the scoring corpus from extracted Debian packages, deterministically.

Usage: python3 build_corpus.py <dir with one extracted package per subdir> <out dir>
(build-corpus.sh downloads the pinned .debs and extracts them first). Writes corpus.txt.gz
(gzip with no name and mtime 0, so the same input gives the same bytes) and corpus.json.

Every source is cut into chunks of at most CHUNK bytes at line boundaries and the chunks are
ordered by a hash of their origin: prose and code interleave, so any prefix of the stream (what
a run scores) and the held-out tail have the same mix.
"""

from __future__ import annotations

import gzip
import hashlib
import html.parser
import json
import re
import sys
from pathlib import Path

VERSION = 1
CHUNK = 16 * 1024
HOLDOUT_FRACTION = 10  # the last tenth

PYDOC = "python3.11-doc/usr/share/doc/python3.11/html/_sources"
SQLITE_DOC = "sqlite3-doc/usr/share/doc/sqlite3"
STDLIB = "libpython3.11-stdlib/usr/lib/python3.11"

SQLITE_PAGES = [
    "atomiccommit.html",
    "datatype3.html",
    "fileformat2.html",
    "foreignkeys.html",
    "howtocorrupt.html",
    "isolation.html",
    "lang_altertable.html",
    "lang_createindex.html",
    "lang_createtable.html",
    "lang_expr.html",
    "lang_select.html",
    "lang_transaction.html",
    "lang_upsert.html",
    "lang_with.html",
    "lockingv3.html",
    "optoverview.html",
    "queryplanner.html",
    "testing.html",
    "wal.html",
    "whentouse.html",
    "windowfunctions.html",
]
STDLIB_MODULES = [
    "cmd.py",
    "dataclasses.py",
    "difflib.py",
    "fractions.py",
    "gettext.py",
    "graphlib.py",
    "gzip.py",
    "numbers.py",
    "pprint.py",
    "queue.py",
    "sched.py",
    "shlex.py",
    "statistics.py",
    "tarfile.py",
]


class _Text(html.parser.HTMLParser):
    """Visible text of an HTML page: script/style dropped, blocks on their own lines."""

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "pre", "table", "blockquote", "dt", "dd"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        if tag == "pre":
            self.pre += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        self.parts.append(data if self.pre else re.sub(r"[ \t\r\n]+", " ", data))


def html_text(raw: str) -> str:
    parser = _Text()
    parser.feed(raw)
    parser.close()
    lines = [line.strip() for line in "".join(parser.parts).split("\n")]
    return "\n".join(lines)


def normalise(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def dict_text(path: Path) -> str:
    """A dictd database (.dict.dz is gzip-compatible) without its 00-database-* headers."""
    raw = gzip.decompress(path.read_bytes()).decode("utf-8")
    return "\n".join(line for line in raw.split("\n") if not line.startswith("00-database"))


def documents(root: Path) -> list[tuple[str, str, str]]:
    """(source, name, text) for every document, in a fixed order."""
    docs: list[tuple[str, str, str]] = []
    docs.append(("dict-devil", "devil.dict", dict_text(root / "dict-devil/usr/share/dictd/devil.dict.dz")))
    docs.append(("dict-jargon", "jargon.dict", dict_text(root / "dict-jargon/usr/share/dictd/jargon.dict.dz")))
    for part in ("tutorial", "howto", "faq", "reference"):
        for path in sorted((root / PYDOC / part).rglob("*.rst.txt")):
            docs.append(("python3.11-doc", str(path.relative_to(root / PYDOC)), path.read_text("utf-8")))
    for page in SQLITE_PAGES:
        docs.append(("sqlite3-doc", page, html_text((root / SQLITE_DOC / page).read_text("utf-8"))))
    docs.append(("libsqlite3-dev", "sqlite3.h", (root / "libsqlite3-dev/usr/include/sqlite3.h").read_text("utf-8")))
    for module in STDLIB_MODULES:
        docs.append(("libpython3.11-stdlib", module, (root / STDLIB / module).read_text("utf-8")))
    return docs


def chunks(text: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        if size + len(line.encode("utf-8")) > CHUNK and current:
            out.append("".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line.encode("utf-8"))
    if current:
        out.append("".join(current))
    return out


def build(root: Path, out: Path) -> dict[str, object]:
    pieces: list[tuple[str, str]] = []
    sizes: dict[str, int] = {}
    for source, name, text in documents(root):
        text = normalise(text)
        sizes[source] = sizes.get(source, 0) + len(text.encode("utf-8"))
        for index, piece in enumerate(chunks(text)):
            key = hashlib.sha256(f"{source}\0{name}\0{index}".encode()).hexdigest()
            pieces.append((key, piece))
    pieces.sort()
    corpus = "\n".join(piece for _key, piece in pieces).encode("utf-8")
    holdout_length = len(corpus) // HOLDOUT_FRACTION
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.txt.gz", "wb") as handle:
        # filename="" and mtime=0: no timestamp or name in the header, reproducible bytes.
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=handle, mtime=0) as gz:
            gz.write(corpus)
    meta = {
        "version": VERSION,
        "file": "corpus.txt.gz",
        "sha256": hashlib.sha256(corpus).hexdigest(),
        "bytes": len(corpus),
        "holdout": {"offset": len(corpus) - holdout_length, "length": holdout_length},
        "sources": {k: sizes[k] for k in sorted(sizes)},
    }
    (out / "corpus.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: build_corpus.py <extracted packages dir> <out dir>")
    result = build(Path(sys.argv[1]), Path(sys.argv[2]))
    json.dump(result, sys.stdout, indent=2)
    print(file=sys.stdout)

