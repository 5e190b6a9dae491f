"""The behaviour signature of a scored run: what the model computed, compact, for the copy check.

The service compares a completed run's signature with those of earlier accepted bundles scored on
the same bytes (docs/challenges/scoring.md, "Duplicates"): a bundle that computes what an earlier
one computes, within the noise of one model under different seeds, is a copy whatever its code
looks like. The signature is the prequential loss curve: the charged negative log-likelihood of
the stream cut into BUCKETS equal spans of predicted bytes, as mean nats per byte. The same
layers, init order and hyperparameters under the forced seed give the same curve (to the float
reassociation of a rewritten forward); a different model gives a different one.

Buckets are by position in the stream, not by batch, so the curve does not depend on how the
bundle asks for its batches; the scorer fills it from the losses it already charged (no extra
forward). A non-finite batch counts at the uniform cost, as in the tally.
"""

from __future__ import annotations

import math

import numpy
import torch

# Points of the curve: enough to tell two training trajectories apart, small in the report.
BUCKETS = 64
# Digits kept per point: far below the seed noise, and a short report line.
DIGITS = 6


class LossCurve:
    """Charged losses summed per span of predicted bytes, in stream order."""

    def __init__(self, predicted_bytes: int, vocab_size: int) -> None:
        self.bucket_bytes = max(1, math.ceil(max(0, predicted_bytes) / BUCKETS))
        self.uniform = math.log(vocab_size)
        self.nll = numpy.zeros(BUCKETS, dtype=numpy.float64)
        self.count = numpy.zeros(BUCKETS, dtype=numpy.int64)
        self.position = 0

    def charge(self, nll: torch.Tensor) -> None:
        """One charged batch's per-target losses ([rows, T-1], rows in stream order)."""
        values = nll.detach().flatten().double().cpu().numpy()
        if not numpy.isfinite(values).all():
            values = numpy.full(values.shape, self.uniform)
        buckets = (self.position + numpy.arange(values.size)) // self.bucket_bytes
        inside = buckets < BUCKETS
        self.nll += numpy.bincount(buckets[inside], weights=values[inside], minlength=BUCKETS)
        self.count += numpy.bincount(buckets[inside], minlength=BUCKETS)
        self.position += values.size

    def to_json(self) -> dict[str, object]:
        """`{bucket_bytes, losses}`: mean nats per byte of each bucket that holds a charged byte."""
        filled = int(numpy.count_nonzero(self.count))
        losses = [round(float(self.nll[i] / self.count[i]), DIGITS) for i in range(filled)]
        return {"bucket_bytes": self.bucket_bytes, "losses": losses}
