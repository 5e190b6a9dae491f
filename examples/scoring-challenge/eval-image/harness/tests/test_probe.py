"""The causality probe: causal models pass, models that read later bytes are caught."""

from __future__ import annotations

import unittest

import torch

import harness_probe
from tests import support


def run_probe(model: torch.nn.Module, **kwargs: object) -> harness_probe.ProbeResult:
    torch.manual_seed(0)
    return harness_probe.probe(model, seq_len=32, vocab_size=256, seed=1337, device="cpu", **kwargs)  # type: ignore[arg-type]


class Probe(unittest.TestCase):
    def test_causal_model_passes(self) -> None:
        torch.manual_seed(1)
        result = run_probe(support.Causal())
        self.assertTrue(result.ok)
        self.assertEqual(result.max_delta, 0.0)
        cuts = harness_probe.cut_positions(32)
        self.assertEqual(cuts, [1, 2, 8, 16, 24, 31])
        self.assertEqual(result.checked_positions, 4 * sum(cuts))

    def test_one_byte_lookahead_is_caught(self) -> None:
        torch.manual_seed(1)
        result = run_probe(support.PeekNext())
        self.assertFalse(result.ok)
        self.assertGreater(result.max_delta, harness_probe.TOLERANCE)

    def test_whole_row_pooling_is_caught(self) -> None:
        torch.manual_seed(1)
        result = run_probe(support.PeekLast())
        self.assertFalse(result.ok)

    def test_seen_rows_are_probed_too(self) -> None:
        seen = torch.tensor([list(support.TEXT[:32]), list(support.TEXT[32:64])])
        rows = harness_probe.probe_rows(32, 256, 5, seen)
        self.assertEqual(rows.shape, (6, 32))
        self.assertTrue(torch.equal(rows[4:], seen))
        torch.manual_seed(1)
        self.assertEqual(run_probe(support.Causal(), seen=seen).checked_positions, 6 * sum(harness_probe.cut_positions(32)))

    def test_probe_restores_train_mode(self) -> None:
        model = support.Causal()
        model.train()
        run_probe(model)
        self.assertTrue(model.training)

    def test_nan_everywhere_is_not_a_move(self) -> None:
        class Nan(support.Causal):
            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                return super().forward(tokens) * float("nan")

        self.assertTrue(run_probe(Nan()).ok)

    def test_turning_nonfinite_is_a_move(self) -> None:
        a = torch.zeros(1, 3, 4)
        b = a.clone()
        b[0, 1, 2] = float("inf")
        self.assertGreater(harness_probe.max_move(a, b), 1e300)
        self.assertEqual(harness_probe.max_move(b, b.clone()), 0.0)

    def test_merge(self) -> None:
        merged = harness_probe.ProbeResult(True, 0.0, 10).merge(harness_probe.ProbeResult(False, 2.5, 5))
        self.assertEqual(merged.to_json(), {"ok": False, "max_delta": 2.5, "checked_positions": 15})


if __name__ == "__main__":
    unittest.main()
