"""Unit tests of build_pool.py on small synthetic inputs (no network): python3 -m unittest."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import struct
import tempfile
import unittest
import zlib
from pathlib import Path

import build_pool as bp


def docs(sizes: dict[str, int], per_doc: int = 3) -> list[bp.Document]:
    """Synthetic documents: `per_doc` per source, lines of distinct text, about `size` bytes each."""
    out = []
    for source, size in sizes.items():
        for d in range(per_doc):
            lines = [f"{source} document {d} line {i} " + "x" * 40 for i in range(size // 60 // per_doc)]
            out.append((source, f"doc{d}.txt", "\n".join(lines) + "\n"))
    return out


class Normalise(unittest.TestCase):
    def test_line_ends_trailing_space_and_blank_runs(self) -> None:
        text = "\n\nA line   \r\nwith CRLF\t\r\rold mac\n\n\n\n\nafter four blanks\n\n\n"
        self.assertEqual(bp.normalise(text), "A line\nwith CRLF\n\nold mac\n\nafter four blanks\n")

    def test_idempotent(self) -> None:
        text = "x \r\n\r\n\r\ny\n"
        self.assertEqual(bp.normalise(bp.normalise(text)), bp.normalise(text))


class Chunks(unittest.TestCase):
    def test_cut_at_line_boundaries_within_the_size(self) -> None:
        text = "".join(f"line {i:04d}\n" for i in range(500))  # 10 bytes a line
        pieces = bp.chunks(text, 64)
        self.assertEqual("".join(pieces), text)
        self.assertTrue(all(len(p.encode()) <= 64 and p.endswith("\n") for p in pieces))
        self.assertEqual(len(pieces), 84)  # 6 lines a piece

    def test_a_longer_line_stays_whole(self) -> None:
        self.assertEqual(bp.chunks("a\n" + "b" * 100 + "\nc\n", 10), ["a\n", "b" * 100 + "\n", "c\n"])


class Assemble(unittest.TestCase):
    SIZES = {"alpha": 40_000, "beta": 30_000, "gamma": 20_000}

    def test_deterministic_whatever_the_input_order(self) -> None:
        forward = bp.assemble(docs(self.SIZES), cap=0.4, chunk_size=1024)
        backward = bp.assemble(list(reversed(docs(self.SIZES))), cap=0.4, chunk_size=1024)
        self.assertEqual(forward, backward)
        again = bp.assemble(docs(self.SIZES), cap=0.4, chunk_size=1024)
        self.assertEqual(hashlib.sha256(forward[0]).digest(), hashlib.sha256(again[0]).digest())

    def test_sources_interleave_in_any_range(self) -> None:
        data, _sizes, _raw = bp.assemble(docs(self.SIZES), cap=1.0, chunk_size=1024)
        text = data.decode()
        tenth = len(text) // 10
        for part in (text[:tenth], text[-tenth:]):
            for source in self.SIZES:
                self.assertIn(f"{source} document", part)
        # Chunk order is by hash, not by source: the first chunks do not all come from one source.
        firsts = [line.split()[0] for line in text.split("\n\n")[:12]]
        self.assertGreater(len(set(firsts)), 1)

    def test_the_pool_is_normalised_across_chunk_joins(self) -> None:
        text = "".join(f"para {i}\n\n" for i in range(2000))  # a cut always falls beside a blank line
        data, _s, _r = bp.assemble([("a", "d", text), ("b", "d", text), ("c", "d", text)], cap=1.0, chunk_size=100)
        self.assertEqual(bp.normalise(data.decode()), data.decode())

    def test_the_order_is_the_hash_of_each_chunks_origin(self) -> None:
        data, _s, _r = bp.assemble(docs({"alpha": 6000}, per_doc=1), cap=1.0, chunk_size=1024)
        pieces = bp.chunks(bp.normalise(docs({"alpha": 6000}, per_doc=1)[0][2]), 1024)
        order = sorted(range(len(pieces)), key=lambda i: bp.chunk_key("alpha", "doc0.txt", i))
        self.assertEqual(data.decode(), "\n".join(pieces[i].strip("\n") + "\n" for i in order))

    def test_every_source_is_capped(self) -> None:
        sizes = {"big": 300_000, "dense": 150_000, "a": 40_000, "b": 40_000, "c": 40_000}
        data, kept, uncapped = bp.assemble(docs(sizes), cap=0.3, chunk_size=2048)
        self.assertGreater(uncapped["big"] / sum(uncapped.values()), 0.5)  # it needed the cap
        for source, size in kept.items():
            self.assertLessEqual(size / len(data), 0.3, source)
        self.assertEqual(kept["a"], uncapped["a"])  # small sources keep everything
        self.assertLess(kept["big"], uncapped["big"])
        # What a capped source keeps comes from all its documents, not just the first.
        for d in range(3):
            self.assertIn(f"big document {d} ".encode(), data)

    def test_cap_limit(self) -> None:
        self.assertEqual(bp.cap_limit([10, 10, 10], 0.5), 10)  # nothing over half: no cap
        # L = 0.3 * (L + 400): the big source may keep 171 bytes, 30 % of 571.
        self.assertEqual(bp.cap_limit([1000, 100, 100, 100, 100], 0.3), 171)
        with self.assertRaises(ValueError):
            bp.cap_limit([1000, 100, 100], 0.3)  # three sources cannot each be under 30 %


class WritePool(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="pool-test-"))

    def tearDown(self) -> None:
        shutil.rmtree(self.dir)

    def test_the_manifest_pins_the_file_and_holds_out_the_last_tenth(self) -> None:
        data = bytes(range(256)) * 41  # 10,496 bytes
        meta = bp.write_pool(self.dir, data, {"sources": {"x": len(data)}})
        self.assertEqual(json.loads((self.dir / "corpus.json").read_text()), meta)
        self.assertEqual(meta["holdout"], {"offset": len(data) - 1049, "length": 1049})
        self.assertEqual(meta["bytes"], len(data))
        packed = (self.dir / bp.FILE).read_bytes()
        self.assertEqual(gzip.decompress(packed), data)
        self.assertEqual(hashlib.sha256(data).hexdigest(), meta["sha256"])
        # gzip with no name and mtime 0: the same bytes give the same file.
        self.assertEqual(packed[3] & 0x08, 0)  # no FNAME flag
        self.assertEqual(packed[4:8], b"\0\0\0\0")
        other = Path(tempfile.mkdtemp(prefix="pool-test-"))
        try:
            self.assertEqual(bp.write_pool(other, data, {})["file_sha256"], meta["file_sha256"])
        finally:
            shutil.rmtree(other)

    def test_intact_only_for_the_pinned_unchanged_pool(self) -> None:
        data = b"some pool text\n" * 100
        lock = {"packages": {"p": "1"}, "sha256": hashlib.sha256(data).hexdigest()}
        bp.write_pool(self.dir, data, {"lock_sha256": bp.lock_digest(lock)})
        self.assertIsNotNone(bp.intact(self.dir, lock, allow_drift=False))
        self.assertIsNone(bp.intact(self.dir, {**lock, "packages": {"p": "2"}}, allow_drift=True))
        with open(self.dir / bp.FILE, "ab") as handle:
            handle.write(b"\0")
        self.assertIsNone(bp.intact(self.dir, lock, allow_drift=False))

    def test_a_drifted_pool_is_kept_only_with_allow_drift(self) -> None:
        data = b"drifted text\n" * 100
        lock = {"packages": {"p": "1"}, "sha256": "0" * 64}
        bp.write_pool(self.dir, data, {"lock_sha256": bp.lock_digest(lock), "drift": {"pinned_sha256": "0" * 64}})
        self.assertIsNotNone(bp.intact(self.dir, lock, allow_drift=True))
        self.assertIsNone(bp.intact(self.dir, lock, allow_drift=False))


class Cleaners(unittest.TestCase):
    def test_gcide_markup_becomes_readable(self) -> None:
        raw = ('Abaca \\Ab"a*ca\\ ([a^]b"[.a]*k[.a]), n. [The native name.]\n'
               "   The Manila-hemp plant ({Musa textilis}); see {Di*chot\"o*my}. [R.]\n"
               "   [1913 Webster]\n   OE. b[ae]c, [=a]m.\n")
        self.assertEqual(bp.gcide_text(raw), "Abaca, n. [The native name.]\n"
                         "   The Manila-hemp plant (Musa textilis); see Dichotomy. [R.]\n\n   OE. bæc, am.\n")

    def test_wordnet_drops_synonym_lists(self) -> None:
        raw = "fit\n    adj 1: meeting standards; \"a {fit} subject\" [syn:\n           {fit}, {suitable}]\n"
        self.assertEqual(bp.wordnet_text(raw), "fit\n    adj 1: meeting standards; \"a fit subject\"\n")

    def test_html_keeps_the_body_and_skips_the_chrome(self) -> None:
        page = ('<html><head><title>T</title></head><body><div class="navheader">Prev Next</div>'
                '<div class="yui-g"><h1>Title<a class="headerlink">¶</a></h1><p>One &amp; two'
                '<br>three</p><pre>  code\n   kept</pre></div><div class="ft">footer</div></body></html>')
        text = bp.normalise(bp.html_text(page, keep=("yui-g",), skip=("navheader", "headerlink")))
        self.assertEqual(text, "Title\n\nOne & two\nthree\n\ncode\nkept\n")
        self.assertIn("Prev Next", bp.html_text(page))

    def test_sword_blocks_decode_in_order(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="sword-test-"))
        try:
            blocks = [b'<div sID="1" type="x-p"/>First <hi type="italic">para</hi>.<div eID="1" type="x-p"/>',
                      b'<div sID="2" type="x-p"/>Second &amp; last.<div eID="2" type="x-p"/>']
            packed, index = b"", b""
            for block in blocks:
                z = zlib.compress(block)
                index += struct.pack("<III", len(packed), len(z), len(block))
                packed += z
            (root / "ot.czs").write_bytes(index)
            (root / "ot.czz").write_bytes(packed)
            (root / "nt.czs").write_bytes(b"")
            (root / "nt.czz").write_bytes(b"")
            self.assertEqual(bp.sword_text(root), "First para.\n\nSecond & last.")
        finally:
            shutil.rmtree(root)

    def test_decode_falls_back_per_line(self) -> None:
        self.assertEqual(bp.decode("é\n".encode() + b"it\x92s\n"), "é\nit\u2019s\n")


@unittest.skipUnless(shutil.which("apt-cache") and bp._candidate("dict-gcide"), "needs apt lists with dict-gcide")
class Drift(unittest.TestCase):
    """Against the machine's apt lists (local, no download, no apt-get update)."""

    def test_a_pin_gone_from_the_mirror_fails_without_allow_drift(self) -> None:
        with self.assertRaises(SystemExit) as failure:
            bp.resolve({"dict-gcide": "0.0-gone"}, allow_drift=False, refresh=False)
        self.assertIn("dict-gcide=0.0-gone", str(failure.exception))
        self.assertIn("--allow-drift", str(failure.exception))

    def test_allow_drift_takes_the_current_version(self) -> None:
        versions = bp.resolve({"dict-gcide": "0.0-gone"}, allow_drift=True, refresh=False)
        self.assertEqual(versions, {"dict-gcide": bp._candidate("dict-gcide")})


if __name__ == "__main__":
    unittest.main()
