"""Prequential scoring: exact code lengths, coverage, order, budgets, non-finite batches."""

from __future__ import annotations

import math
import random
import unittest

import torch

import harness_stream
from tests import support


def make_stream(data: bytes, **overrides: object) -> harness_stream.TrainStream:
    options: dict[str, object] = dict(
        vocab_size=256, sequence_length=32, batch_size=4, token_budget=1 << 30, step_budget=1 << 30, device="cpu"
    )
    options.update(overrides)
    return harness_stream.TrainStream(data, **options)  # type: ignore[arg-type]


def drain(stream: harness_stream.TrainStream, model: torch.nn.Module, **kwargs: object) -> list[torch.Tensor]:
    return [batch.tokens for batch in stream.iterate(model, **kwargs)]


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
        data = support.TEXT * 40
        stream = make_stream(data)
        batches = drain(stream, support.Uniform())
        tally = stream.tally
        self.assertGreater(len(batches), 10)
        self.assertEqual(tally.covered_bytes, tally.batches and sum(b.shape[0] * (b.shape[1] - 1) for b in batches))
        # The same float the service computes from the report: bytes * ln 256, bit for bit.
        self.assertEqual(tally.nll.value, tally.covered_bytes * math.log(256))
        self.assertEqual(tally.first_batch_loss, math.log(256))
        bpb = (tally.nll.value / math.log(2)) / tally.covered_bytes
        self.assertAlmostEqual(bpb, 8.0, places=12)

    def test_uniform_bpb_is_8_exactly_for_this_length(self) -> None:
        # 20 batches of 4 rows of 31 targets: a length where the service's formula lands on 8.0.
        data = bytes(range(256)) * 10
        stream = make_stream(data, step_budget=20)
        drain(stream, support.Uniform())
        covered = stream.tally.covered_bytes
        self.assertEqual(covered, 20 * 4 * 31)
        self.assertEqual((stream.tally.nll.value / math.log(2)) / covered, 8.0)

    def test_fixed_distribution(self) -> None:
        generator = torch.Generator().manual_seed(3)
        q = torch.rand(256, generator=generator, dtype=torch.float64) + 0.01
        q = q / q.sum()
        data = support.TEXT * 10
        stream = make_stream(data)
        drain(stream, support.Unigram(q))
        covered = stream.tally.covered_bytes
        expected = math.fsum(-math.log(float(q[b])) for b in data[1 : covered + 1])
        self.assertAlmostEqual(stream.tally.nll.value, expected, delta=1e-9 * expected)


class Coverage(unittest.TestCase):
    def test_every_byte_after_the_first_predicted_once(self) -> None:
        data = bytes((i * 7 + 3) % 256 for i in range(5000))
        stream = make_stream(data)
        batches = drain(stream, support.Uniform())
        targets = b"".join(bytes(row[1:].tolist()) for batch in batches for row in batch)
        self.assertEqual(targets, data[1 : 1 + len(targets)])
        self.assertEqual(len(targets), stream.tally.covered_bytes)
        # Only full rows: what is left is shorter than one row.
        self.assertLess(len(data) - 1 - len(targets), 31)
        self.assertEqual(stream.tally.tokens, sum(b.numel() for b in batches))

    def test_token_and_step_budgets_stop_the_pass(self) -> None:
        data = support.TEXT * 40
        stream = make_stream(data, token_budget=1000)
        batches = drain(stream, support.Uniform())
        # 1000 // 32 = 31 rows: 4+4+...+3.
        self.assertEqual([b.shape[0] for b in batches], [4] * 7 + [3])
        self.assertEqual(stream.tally.tokens, 31 * 32)
        stream = make_stream(data, step_budget=3)
        self.assertEqual(len(drain(stream, support.Uniform())), 3)
        self.assertEqual(stream.steps, 3)

    def test_a_second_call_continues_the_single_pass(self) -> None:
        data = bytes(range(256)) * 4
        stream = make_stream(data)
        first = next(iter(stream.iterate(support.Uniform())))
        rest = drain(stream, support.Uniform())
        self.assertEqual(int(rest[0][0, 0]), int(first.tokens[-1, -1]))

    def test_bundle_may_pick_smaller_shapes_not_larger(self) -> None:
        stream = make_stream(support.TEXT * 4)
        batch = next(iter(stream.iterate(support.Uniform(), batch_size=2, seq_len=16)))
        self.assertEqual(tuple(batch.tokens.shape), (2, 16))
        with self.assertRaisesRegex(harness_stream.HarnessError, "seq_len must be an integer in 2..32"):
            stream.iterate(support.Uniform(), seq_len=64)
        with self.assertRaisesRegex(harness_stream.HarnessError, "tokenizer is not supported"):
            stream.iterate(support.Uniform(), tokenizer="gpt2")
        with self.assertRaisesRegex(harness_stream.HarnessError, "needs the model"):
            stream.iterate(None)


class Order(unittest.TestCase):
    def test_each_batch_is_scored_before_the_bundle_sees_it(self) -> None:
        class Recorder(support.Uniform):
            def __init__(self) -> None:
                super().__init__()
                self.calls: list[tuple[bool, bool, int]] = []

            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                self.calls.append((self.training, torch.is_grad_enabled(), int(tokens[0, 1])))
                return super().forward(tokens)

        model = Recorder()
        model.train()
        stream = make_stream(bytes(range(256)) * 4)
        for index, batch in enumerate(stream.iterate(model)):
            # Scored already: one eval-mode, no-grad forward of exactly these tokens...
            self.assertEqual(len(model.calls), index + 1)
            self.assertEqual(model.calls[-1], (False, False, int(batch.tokens[0, 1])))
            # ...and the bundle's train mode is back.
            self.assertTrue(model.training)
            if index == 2:
                break

    def test_a_training_step_cannot_change_a_score_already_taken(self) -> None:
        data = support.TEXT * 10
        reference = make_stream(data)
        drain(reference, support.Uniform())
        stream = make_stream(data)
        model = support.Uniform()
        for batch in stream.iterate(model):
            batch.tokens.zero_()  # the bundle scribbles on its copy
        self.assertEqual(stream.tally.nll.value, reference.tally.nll.value)


class NonFinite(unittest.TestCase):
    def test_nonfinite_batches_cost_the_uniform_price(self) -> None:
        class Flaky(support.Uniform):
            calls = 0

            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                Flaky.calls += 1
                out = super().forward(tokens) + 3.0 * (torch.arange(256) == 101).float()
                if Flaky.calls in (2, 4):
                    out[0, 3, 7] = float("nan")
                return out

        stream = make_stream(support.TEXT * 10, step_budget=6)
        drain(stream, Flaky())
        tally = stream.tally
        self.assertEqual(tally.nonfinite_batches, 2)
        self.assertTrue(math.isfinite(tally.nll.value))
        # Finite batches see a slightly-better-than-uniform model, so the total sits below uniform.
        self.assertLess(tally.nll.value, tally.covered_bytes * math.log(256))

    def test_first_batch_nonfinite_reports_the_replacement(self) -> None:
        class Nan(support.Uniform):
            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                return super().forward(tokens) * float("nan")

        stream = make_stream(support.TEXT * 4)
        drain(stream, Nan())
        self.assertEqual(stream.tally.first_batch_loss, math.log(256))
        self.assertEqual(stream.tally.nonfinite_batches, stream.tally.batches)


class Shapes(unittest.TestCase):
    def test_wrong_output_shape_is_named_and_recorded(self) -> None:
        class Flat(support.Uniform):
            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                return super().forward(tokens)[:, :, :10]

        stream = make_stream(support.TEXT * 4)
        with self.assertRaisesRegex(harness_stream.HarnessError, r"shape \[4, 32, 10\]; expected \[4, 32, 256\]"):
            drain(stream, Flat())
        self.assertIsNotNone(stream.error)

    def test_holdout(self) -> None:
        tally = harness_stream.score_holdout(
            support.Uniform(), support.TEXT * 3, vocab_size=256, sequence_length=32, batch_size=4, device="cpu"
        )
        self.assertEqual(tally.nll.value, tally.covered_bytes * math.log(256))
        self.assertEqual(tally.covered_bytes, ((len(support.TEXT) * 3 - 1) // 31) * 31)


if __name__ == "__main__":
    unittest.main()
