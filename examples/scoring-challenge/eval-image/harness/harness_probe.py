"""The causality probe: changing later bytes must not move the predictions at earlier positions.

For each cut t, the bytes from position t on are replaced (every one changed) and the logits at
positions < t are compared with the unchanged run; any move beyond the tolerance means the model
read a byte it is asked to predict. Probe rows are seeded random bytes, a fixed piece of English
(so a model cannot tell probes from text by their look) and, after training, rows the run has
already scored (nothing the bundle has not seen).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import torch

from harness_stream import forward_eval

TOLERANCE = 1e-4

# Public-domain prose (the opening of the US Declaration of Independence), a fixed probe input.
PROBE_TEXT = (
    b"When in the Course of human events, it becomes necessary for one people to dissolve the "
    b"political bands which have connected them with another, and to assume among the powers of "
    b"the earth, the separate and equal station to which the Laws of Nature and of Nature's God "
    b"entitle them, a decent respect to the opinions of mankind requires that they should declare "
    b"the causes which impel them to the separation. We hold these truths to be self-evident, "
)


@dataclass
class ProbeResult:
    ok: bool
    max_delta: float
    checked_positions: int

    def merge(self, other: "ProbeResult") -> "ProbeResult":
        return ProbeResult(
            self.ok and other.ok,
            max(self.max_delta, other.max_delta),
            self.checked_positions + other.checked_positions,
        )

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "max_delta": self.max_delta, "checked_positions": self.checked_positions}


def cut_positions(seq_len: int) -> list[int]:
    return sorted({t for t in (1, 2, seq_len // 4, seq_len // 2, (3 * seq_len) // 4, seq_len - 1) if 1 <= t < seq_len})


def probe_rows(seq_len: int, vocab_size: int, seed: int, seen: torch.Tensor | None) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    parts = [torch.randint(0, vocab_size, (2, seq_len), generator=generator)]
    text = (PROBE_TEXT * (2 + (2 * seq_len) // len(PROBE_TEXT)))
    prose = torch.tensor(list(text[: 2 * seq_len]), dtype=torch.int64).reshape(2, seq_len) % vocab_size
    parts.append(prose)
    if seen is not None and seen.shape[1] == seq_len:
        parts.append(seen[:2].to("cpu", torch.int64))
    return torch.cat(parts, dim=0)


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


def probe(
    model: torch.nn.Module,
    *,
    seq_len: int,
    vocab_size: int,
    seed: int,
    device: str,
    seen: torch.Tensor | None = None,
) -> ProbeResult:
    """Run the probe on the model as it is now (eval mode, no grad; its train mode is restored)."""
    base = probe_rows(seq_len, vocab_size, seed, seen).to(device)
    generator = torch.Generator().manual_seed(seed + 1)
    reference = forward_eval(model, base, vocab_size)
    worst = 0.0
    checked = 0
    for cut in cut_positions(seq_len):
        changed = base.clone()
        shift = torch.randint(1, vocab_size, (base.shape[0], seq_len - cut), generator=generator).to(device)
        changed[:, cut:] = (changed[:, cut:] + shift) % vocab_size
        logits = forward_eval(model, changed, vocab_size)
        worst = max(worst, max_move(reference[:, :cut], logits[:, :cut]))
        checked += base.shape[0] * cut
    return ProbeResult(worst <= TOLERANCE, worst, checked)
