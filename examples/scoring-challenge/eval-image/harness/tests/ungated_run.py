"""run.py with the static gate switched off: a bundle as if it had found a way past the gate.

Tests only. The isolation tests use it to show what the scorer holds when the first layer fails.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness_gate  # noqa: E402

harness_gate.check_sources = lambda sources: []  # type: ignore[assignment]

import run  # noqa: E402

if __name__ == "__main__":
    sys.exit(run.main())
