"""Prequential accounting: exact code lengths, coverage, budgets, non-finite batches."""

from __future__ import annotations

import math
import random
import unittest

import torch

import harness_stream
from tests import support


def cursor(data: bytes, **overrides: int) -> harness_stream.StreamCursor:
    options = dict(sequence_length=32, token_budget=1 << 30, step_budget=1 << 30)
    options.update(overrides)
    return harness_stream.StreamCursor(data, **options)


def drain(stream: harness_stream.StreamCursor, batch_size: int = 4, seq_len: int = 32) -> list[torch.Tensor]:
    batches = []
    while (tokens := stream.next_rows(batch_size, seq_len)) is not None:
        batches.append(tokens)
    return batches


def charge_all(model: torch.nn.Module, batches: list[torch.Tensor]) -> harness_stream.Tally:
    tally = harness_stream.Tally(256)
    with torch.no_grad():
        for tokens in batches:
            tally.charge(harness_stream.target_nll(model(tokens), tokens), tokens.numel())
    return tally


class ExactSums(unittest.TestCase):
    def test_exact_sum_matches_fsum(self) -> None:
        rng = random.Random(7)
        values = [rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20) for _ in range(5000)]
        total = harness_stream.ExactSum()
        for start in range(0, len(values), 333):
            total.add_values(values[start : start + 333])
        self.assertEqual(total.value, math.fsum(values))


class KnownProbabilities(unittest.TestCase):
    def test_uniform_model_is_exactly_8_bits_per_byte(self) -> None:
        batches = drain(cursor(support.TEXT * 40))
        tally = charge_all(support.Uniform(), batches)
        self.assertGreater(len(batches), 10)
        self.assertEqual(tally.covered_bytes, sum(b.shape[0] * (b.shape[1] - 1) for b in batches))
        # The same float the service computes from the report: bytes * ln 256, bit for bit.
        self.assertEqual(tally.nll.value, tally.covered_bytes * math.log(256))
        self.assertEqual(tally.first_batch_loss, math.log(256))
        self.assertAlmostEqual((tally.nll.value / math.log(2)) / tally.covered_bytes, 8.0, places=12)

    def test_uniform_bpb_is_8_exactly_for_this_length(self) -> None:
        # 20 batches of 4 rows of 31 targets: a length where the service's formula lands on 8.0.
        tally = charge_all(support.Uniform(), drain(cursor(bytes(range(256)) * 10, step_budget=20)))
        self.assertEqual(tally.covered_bytes, 20 * 4 * 31)
        self.assertEqual((tally.nll.value / math.log(2)) / tally.covered_bytes, 8.0)

    def test_fixed_distribution(self) -> None:
        generator = torch.Generator().manual_seed(3)
        q = torch.rand(256, generator=generator, dtype=torch.float64) + 0.01
        q = q / q.sum()
        data = support.TEXT * 10
        tally = charge_all(support.Unigram(q), drain(cursor(data)))
        expected = math.fsum(-math.log(float(q[b])) for b in data[1 : tally.covered_bytes + 1])
        self.assertAlmostEqual(tally.nll.value, expected, delta=1e-9 * expected)


class Coverage(unittest.TestCase):
    def test_every_byte_after_the_first_predicted_once(self) -> None:
        data = bytes((i * 7 + 3) % 256 for i in range(5000))
        batches = drain(cursor(data))
        targets = b"".join(bytes(row[1:].tolist()) for batch in batches for row in batch)
        self.assertEqual(targets, data[1 : 1 + len(targets)])
        # Only full rows: what is left is shorter than one row.
        self.assertLess(len(data) - 1 - len(targets), 31)

    def test_token_and_step_budgets_stop_the_pass(self) -> None:
        data = support.TEXT * 40
        stream = cursor(data, token_budget=1000)
        # 1000 // 32 = 31 rows: 4+4+...+3.
        self.assertEqual([b.shape[0] for b in drain(stream)], [4] * 7 + [3])
        self.assertEqual(stream.tokens, 31 * 32)
        stream = cursor(data, step_budget=3)
        self.assertEqual(len(drain(stream)), 3)
        self.assertEqual(stream.steps, 3)

    def test_smaller_shapes_continue_the_single_pass(self) -> None:
        data = bytes(range(256)) * 4
        stream = cursor(data)
        first = stream.next_rows(2, 16)
        assert first is not None
        self.assertEqual(tuple(first.shape), (2, 16))
        after = stream.next_rows(4, 32)
        assert after is not None
        self.assertEqual(int(after[0, 0]), int(first[-1, -1]))

    def test_holdout_rows_are_the_independent_rows_the_service_laid_end_to_end(self) -> None:
        data = support.TEXT * 3
        rows = harness_stream.holdout_rows(data, 32)
        self.assertEqual(tuple(rows.shape), (len(data) // 32, 32))
        self.assertEqual(bytes(rows[1].tolist()), data[32:64])  # no overlap between rows
        self.assertEqual(bytes(rows[-1].tolist()), data[(len(data) // 32 - 1) * 32 : (len(data) // 32) * 32])


class NonFinite(unittest.TestCase):
    def test_nonfinite_batches_cost_the_uniform_price(self) -> None:
        batches = drain(cursor(support.TEXT * 10, step_budget=6))
        tally = harness_stream.Tally(256)
        base = torch.zeros(1, 1, 256) + 3.0 * (torch.arange(256) == 101).float()
        for index, tokens in enumerate(batches):
            logits = base.expand(tokens.shape[0], tokens.shape[1], 256).clone()
            if index in (1, 3):
                logits[0, 3, 7] = float("nan")
            tally.charge(harness_stream.target_nll(logits, tokens), tokens.numel())
        self.assertEqual(tally.nonfinite_batches, 2)
        self.assertTrue(math.isfinite(tally.nll.value))
        # Finite batches see a slightly-better-than-uniform model, so the total sits below uniform.
        self.assertLess(tally.nll.value, tally.covered_bytes * math.log(256))

    def test_first_batch_nonfinite_reports_the_replacement(self) -> None:
        batches = drain(cursor(support.TEXT * 4))
        tally = harness_stream.Tally(256)
        for tokens in batches:
            logits = torch.full((tokens.shape[0], tokens.shape[1], 256), float("nan"))
            tally.charge(harness_stream.target_nll(logits, tokens), tokens.numel())
        self.assertEqual(tally.first_batch_loss, math.log(256))
        self.assertEqual(tally.nonfinite_batches, tally.batches)


if __name__ == "__main__":
    unittest.main()
