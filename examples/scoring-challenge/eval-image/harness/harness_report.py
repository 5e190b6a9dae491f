"""The framed report line the service reads, and the nonce that frames it.

The service reads `HARNESS-REPORT <nonce> <compact json>` from stdout and trusts only the last
line carrying the nonce it generated. Only the scorer (run.py) and the gate (gate.py) write it;
neither runs bundle code in its own process. The scorer keeps the real stdout on a private,
non-inheritable descriptor (`claim_stdout`) before the bundle's process exists, so that process
(whose stdout and stderr are the container's stderr) has no way to write a line there.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any, TextIO

NONCE_ENV = "HARNESS_NONCE"
PREFIX = "HARNESS-REPORT"
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{8,256}$")


class NonceError(Exception):
    """The nonce is missing or malformed: the harness cannot frame a report the service trusts."""


def take_nonce() -> str:
    """Read the nonce and remove it from os.environ."""
    nonce = os.environ.pop(NONCE_ENV, None)
    if nonce is None:
        raise NonceError(f"{NONCE_ENV} is not set: no report can be framed")
    if not _NONCE_RE.match(nonce):
        raise NonceError(f"{NONCE_ENV} must be 8-256 characters of [A-Za-z0-9_-]")
    return nonce


def claim_stdout() -> TextIO:
    """Keep the real stdout for the report and send everything else to stderr."""
    sys.stdout.flush()
    report_fd = os.dup(1)  # non-inheritable by default: child processes never get it
    os.dup2(2, 1)
    return os.fdopen(report_fd, "w", encoding="utf-8", closefd=True)


def clean_json(value: Any) -> Any:
    """Replace non-finite floats (JSON cannot carry them) by null, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    return value


def frame(nonce: str, report: dict[str, Any]) -> str:
    """One line: the prefix, the nonce, compact JSON (stable key order, no NaN/Infinity)."""
    body = json.dumps(clean_json(report), separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    return f"{PREFIX} {nonce} {body}"


def emit(out: TextIO, nonce: str, report: dict[str, Any]) -> None:
    """Write the framed report line and flush it."""
    out.write("\n" + frame(nonce, report) + "\n")
    out.flush()
