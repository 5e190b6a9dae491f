"""The corpus slices as the service ships them: sealed, so only the scorer can read them.

The service places `corpus/stream.bin` and `corpus/holdout.bin` XORed with a SHAKE-256 keystream
of a fresh 32-byte key per run, and hands the key to the scorer alone (HARNESS_CORPUS_KEY, which
the scorer removes from its environment before the bundle's process exists; that process gets a
clean environment and cannot read the scorer's /proc). The files the bundle can see are
therefore noise; the plaintext exists only in the scorer's memory, and its sha256 is checked
against run.json. The same construction is `sealCorpusSlice` in src/harness-task.ts.
"""

from __future__ import annotations

import hashlib

KEY_ENV = "HARNESS_CORPUS_KEY"
_DOMAIN = b"platform-scoring-corpus-v1\0"


class CorpusKeyError(Exception):
    """The key is missing or malformed."""


def parse_key(text: str | None) -> bytes:
    if text is None:
        raise CorpusKeyError(f"{KEY_ENV} is not set: the corpus cannot be read")
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise CorpusKeyError(f"{KEY_ENV} must be 64 hex characters") from None
    if len(key) != 32:
        raise CorpusKeyError(f"{KEY_ENV} must be 64 hex characters")
    return key


def unseal(data: bytes, key: bytes, label: str) -> bytes:
    """XOR with SHAKE-256(domain || label || 0 || key): sealing and unsealing are the same."""
    stream = hashlib.shake_256(_DOMAIN + label.encode("ascii") + b"\0" + key).digest(len(data))
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")
