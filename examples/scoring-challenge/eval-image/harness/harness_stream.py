"""The data stream and the prequential code length: the harness owns both.

Rows overlap by one byte (row i = stream[i*(T-1) : i*(T-1)+T]) so every byte after the first is
predicted exactly once; each batch is scored under no_grad in eval mode BEFORE the bundle's
training step sees it. Sums are exact (each batch's float64 losses are split into error-free
components and accumulated without rounding), so a uniform model's code length is exactly
covered_bytes * ln(256), the same float the service would compute.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy
import torch


class HarnessError(Exception):
    """A problem the harness found in the bundle's behaviour (wrong output shape, bad arguments)."""


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


class Batch:
    """What a bundle receives: `.tokens`, a LongTensor [B, T] of byte values on ctx.device."""

    __slots__ = ("tokens",)

    def __init__(self, tokens: torch.Tensor) -> None:
        self.tokens = tokens

    def __repr__(self) -> str:
        return f"Batch(tokens={tuple(self.tokens.shape)})"


def row_count(length: int, start: int, seq_len: int) -> int:
    """Full rows of seq_len bytes that fit from start, each starting seq_len-1 after the last."""
    return max(0, (length - start - 1) // (seq_len - 1))


def rows(data: numpy.ndarray, start: int, count: int, seq_len: int) -> torch.Tensor:
    """count overlapping rows from start as a LongTensor [count, seq_len]."""
    index = start + numpy.arange(count)[:, None] * (seq_len - 1) + numpy.arange(seq_len)[None, :]
    return torch.from_numpy(data[index].astype(numpy.int64))


def forward_eval(model: torch.nn.Module, tokens: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """The model's logits under no_grad in eval mode (train mode restored), shape-checked."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = model(tokens)
    finally:
        model.train(was_training)
    expected = (tokens.shape[0], tokens.shape[1], vocab_size)
    if not isinstance(logits, torch.Tensor):
        raise HarnessError(f"the model returned {type(logits).__name__}, not a tensor of logits {list(expected)}")
    if tuple(logits.shape) != expected:
        raise HarnessError(f"the model returned logits of shape {list(logits.shape)}; expected {list(expected)} [B, T, V]")
    return logits


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

    def score(self, model: torch.nn.Module, tokens: torch.Tensor) -> None:
        logits = forward_eval(model, tokens, self.vocab_size)
        nll = target_nll(logits, tokens)
        targets = nll.numel()
        if bool(torch.isfinite(nll).all()):
            values = nll.flatten().tolist()
            batch = ExactSum()
            batch.add_values(values)
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
        self.tokens += tokens.numel()
        self.covered_bytes += targets


class TrainStream:
    """The single pass over the stream that ctx.iter_train_batches draws from.

    The position, budgets and tally live here, reachable by bundle code only through the
    closure the harness hands out (frames, closures and dunders are refused by the gate).
    """

    def __init__(
        self,
        data: bytes,
        *,
        vocab_size: int,
        sequence_length: int,
        batch_size: int,
        token_budget: int,
        step_budget: int,
        device: str,
        on_new_model: Any = None,
    ) -> None:
        self.data = numpy.frombuffer(data, dtype=numpy.uint8)
        self.vocab_size = vocab_size
        self.sequence_length = sequence_length
        self.batch_size = batch_size
        self.token_budget = token_budget
        self.step_budget = step_budget
        self.device = device
        self.position = 0
        self.steps = 0
        self.tally = Tally(vocab_size)
        self.models: list[torch.nn.Module] = []
        self.last_tokens: torch.Tensor | None = None
        self.error: HarnessError | None = None
        self.on_new_model = on_new_model

    def remaining_rows(self, seq_len: int) -> int:
        by_stream = row_count(len(self.data), self.position, seq_len)
        by_tokens = max(0, (self.token_budget - self.tally.tokens) // seq_len)
        return min(by_stream, by_tokens)

    def iterate(self, model: Any, batch_size: Any = None, seq_len: Any = None, tokenizer: Any = None) -> Iterator[Batch]:
        if not isinstance(model, torch.nn.Module):
            raise HarnessError(f"iter_train_batches needs the model (a torch.nn.Module), got {type(model).__name__}")
        if tokenizer is not None:
            raise HarnessError("iter_train_batches: tokenizer is not supported: the harness is byte-level (vocab 256)")
        size = self.batch_size if batch_size is None else batch_size
        length = self.sequence_length if seq_len is None else seq_len
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 4096:
            raise HarnessError(f"iter_train_batches: batch_size must be an integer in 1..4096, got {size!r}")
        if not isinstance(length, int) or isinstance(length, bool) or not 2 <= length <= self.sequence_length:
            raise HarnessError(
                f"iter_train_batches: seq_len must be an integer in 2..{self.sequence_length}, got {length!r}"
            )
        return self._batches(model, size, length)

    def _batches(self, model: torch.nn.Module, size: int, length: int) -> Iterator[Batch]:
        if not any(model is m for m in self.models):
            self.models.append(model)
            if self.on_new_model is not None:
                self.on_new_model(model)
        while self.steps < self.step_budget:
            count = min(size, self.remaining_rows(length))
            if count == 0:
                return
            tokens = rows(self.data, self.position, count, length).to(self.device)
            try:
                self.tally.score(model, tokens)
            except HarnessError as error:
                self.error = self.error or error  # recorded even if the bundle swallows it
                raise
            self.position += count * (length - 1)
            self.steps += 1
            self.last_tokens = tokens
            # A copy: whatever the bundle does to its tensor cannot touch the harness's record.
            yield Batch(tokens.clone())

    @property
    def current_model(self) -> torch.nn.Module | None:
        return self.models[-1] if self.models else None


def score_holdout(model: torch.nn.Module, data: bytes, *, vocab_size: int, sequence_length: int, batch_size: int, device: str) -> Tally:
    """Code length of the held-out bytes under the trained model (no grad, no budgets)."""
    array = numpy.frombuffer(data, dtype=numpy.uint8)
    tally = Tally(vocab_size)
    position = 0
    while True:
        count = min(batch_size, row_count(len(array), position, sequence_length))
        if count == 0:
            return tally
        tally.score(model, rows(array, position, count, sequence_length).to(device))
        position += count * (sequence_length - 1)
