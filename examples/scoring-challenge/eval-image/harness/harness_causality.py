"""Causality, checked on the rows that are charged: a prediction may not move with a later byte.

For every charged row the scorer picks a secret cut c (uniform in 1..T-1, from the OS's random
source) and evaluates a twin of the row: the same bytes before c, every byte from c on changed.
The scored function is pure (harness_graph.py: no state survives a call, each row is its own
call), so the twin is a second, independent question about the same function: a causal model
gives the same logits at positions < c for both rows; a model whose prediction at c-1 used
byte c cannot give them without knowing byte c, which the twin does not contain. Any move
beyond TOLERANCE rejects the run.

The model cannot tell the charged call from its twin in a way that helps it: both are [1, T]
rows of the same function, and even a model that recognises twins would have to have answered
the charged call without the future to pass. A model that looks ahead at a fraction f of the
positions escapes one twin with probability 1 - f, so all N twins of a run with probability
(1 - f)^N: gaining Δ bits per byte needs f >= Δ/8 (a byte costs at most 8 bits more without
the look), so with N rows checked the gain escapes with probability at most exp(-N·Δ/8)
(1,024 rows at the service's defaults: Δ = 0.05 escapes with probability < 0.2 %).
"""

from __future__ import annotations

import os
import sys

import torch

TOLERANCE = 1e-4


class Twins:
    """Secret cuts and replacement bytes for the twins of one run, and what they found."""

    def __init__(self, vocab_size: int, seed: bytes | None = None) -> None:
        self.vocab_size = vocab_size
        # A secret seed: nothing in the bundle's process can know or replay it.
        secret = int.from_bytes(seed if seed is not None else os.urandom(16), "big")
        self.generator = torch.Generator().manual_seed(secret % (2**63))
        self.ok = True
        self.max_delta = 0.0
        self.checked_positions = 0
        self.checked_rows = 0

    def twin(self, row: torch.Tensor) -> tuple[torch.Tensor, int]:
        """A twin of row [1, T]: the same bytes before a secret cut c, every byte from c on changed."""
        length = row.shape[1]
        cut = int(torch.randint(1, length, (1,), generator=self.generator))
        shift = torch.randint(1, self.vocab_size, (1, length - cut), generator=self.generator).to(row.device)
        twin = row.clone()
        twin[:, cut:] = (twin[:, cut:] + shift) % self.vocab_size
        return twin, cut

    def compare(self, charged: torch.Tensor, twin: torch.Tensor, cut: int) -> bool:
        """Record one comparison of logits [1, T, V] before the cut; False: the row looked ahead."""
        moved = max_move(charged[:, :cut], twin[:, :cut])
        self.max_delta = max(self.max_delta, moved)
        self.checked_positions += cut
        self.checked_rows += 1
        if moved > TOLERANCE:
            self.ok = False
        return moved <= TOLERANCE

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "max_delta": self.max_delta,
            "checked_positions": self.checked_positions,
            "checked_rows": self.checked_rows,
        }


def max_move(before: torch.Tensor, after: torch.Tensor) -> float:
    """Largest change; a value turning non-finite (or back) counts as an unbounded change."""
    a = before.double()
    b = after.double()
    finite = torch.isfinite(a) & torch.isfinite(b)
    same_special = ~torch.isfinite(a) & ~torch.isfinite(b) & ((a == b) | (torch.isnan(a) & torch.isnan(b)))
    diff = torch.where(finite, (a - b).abs(), torch.zeros_like(a))
    moved = float(diff.max()) if diff.numel() else 0.0
    if bool((~finite & ~same_special).any()):
        return sys.float_info.max
    return moved
