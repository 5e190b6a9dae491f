"""The example bundles (examples/scoring-challenge/bundles) on the real corpus, when mounted.

test.sh mounts the bundles at /bundles and the corpus at /corpus; elsewhere set
HARNESS_TEST_BUNDLES and HARNESS_TEST_CORPUS, or these tests skip.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import shutil
import unittest

from tests import support

BUNDLES = os.environ.get("HARNESS_TEST_BUNDLES", "/bundles")
CORPUS = os.environ.get("HARNESS_TEST_CORPUS", "/corpus")
HAVE = os.path.isdir(BUNDLES) and os.path.isfile(os.path.join(CORPUS, "corpus.json"))


def corpus_slices(stream_bytes: int, holdout_bytes: int) -> tuple[bytes, bytes]:
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as handle:
        meta = json.load(handle)
    with gzip.open(os.path.join(CORPUS, meta["file"])) as handle:
        data = handle.read()
    assert hashlib.sha256(data).hexdigest() == meta["sha256"]
    offset = meta["holdout"]["offset"]
    return data[: min(stream_bytes, offset)], data[offset : offset + holdout_bytes]


def shingles(source: str, size: int = 5) -> set[tuple[str, ...]]:
    """Token shingles with identifiers normalised, comments and layout dropped."""
    source = re.sub(r"#[^\n]*", "", source)
    source = re.sub(r'"""[\s\S]*?"""', '""', source)
    tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S", source)
    keywords = {"def", "class", "return", "for", "in", "if", "else", "import", "from", "as", "with", "not", "and", "or", "None", "True", "False", "self", "lambda", "yield", "while"}
    normal = [t if t in keywords or not (t[0].isalpha() or t[0] == "_") else "ID" for t in tokens]
    return {tuple(normal[i : i + size]) for i in range(len(normal) - size + 1)}


@unittest.skipUnless(HAVE, "example bundles and corpus not mounted")
class ExampleBundles(unittest.TestCase):
    def workspace(self, name: str, stream_bytes: int, holdout_bytes: int = 4096) -> str:
        tmp = support.temp_dir()
        self.addCleanup(tmp.cleanup)
        stream, holdout = corpus_slices(stream_bytes, holdout_bytes)
        support.write_workspace(
            tmp.name,
            {},
            stream=stream,
            holdout=holdout,
            sequence_length=128,
            batch_size=8,
            token_budget=stream_bytes,
        )
        shutil.rmtree(os.path.join(tmp.name, "bundle"))
        shutil.copytree(os.path.join(BUNDLES, name), os.path.join(tmp.name, "bundle"))
        return tmp.name

    def gate(self, name: str) -> dict[str, object]:
        result = support.run_command("gate", self.workspace(name, 1024))
        assert result.report is not None, result.stderr
        return result.report

    def run_bundle(self, name: str, stream_bytes: int) -> dict[str, object]:
        result = support.run_command("run", self.workspace(name, stream_bytes))
        assert result.report is not None, result.stderr[-3000:]
        return result.report

    def test_good_scores_below_8_bits(self) -> None:
        self.assertTrue(self.gate("good")["ok"])
        report = self.run_bundle("good", 16384)
        self.assertTrue(report["ok"], report)
        self.assertTrue(report["causality"]["ok"])
        self.assertGreater(report["first_batch_loss"], 0.5 * math.log(256))
        bpb = report["nll_nats"] / math.log(2) / report["covered_bytes"]
        self.assertLess(bpb, 7.0)

    def test_cheat_weights_trips_the_step_zero_check(self) -> None:
        self.assertTrue(self.gate("cheat-weights")["ok"])
        report = self.run_bundle("cheat-weights", 2048)
        self.assertTrue(report["ok"], report)
        self.assertLess(report["first_batch_loss"], 0.5 * math.log(256))

    def test_lookahead_fails_the_probe(self) -> None:
        self.assertTrue(self.gate("lookahead")["ok"])
        report = self.run_bundle("lookahead", 2048)
        self.assertFalse(report["causality"]["ok"])
        self.assertGreater(report["causality"]["max_delta"], 1e-4)

    def test_broken_fails_in_train(self) -> None:
        self.assertTrue(self.gate("broken")["ok"])
        report = self.run_bundle("broken", 8192)
        self.assertFalse(report["ok"])
        self.assertEqual(report["error"]["stage"], "train")
        self.assertIn("batch_size", report["error"]["message"])

    def test_malicious_is_refused_by_the_gate(self) -> None:
        report = self.gate("malicious")
        self.assertFalse(report["ok"])
        messages = {v["message"] for v in report["violations"]}  # type: ignore[union-attr]
        for expected in ("import of socket is not allowed", "import of os is not allowed", "call of open is not allowed"):
            self.assertIn(expected, messages)
        # run.py refuses it too, before importing it.
        run = self.run_bundle("malicious", 1024)
        self.assertEqual(run["error"]["stage"], "import")  # type: ignore[index]

    def test_duplicate_passes_the_gate_and_is_a_near_copy_of_good(self) -> None:
        self.assertTrue(self.gate("duplicate")["ok"])
        for name in ("architecture.py", "training.py"):
            with open(os.path.join(BUNDLES, "good", name), encoding="utf-8") as handle:
                a = shingles(handle.read())
            with open(os.path.join(BUNDLES, "duplicate", name), encoding="utf-8") as handle:
                b = shingles(handle.read())
            self.assertGreaterEqual(len(a & b) / len(a | b), 0.85, name)


if __name__ == "__main__":
    unittest.main()
