"""Build the scoring POOL: ~100+ MB of public English text from pinned Debian bookworm packages.

Usage (build-pool.sh is the usual entry point):
  python3 build_pool.py [--out DIR] [--check] [--allow-drift] [--repin]

Each epoch's scored bytes are windows drawn with a secret seed from this pool, and held-out rows
from its held-out tail: far more text than a bundle (a few hundred KiB) can carry. The output is
a corpus directory in exactly the format src/corpus.ts's loadCorpus reads (corpus.json + a gzip
file with no name and mtime 0); the extra fields (packages, file_sha256, lock_sha256, drift,
sources_uncapped) are optional and ignored by the loader.

The inputs are pinned in pool.lock.json (package versions and the sha256 the build must give).
Python 3 standard library only; needs apt-get and dpkg-deb for the download step.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html.parser
import json
import re
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

VERSION = 2  # corpus version 1 is the 5 MB corpus in this directory; the pool is its successor
FILE = "pool.txt.gz"
CHUNK = 16 * 1024
HOLDOUT_FRACTION = 10  # the last tenth
CAP = 0.30  # no source over 30 % of the pool: a small dense source is the easiest to memorise

HERE = Path(__file__).resolve().parent
LOCK = HERE / "pool.lock.json"
DEFAULT_OUT = HERE / "pool"

Document = tuple[str, str, str]  # (source, name, text)


def log(message: str) -> None:
    print(f"build-pool: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- normalising and assembling


# normalise and chunks repeat build_corpus.py's on purpose: each pinned artefact keeps its own
# builder, so a change made for one can never move the other's sha256.


def normalise(text: str) -> str:
    """As build_corpus.py: \\r\\n -> \\n, no trailing spaces, at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def chunks(text: str, size: int = CHUNK) -> list[str]:
    """Cut text at line boundaries into pieces of at most `size` bytes (a longer line stays whole)."""
    out: list[str] = []
    current: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        length = len(line.encode("utf-8"))
        if used + length > size and current:
            out.append("".join(current))
            current, used = [], 0
        current.append(line)
        used += length
    if current:
        out.append("".join(current))
    return out


def chunk_key(source: str, name: str, index: int) -> str:
    return hashlib.sha256(f"{source}\0{name}\0{index}".encode()).hexdigest()


def cap_limit(sizes: Iterable[int], cap: float = CAP) -> int:
    """The largest L with L <= cap * sum(min(s, L)): no capped source exceeds `cap` of the total."""
    sizes = list(sizes)
    if len(sizes) * cap < 1:
        raise ValueError(f"{len(sizes)} sources cannot each be at most {cap:.0%} of the pool")
    limit = max(sizes, default=0)  # the largest source: a limit at or above it caps nothing
    while True:
        allowed = int(cap * sum(min(s, limit) for s in sizes))
        if allowed >= limit:
            return limit
        limit = allowed


def assemble(
    documents: Iterable[Document], cap: float = CAP, chunk_size: int = CHUNK
) -> tuple[bytes, dict[str, int], dict[str, int]]:
    """Normalise, chunk, cap each source, and order all chunks by a hash of their origin.

    Returns the pool's bytes, the bytes each source keeps and the bytes it had before the cap.
    The pool is itself normalised: at most one blank line anywhere, the one between chunks.
    A capped source keeps its chunks in hash order up to the limit, so what it drops is spread
    over all its documents. Chunks are joined with one blank line between them.
    """
    by_source: dict[str, list[tuple[str, bytes]]] = {}
    for source, name, text in documents:
        for index, piece in enumerate(chunks(normalise(text), chunk_size)):
            # A cut next to a blank line would leave two blank lines where chunks are joined.
            piece = piece.strip("\n")
            if piece:
                by_source.setdefault(source, []).append((chunk_key(source, name, index), f"{piece}\n".encode()))
    uncapped = {source: sum(len(p) for _k, p in pieces) for source, pieces in by_source.items()}
    limit = cap_limit(uncapped.values(), cap)
    kept: list[tuple[str, bytes]] = []
    sizes: dict[str, int] = {}
    for source in sorted(by_source):
        used = 0
        for key, piece in sorted(by_source[source]):
            if used + len(piece) > limit:
                continue
            kept.append((key, piece))
            used += len(piece)
        sizes[source] = used
    kept.sort()
    return b"\n".join(piece for _key, piece in kept), sizes, uncapped


def write_pool(out: Path, data: bytes, extra: dict[str, object]) -> dict[str, object]:
    """Write `data` as FILE (gzip -9, no name, mtime 0) and corpus.json; return the manifest.

    The manifest is written last and through a rename, so a reader never sees a manifest that
    pins a file not yet written.
    """
    holdout_length = len(data) // HOLDOUT_FRACTION
    out.mkdir(parents=True, exist_ok=True)
    partial = out / f".{FILE}.partial"
    with open(partial, "wb") as handle:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=handle, mtime=0) as gz:
            gz.write(data)
    partial.replace(out / FILE)
    meta: dict[str, object] = {
        "version": VERSION,
        "file": FILE,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "holdout": {"offset": len(data) - holdout_length, "length": holdout_length},
        "file_sha256": file_sha256(out / FILE),
        **extra,
    }
    manifest = out / ".corpus.json.partial"
    manifest.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    manifest.replace(out / "corpus.json")
    return meta


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------- reading the sources


def decode(raw: bytes) -> str:
    """UTF-8; a line that is not (a stray cp1252 quote in GCIDE, an old POD file) as cp1252."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        lines = []
        for line in raw.split(b"\n"):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                lines.append(line.decode("cp1252", errors="replace"))
        return "\n".join(lines)


def read_text(path: Path) -> str:
    return decode(path.read_bytes())


class _Text(html.parser.HTMLParser):
    """Visible text of an HTML page, blocks on their own lines.

    `keep`: if given, only text inside an element whose class or id is in it (a page's body);
    `skip`: elements whose class or id is in it are dropped (navigation, footers, anchors).
    """

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table",
              "blockquote", "dt", "dd", "section", "title"}
    VOID = {"br", "img", "meta", "link", "input", "hr", "col", "area", "base", "wbr", "source"}

    def __init__(self, keep: frozenset[str], skip: frozenset[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.keep, self.skip = keep, skip
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skips, keeps)
        self.skipping = self.keeping = self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n")
        if tag in self.VOID:
            return
        names = {v for k, value in attrs if k in ("class", "id") and value for v in value.split()}
        skips = tag in ("script", "style", "head") or bool(names & self.skip)
        keeps = bool(names & self.keep)
        self.stack.append((tag, skips, keeps))
        self.skipping += skips
        self.keeping += keeps
        self.pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n")
        if not any(entry[0] == tag for entry in self.stack):
            return  # a stray end tag
        while self.stack:
            name, skips, keeps = self.stack.pop()
            self.skipping -= skips
            self.keeping -= keeps
            self.pre -= name == "pre"
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.skipping or (self.keep and not self.keeping):
            return
        self.parts.append(data if self.pre else re.sub(r"[ \t\r\n]+", " ", data))


def html_text(raw: str, keep: Iterable[str] = (), skip: Iterable[str] = ()) -> str:
    parser = _Text(frozenset(keep), frozenset(skip))
    parser.feed(raw)
    parser.close()
    return "\n".join(line.strip() for line in "".join(parser.parts).split("\n"))


def dictd_text(path: Path) -> str:
    """A dictd database (.dict.dz is gzip-compatible) without its 00-database-* header lines."""
    raw = decode(gzip.decompress(path.read_bytes()))
    return "\n".join(line for line in raw.split("\n") if not line.startswith("00-database"))


_GCIDE_NAMED = {"ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "imac": "i", "aum": "a", "eth": "ð",
                "thorn": "þ", "root": "√", "deg": "°", "sect": "§", "ng": "ng", "th": "th",
                "asl": "a", "add": "a", "udd": "u", "frac12": "½", "frac14": "¼", "frac34": "¾",
                "pound": "£", "times": "×", "divide": "÷", "middot": "·", "prime": "′"}


def gcide_text(raw: str) -> str:
    """GCIDE's dictd text made readable: no syllable/pronunciation markup, source tags, braces."""
    # `Abaca \Ab"a*ca\ ([a^]b"[.a]*k[.a]), n.` -> `Abaca, n.`
    raw = re.sub(r"[ \t]*\\[^\\\n]{1,80}\\(?:[ \t]*\([^()]{0,120}\))?", "", raw)
    # A line that is only a source tag: [1913 Webster], [PJC], [WordNet 1.5] ...
    raw = re.sub(r"(?m)^[ \t]*\[[^\]\n]{1,60}\][ \t]*$", "", raw)
    # {Di*chot"o*mous*ly} (cross references, italics) -> Dichotomously
    raw = re.sub(r"\{([^{}]*)\}", lambda m: re.sub(r'[*"`]', "", m.group(1)), raw)
    raw = re.sub(r"\[([='.`\"~^,-]{1,2})([a-zA-Z]{1,2})\]", r"\2", raw)  # [=a] [.a] ['e] -> a e
    raw = re.sub(r"\[([a-zA-Z]{1,2})[\^~]\]", r"\1", raw)  # [a^] -> a
    return re.sub(r"\[([a-zA-Z0-9]{2,6})\]", lambda m: _GCIDE_NAMED.get(m.group(1), m.group(0)), raw)


def wordnet_text(raw: str) -> str:
    """WordNet's glosses and examples, without the synonym/antonym lists and the braces."""
    raw = re.sub(r"[ \t]*\[(?:syn|ant):[^\]]*\]", "", raw)
    return raw.replace("{", "").replace("}", "")


def sword_text(module: Path) -> str:
    """A SWORD zText/zCom module: each `*.?zs` index holds (offset, size, unpacked size) records of
    zlib blocks in the matching `*.?zz`; OSIS markup dropped, paragraphs on lines of their own."""
    parts: list[str] = []
    for index in sorted(module.glob("*.?zs")):
        blocks = index.with_suffix(index.suffix[:-1] + "z").read_bytes()
        records = index.read_bytes()
        for at in range(0, len(records) - 11, 12):
            offset, size, _unpacked = struct.unpack("<III", records[at:at + 12])
            parts.append(zlib.decompress(blocks[offset:offset + size]).decode("utf-8"))
    text = "".join(parts)
    text = re.sub(r'<div [^>]*type="x-p"[^>]*/>|<lb[^>]*/>|<title[^>]*>', "\n", text)
    text = re.sub(r"<[^>]*>", "", text)
    text = html.unescape(text) if "&" in text else text
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n") if p.strip())


def files(root: Path, pattern: str, exclude: Callable[[Path], bool] = lambda _p: False) -> list[Path]:
    return [p for p in sorted(root.rglob(pattern)) if p.is_file() and not exclude(p.relative_to(root))]


# source -> (licence, reader of the extracted package's root)
Reader = Callable[[Path], Iterator[tuple[str, str]]]


def _gcide(root: Path) -> Iterator[tuple[str, str]]:
    yield "gcide.dict", gcide_text(dictd_text(root / "usr/share/dictd/gcide.dict.dz"))


def _wordnet(root: Path) -> Iterator[tuple[str, str]]:
    yield "wn.dict", wordnet_text(dictd_text(root / "usr/share/dictd/wn.dict.dz"))


def _tree(base: str, pattern: str, exclude: Callable[[Path], bool] = lambda _p: False) -> Reader:
    def read(root: Path) -> Iterator[tuple[str, str]]:
        top = root / base
        for path in files(top, pattern, exclude):
            yield str(path.relative_to(top)), read_text(path)
    return read


def _html_tree(base: str, keep: tuple[str, ...], skip: tuple[str, ...],
               exclude: Callable[[Path], bool] = lambda _p: False) -> Reader:
    def read(root: Path) -> Iterator[tuple[str, str]]:
        top = root / base
        for path in files(top, "*.html", exclude):
            yield str(path.relative_to(top)), html_text(read_text(path), keep, skip)
    return read


def _sword(module: str) -> Reader:
    def read(root: Path) -> Iterator[tuple[str, str]]:
        yield module, sword_text(root / "usr/share/sword/modules" / module)
    return read


_DOCBOOK_CHROME = ("navheader", "navfooter")
_DJANGO_SKIP_DIRS = {"_modules", "_static", "_images", "_sources"}

SOURCES: dict[str, tuple[str, Reader]] = {
    "dict-gcide": ("GPL-2+ (GCIDE; Webster's Revised Unabridged 1913 is public domain)", _gcide),
    "dict-wn": ("WordNet 3.0 licence (permissive, BSD-like)", _wordnet),
    "linux-doc-6.1": ("GPL-2", _tree("usr/share/doc/linux-doc-6.1/html/_sources", "*.rst.txt",
                                     lambda p: p.parts[0] == "translations")),
    "python3.11-doc": ("PSF License Version 2", _tree("usr/share/doc/python3.11/html/_sources", "*.txt")),
    "perl-doc": ("GPL-1+ or Artistic", _tree("usr/share/perl/5.36.0/pod", "*.pod")),
    "vim-runtime": ("Vim licence; the user manual usr_*.txt OPL-1+ (no options exercised)",
                    _tree("usr/share/vim/vim90/doc", "*.txt")),
    "postgresql-doc-15": ("PostgreSQL licence (permissive)",
                          _html_tree("usr/share/doc/postgresql-doc-15/html", (), _DOCBOOK_CHROME)),
    "python-django-doc": ("BSD-3-Clause", _html_tree("usr/share/doc/python-django-doc/html", ("yui-g",),
                                                     ("headerlink",),
                                                     lambda p: p.parts[0] in _DJANGO_SKIP_DIRS
                                                     or len(p.parts) == 1)),
    "git-doc": ("GPL-2", _tree("usr/share/doc/git-doc", "*.txt")),
    "debian-reference-en": ("GPL-2+", _html_tree("usr/share/debian-reference", (), _DOCBOOK_CHROME)),
    "sword-comm-tdavid": ("public domain (Spurgeon, The Treasury of David, 1885)",
                          _sword("comments/zcom/tdavid")),
}


def documents(root: Path) -> Iterator[Document]:
    """Every document of every source, `root/<package>` being the extracted package."""
    for source, (_licence, read) in SOURCES.items():
        count = 0
        for name, text in read(root / source):
            count += 1
            yield source, name, text
        log(f"read {source}: {count} documents")


# ---------------------------------------------------------------- downloading


def load_lock(path: Path = LOCK) -> dict[str, object]:
    return json.loads(path.read_text(encoding="utf-8"))


def lock_digest(lock: dict[str, object]) -> str:
    """What a pool was built against: the pinned packages and sha256 (not the informative sizes)."""
    pinned = {"packages": lock["packages"], "sha256": lock.get("sha256")}
    return hashlib.sha256(json.dumps(pinned, sort_keys=True).encode()).hexdigest()


def _available(package: str, version: str) -> bool:
    result = subprocess.run(["apt-cache", "show", "--no-all-versions", f"{package}={version}"],
                            capture_output=True, text=True)
    return result.returncode == 0 and f"Version: {version}" in result.stdout


def _candidate(package: str) -> str | None:
    result = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True)
    found = re.search(r"Candidate: (\S+)", result.stdout)
    return found.group(1) if found and found.group(1) != "(none)" else None


def resolve(pins: dict[str, str], allow_drift: bool, refresh: bool = True) -> dict[str, str]:
    """The versions to download: the pins, or (allow_drift) the mirror's current one for a pin
    it no longer has. Runs `apt-get update` once (unless not `refresh`) before deciding that a pin
    is gone: stale lists are the common reason for a miss."""
    missing = [p for p, v in pins.items() if not _available(p, v)]
    if missing and refresh:
        log(f"not in the apt lists: {', '.join(f'{p}={pins[p]}' for p in missing)}; running apt-get update")
        subprocess.run(["apt-get", "update", "-qq"], check=False)
        missing = [p for p in missing if not _available(p, pins[p])]
    if missing and not allow_drift:
        gone = ", ".join(f"{p}={pins[p]} (mirror now has {_candidate(p) or 'nothing'})" for p in missing)
        raise SystemExit(
            f"build-pool: pinned versions are gone from the mirror: {gone}.\n"
            "The pool would differ from the pinned one. Either run with --allow-drift (builds from\n"
            "the current versions and records them in corpus.json), or re-pin: build-pool.sh --repin,\n"
            "review and commit pool.lock.json (see POOL.md, 'When a pinned version leaves the mirror')."
        )
    versions = dict(pins)
    for package in missing:
        current = _candidate(package)
        if current is None:
            raise SystemExit(f"build-pool: {package} is not in the mirror at all; it cannot drift to anything")
        log(f"DRIFT: {package} {pins[package]} is gone; using the current {current}")
        versions[package] = current
    return versions


def download(versions: dict[str, str], work: Path) -> Path:
    """apt-get download (verified against the signed archive) and dpkg-deb -x each package."""
    debs, root = work / "debs", work / "x"
    debs.mkdir(parents=True)
    root.mkdir()
    work.chmod(0o755)
    debs.chmod(0o777)  # apt-get download runs as the _apt user when it can
    log(f"downloading {len(versions)} packages")
    subprocess.run(["apt-get", "download", "-q", *(f"{p}={v}" for p, v in versions.items())],
                   cwd=debs, check=True, stdout=subprocess.DEVNULL)
    for deb in sorted(debs.glob("*.deb")):
        name = subprocess.run(["dpkg-deb", "-f", str(deb), "Package"], capture_output=True,
                              text=True, check=True).stdout.strip()
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root / name)], check=True)
    log(f"extracted {len(versions)} packages")
    return root


# ---------------------------------------------------------------- the command


def build(out: Path, lock: dict[str, object], allow_drift: bool) -> dict[str, object]:
    pins: dict[str, str] = dict(lock["packages"])  # type: ignore[arg-type]
    versions = resolve(pins, allow_drift)
    drift = versions != pins
    with tempfile.TemporaryDirectory(prefix="build-pool-") as work:
        root = download(versions, Path(work))
        data, sizes, uncapped = assemble(documents(root))
    log(f"assembled {len(data):,} bytes; writing {out / FILE}")
    extra: dict[str, object] = {
        "sources": sizes,
        "sources_uncapped": uncapped,
        "packages": versions,
        "licences": {source: SOURCES[source][0] for source in sorted(SOURCES)},
        "lock_sha256": lock_digest(lock),
    }
    if drift:
        extra["drift"] = {"pinned_sha256": lock.get("sha256"), "pinned_packages": pins}
    return write_pool(out, data, extra)


def intact(out: Path, lock: dict[str, object], allow_drift: bool) -> dict[str, object] | None:
    """The no-op test: the manifest of the pool in `out` if it was built from this lock (drifted
    only if `allow_drift`) and its file is unchanged, else None."""
    try:
        meta = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("lock_sha256") != lock_digest(lock) or meta.get("file") != FILE:
        return None
    if meta.get("drift") and not allow_drift:
        return None
    if not meta.get("drift") and meta.get("sha256") != lock.get("sha256"):
        return None
    if not (out / FILE).is_file() or file_sha256(out / FILE) != meta.get("file_sha256"):
        return None
    return meta


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Build the scoring pool from pinned Debian packages.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: corpus/pool)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild in a temp dir and compare the sha256 with pool.lock.json's")
    parser.add_argument("--allow-drift", action="store_true",
                        help="a pinned version gone from the mirror: build from the current one instead of failing")
    parser.add_argument("--repin", action="store_true",
                        help="pin the mirror's current versions: build, then rewrite pool.lock.json")
    args = parser.parse_args(argv)
    lock = load_lock()
    started = time.monotonic()
    if args.check:
        with tempfile.TemporaryDirectory(prefix="pool-check-") as tmp:
            meta = build(Path(tmp), lock, allow_drift=False)
        if meta["sha256"] != lock.get("sha256"):
            log(f"MISMATCH: pool.lock.json pins {lock.get('sha256')}, the rebuild gave {meta['sha256']}")
            return 1
        log(f"the rebuilt pool matches pool.lock.json's sha256 {meta['sha256']} ({time.monotonic() - started:.1f} s)")
        return 0
    if args.repin:
        pins = {p: _candidate(p) or v for p, v in dict(lock["packages"]).items()}  # type: ignore[arg-type]
        lock = {**lock, "packages": pins, "sha256": None}
        meta = build(args.out, lock, allow_drift=False)
        lock.update(sha256=meta["sha256"], bytes=meta["bytes"], sources=meta["sources"])
        LOCK.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
        # The pool now answers the new lock exactly.
        meta["lock_sha256"] = lock_digest(lock)
        (args.out / "corpus.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        log(f"re-pinned pool.lock.json: sha256 {meta['sha256']}; review and commit it")
        return 0
    existing = intact(args.out, lock, args.allow_drift)
    if existing:
        what = "a DRIFTED pool built against pool.lock.json" if existing.get("drift") else "the pinned pool"
        log(f"{args.out} already holds {what}; nothing to do ({time.monotonic() - started:.2f} s)")
        return 0
    meta = build(args.out, lock, args.allow_drift)
    if meta.get("drift"):
        same = "the same text as" if meta["sha256"] == lock.get("sha256") else "NOT"
        log(f"built a DRIFTED pool from other versions than the pinned ones: sha256 {meta['sha256']}, "
            f"{same} the pinned {lock.get('sha256')}; see POOL.md")
    elif meta["sha256"] != lock.get("sha256"):
        # Never leave a pool under the pinned name that is not the pinned pool: no manifest, no load.
        (args.out / "corpus.json").unlink()
        log(f"MISMATCH: the pinned versions gave sha256 {meta['sha256']}, pool.lock.json pins "
            f"{lock.get('sha256')}; corpus.json removed (see POOL.md)")
        return 1
    log(f"done: {meta['bytes']:,} bytes in {args.out} ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
