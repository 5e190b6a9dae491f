"""The framed report line, the nonce, and the private report descriptor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest

import harness_report
from tests import support


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
                harness_report.take_nonce()
            os.environ[harness_report.NONCE_ENV] = "short"
            with self.assertRaisesRegex(harness_report.NonceError, "8-256 characters"):
                harness_report.take_nonce()
            os.environ[harness_report.NONCE_ENV] = "good-nonce_123"
            self.assertEqual(harness_report.take_nonce(), "good-nonce_123")
            self.assertNotIn(harness_report.NONCE_ENV, os.environ)
        finally:
            if saved is not None:
                os.environ[harness_report.NONCE_ENV] = saved

    def test_claimed_stdout_is_private_and_fd_1_goes_to_stderr(self) -> None:
        script = (
            "import os, sys; sys.path.insert(0, sys.argv[1]); import harness_report\n"
            "out = harness_report.claim_stdout()\n"
            "print('miner text')\n"
            "os.write(1, b'raw fd 1\\n')\n"
            "harness_report.emit(out, 'abcdefgh12', {'ok': True})\n"
            "assert not os.get_inheritable(out.fileno())\n"
        )
        done = subprocess.run([sys.executable, "-c", script, support.HARNESS], capture_output=True, text=True, timeout=60, check=True)
        self.assertEqual(done.stdout.strip(), 'HARNESS-REPORT abcdefgh12 {"ok":true}')
        self.assertIn("miner text", done.stderr)
        self.assertIn("raw fd 1", done.stderr)


if __name__ == "__main__":
    unittest.main()
