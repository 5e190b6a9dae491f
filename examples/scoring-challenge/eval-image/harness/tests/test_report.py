"""Nonce framing, and the nonce kept away from bundle code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest

import harness_report
from tests import support

PROBE_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import harness_report
nonce = harness_report.take_nonce()
with open("/proc/self/environ", "rb") as handle:
    environ = handle.read()
print(json.dumps({
    "nonce": nonce,
    "in_os_environ": any("HARNESS_NONCE" in k for k in os.environ),
    "in_proc_environ": nonce.encode() in environ,
    "argv": sys.argv[1:],
}))
"""


class Framing(unittest.TestCase):
    def test_frame_is_one_compact_line(self) -> None:
        line = harness_report.frame("abcdefgh12", {"ok": True, "x": [1.5, float("nan")], "s": "a b\nc"})
        self.assertEqual(line.count("\n"), 0)
        prefix, nonce, body = line.split(" ", 2)
        self.assertEqual((prefix, nonce), ("HARNESS-REPORT", "abcdefgh12"))
        self.assertEqual(json.loads(body), {"ok": True, "x": [1.5, None], "s": "a b\nc"})
        self.assertNotIn(": ", body)

    def test_nonce_is_required_and_checked(self) -> None:
        saved = os.environ.pop(harness_report.NONCE_ENV, None)
        try:
            with self.assertRaisesRegex(harness_report.NonceError, "not set"):
                harness_report.take_nonce(reexec=False)
            os.environ[harness_report.NONCE_ENV] = "short"
            with self.assertRaisesRegex(harness_report.NonceError, "8-256 characters"):
                harness_report.take_nonce(reexec=False)
            os.environ[harness_report.NONCE_ENV] = "good-nonce_123"
            self.assertEqual(harness_report.take_nonce(reexec=False), "good-nonce_123")
            self.assertNotIn(harness_report.NONCE_ENV, os.environ)
        finally:
            if saved is not None:
                os.environ[harness_report.NONCE_ENV] = saved

    def test_reexec_scrubs_the_nonce_from_proc_environ(self) -> None:
        env = dict(os.environ, HARNESS_NONCE="secret-nonce-4242")
        out = subprocess.run(
            [sys.executable, "-c", PROBE_SCRIPT, support.HARNESS, "extra-arg"],
            env=env, capture_output=True, text=True, check=True, timeout=60,
        )
        seen = json.loads(out.stdout.strip().splitlines()[-1])
        self.assertEqual(seen["nonce"], "secret-nonce-4242")
        self.assertFalse(seen["in_os_environ"])
        self.assertFalse(seen["in_proc_environ"])
        self.assertEqual(seen["argv"], [support.HARNESS, "extra-arg"])


if __name__ == "__main__":
    unittest.main()
