"""The data stream and the prequential code length: the scorer owns both.

Rows overlap by one byte (row i = stream[i*(T-1) : i*(T-1)+T]) so every byte after the first is
predicted exactly once; each batch is charged (its negative log-likelihood under the scored
function) BEFORE the bundle's process receives it. Sums are exact (each batch's float64 losses
are split into error-free components and accumulated without rounding), so a uniform model's
code length is exactly covered_bytes * ln(256), the same float the service computes.
"""

from __future__ import annotations

import math

import numpy
import torch


class ExactSum:
    """Shewchuk's exact accumulator: the running sum is held as non-overlapping partials."""

    def __init__(self) -> None:
        self.partials: list[float] = []

    def add(self, x: float) -> None:
        i = 0
        for y in self.partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                self.partials[i] = lo
                i += 1
            x = hi
        self.partials[i:] = [x]

    def add_values(self, values: list[float]) -> None:
        """Add many values exactly: math.fsum (C speed) peels error-free components off their sum."""
        rest = list(values)
        for _ in range(80):  # each round shrinks the remainder by at least 2**-52; 80 is ample
            head = math.fsum(rest)
            if head == 0.0:
                return
            self.add(head)
            rest.append(-head)
        raise ArithmeticError("exact summation did not converge")  # pragma: no cover

    @property
    def value(self) -> float:
        return math.fsum(self.partials)


def row_count(length: int, start: int, seq_len: int) -> int:
    """Full rows of seq_len bytes that fit from start, each starting seq_len-1 after the last."""
    return max(0, (length - start - 1) // (seq_len - 1))


def rows(data: numpy.ndarray, start: int, count: int, seq_len: int) -> torch.Tensor:
    """count overlapping rows from start as a LongTensor [count, seq_len]."""
    index = start + numpy.arange(count)[:, None] * (seq_len - 1) + numpy.arange(seq_len)[None, :]
    return torch.from_numpy(data[index].astype(numpy.int64))


def target_nll(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Per-target NLL in nats (float64): position t predicts token t+1."""
    log_probs = torch.log_softmax(logits[:, :-1].double(), dim=-1)
    return -log_probs.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)


class Tally:
    """The prequential account of one run (or of the holdout)."""

    def __init__(self, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self.nll = ExactSum()
        self.batches = 0
        self.tokens = 0
        self.covered_bytes = 0
        self.nonfinite_batches = 0
        self.first_batch_loss: float | None = None

    def charge(self, nll: torch.Tensor, tokens: int) -> None:
        """Add one batch's per-target losses (float64 [rows, T-1]) covering `tokens` tokens."""
        targets = nll.numel()
        if bool(torch.isfinite(nll).all()):
            batch = ExactSum()
            batch.add_values(nll.flatten().tolist())
            self.nll.add_values(batch.partials)
            batch_total = batch.value
        else:
            # A non-finite batch codes its bytes at the uniform cost: as bad as knowing nothing.
            self.nonfinite_batches += 1
            batch_total = math.log(self.vocab_size) * targets
            self.nll.add(batch_total)
        if self.batches == 0:
            self.first_batch_loss = batch_total / targets
        self.batches += 1
        self.tokens += tokens
        self.covered_bytes += targets


class StreamCursor:
    """The single pass over the stream: position, budgets, and the rows of the next batch."""

    def __init__(self, data: bytes, *, sequence_length: int, token_budget: int, step_budget: int) -> None:
        self.data = numpy.frombuffer(data, dtype=numpy.uint8)
        self.sequence_length = sequence_length
        self.token_budget = token_budget
        self.step_budget = step_budget
        self.position = 0
        self.steps = 0
        self.tokens = 0

    def next_rows(self, batch_size: int, seq_len: int) -> torch.Tensor | None:
        """The next batch [B, seq_len] (B <= batch_size), or None when the pass or a budget ends."""
        if self.steps >= self.step_budget:
            return None
        by_stream = row_count(len(self.data), self.position, seq_len)
        by_tokens = max(0, (self.token_budget - self.tokens) // seq_len)
        count = min(batch_size, by_stream, by_tokens)
        if count == 0:
            return None
        tokens = rows(self.data, self.position, count, seq_len)
        self.position += count * (seq_len - 1)
        self.steps += 1
        self.tokens += tokens.numel()
        return tokens

    def first_rows(self, batch_size: int, seq_len: int) -> torch.Tensor:
        """The rows a first batch of this shape would hold, without moving the cursor."""
        count = min(batch_size, row_count(len(self.data), 0, seq_len), max(1, self.token_budget // seq_len))
        return rows(self.data, 0, count, seq_len)

    def progress(self) -> float:
        """How much of the pass is behind: the largest share of the stream or a budget used, 0..1."""
        shares = [self.position / max(1, len(self.data) - 1)]
        shares.append(self.tokens / self.token_budget if self.token_budget else 1.0)
        shares.append(self.steps / self.step_budget if self.step_budget else 1.0)
        return min(1.0, max(shares))


def holdout_rows(data: bytes, sequence_length: int) -> torch.Tensor:
    """The held-out bytes as the service lays them out: independent rows of T bytes, [N, T].

    Each row comes from its own place in the pool (drawn for this run), so rows do not overlap
    and a trailing part shorter than a row is not a row.
    """
    array = numpy.frombuffer(data, dtype=numpy.uint8)
    count = len(array) // sequence_length
    return torch.from_numpy(array[: count * sequence_length].reshape(count, sequence_length).astype(numpy.int64))
