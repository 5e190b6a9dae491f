"""The framed report line, and keeping its nonce away from miner code.

The service reads `HARNESS-REPORT <nonce> <compact json>` from stdout and trusts only the last
line carrying the nonce it generated. The nonce therefore has to be gone from everything a
bundle could read before any bundle code is imported: os.environ (popped), and also
/proc/self/environ, which keeps the environment the process was started with even after
unsetenv. For the latter the harness re-executes itself once with the nonce handed over through
a pipe instead of the environment (`take_nonce`). Miner prints go to stderr (`claim_stdout`), so
stdout carries only the report.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any, TextIO

NONCE_ENV = "HARNESS_NONCE"
_NONCE_FD_ENV = "HARNESS_NONCE_FD"
PREFIX = "HARNESS-REPORT"
_NONCE_RE = re.compile(r"^[A-Za-z0-9_-]{8,256}$")


class NonceError(Exception):
    """The nonce is missing or malformed: the harness cannot frame a report the service trusts."""


def take_nonce(reexec: bool = True) -> str:
    """Read the nonce and remove every trace of it a bundle could read.

    With `reexec` (the default in the entry points) the first call re-executes the interpreter
    with the nonce moved from the environment into an inherited pipe, and the second (in the new
    process image) reads it from that pipe; /proc/self/environ then never shows it.
    """
    fd_text = os.environ.pop(_NONCE_FD_ENV, None)
    if fd_text is not None:
        fd = int(fd_text)
        with os.fdopen(fd, "rb") as pipe:
            nonce = pipe.read().decode("ascii", "replace")
        return _checked(nonce)
    nonce = os.environ.pop(NONCE_ENV, None)
    if nonce is None:
        raise NonceError(f"{NONCE_ENV} is not set: no report can be framed")
    nonce = _checked(nonce)
    if not reexec:
        return nonce
    read_fd, write_fd = os.pipe()
    # The nonce is tiny, far under the pipe buffer, so the write cannot block before exec.
    os.write(write_fd, nonce.encode("ascii"))
    os.close(write_fd)
    os.set_inheritable(read_fd, True)
    env = dict(os.environ)
    env[_NONCE_FD_ENV] = str(read_fd)
    argv = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
    raise AssertionError("unreachable")  # pragma: no cover


class HeldNonce:
    """The nonce still sitting in its pipe: read only when the report is written.

    While bundle code runs, the nonce is in no Python object at all, so nothing a bundle can
    reach in memory (frames, closures, format-string traversal) can reveal it.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def read(self) -> str:
        with os.fdopen(self._fd, "rb") as pipe:
            return _checked(pipe.read().decode("ascii", "replace"))


def hold_nonce() -> HeldNonce:
    """Like take_nonce, but leave the nonce unread in the pipe (run.py, which runs bundle code)."""
    fd_text = os.environ.pop(_NONCE_FD_ENV, None)
    if fd_text is None:
        take_nonce(reexec=True)  # re-executes this process; does not return
        raise AssertionError("unreachable")  # pragma: no cover
    fd = int(fd_text)
    os.set_inheritable(fd, False)
    return HeldNonce(fd)


def _checked(nonce: str) -> str:
    if not _NONCE_RE.match(nonce):
        raise NonceError(f"{NONCE_ENV} must be 8-256 characters of [A-Za-z0-9_-]")
    return nonce


def claim_stdout() -> TextIO:
    """Keep the real stdout for the report and send everything else (miner prints) to stderr."""
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
