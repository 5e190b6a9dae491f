"""Twins with secret cuts: causal models pass, models that read a later byte are caught."""

from __future__ import annotations

import unittest

import torch

import harness_causality
from tests import support


def check_rows(model: torch.nn.Module, rows: torch.Tensor, twins: harness_causality.Twins) -> bool:
    with torch.no_grad():
        for index in range(rows.shape[0]):
            row = rows[index : index + 1]
            twin, cut = twins.twin(row)
            if not twins.compare(model(row), model(twin), cut):
                return False
    return True


def text_rows(count: int = 64, length: int = 32) -> torch.Tensor:
    data = torch.tensor(list(support.TEXT * 8), dtype=torch.int64)
    return torch.stack([data[i * 7 : i * 7 + length] for i in range(count)])


class Twins(unittest.TestCase):
    def test_causal_model_passes_every_twin(self) -> None:
        torch.manual_seed(1)
        twins = harness_causality.Twins(256)
        self.assertTrue(check_rows(support.Causal(), text_rows(), twins))
        self.assertEqual(twins.to_json()["checked_rows"], 64)
        self.assertEqual(twins.max_delta, 0.0)

    def test_models_that_look_ahead_are_caught(self) -> None:
        torch.manual_seed(1)
        for model in (support.PeekNext(), support.PeekLast()):
            with self.subTest(type(model).__name__):
                twins = harness_causality.Twins(256)
                self.assertFalse(check_rows(model, text_rows(), twins))
                self.assertFalse(twins.ok)
                self.assertGreater(twins.max_delta, harness_causality.TOLERANCE)
                # Caught on the first rows: a one-byte look moves the logit just before any cut.
                self.assertLessEqual(twins.checked_rows, 2)

    def test_a_twin_keeps_the_prefix_and_changes_every_later_byte(self) -> None:
        twins = harness_causality.Twins(256, seed=b"fixed seed for this test")
        row = text_rows(1)
        cuts = set()
        for _ in range(2000):
            twin, cut = twins.twin(row)
            cuts.add(cut)
            self.assertTrue(torch.equal(twin[:, :cut], row[:, :cut]))
            self.assertTrue(bool((twin[:, cut:] != row[:, cut:]).all()))
        self.assertEqual(cuts, set(range(1, 32)))  # every position can be the cut

    def test_cuts_are_secret_per_run(self) -> None:
        # Seeded from the OS: two runs of the same bundle draw different cuts (1 in 31**16 to tie).
        row = text_rows(1)
        runs = [[t.twin(row)[1] for _ in range(16)] for t in (harness_causality.Twins(256), harness_causality.Twins(256))]
        self.assertNotEqual(runs[0], runs[1])

    def test_a_value_turning_non_finite_is_a_move(self) -> None:
        a = torch.zeros(1, 4, 3)
        b = a.clone()
        b[0, 1, 2] = float("nan")
        self.assertGreater(harness_causality.max_move(a, b), 1e300)
        self.assertEqual(harness_causality.max_move(b, b.clone()), 0.0)


if __name__ == "__main__":
    unittest.main()
