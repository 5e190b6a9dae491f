"""The corpus key the scorer unseals the slices with: exactly 32 bytes, or no run."""

from __future__ import annotations

import unittest

import harness_corpus
from harness_corpus import CorpusKeyError


class Key(unittest.TestCase):
    def test_exactly_32_bytes_of_hex(self) -> None:
        key = bytes(range(32))
        self.assertEqual(harness_corpus.parse_key(key.hex()), key)
        self.assertEqual(harness_corpus.parse_key(key.hex().upper()), key)

    def test_short_long_and_malformed_keys_are_refused(self) -> None:
        # A short key is a keystream anyone can search: one byte is 256 tries at the sealed stream.
        cases = {
            "unset": None,
            "empty": "",
            "one byte": "ab",
            "16 bytes": "00" * 16,
            "31 bytes": "00" * 31,
            "33 bytes": "00" * 33,
            "not hex": "zz" * 32,
            "odd length": "0" * 63,
        }
        for name, text in cases.items():
            with self.subTest(name):
                with self.assertRaisesRegex(CorpusKeyError, harness_corpus.KEY_ENV):
                    harness_corpus.parse_key(text)


if __name__ == "__main__":
    unittest.main()
