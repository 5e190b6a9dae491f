"""The behaviour signature (harness_behaviour.py): the loss curve the copy check compares."""

from __future__ import annotations

import math
import unittest

import torch

from harness_behaviour import BUCKETS, LossCurve


class Curve(unittest.TestCase):
    def test_buckets_follow_stream_position_not_batches(self) -> None:
        # 640 predicted bytes in 64 buckets of 10; the same losses charged in batches of any shape.
        losses = torch.arange(640, dtype=torch.float64).reshape(10, 64) / 100.0
        one = LossCurve(640, 256)
        one.charge(losses)
        many = LossCurve(640, 256)
        for rows in torch.split(losses.reshape(-1), 37):
            many.charge(rows.reshape(1, -1))
        self.assertEqual(one.to_json(), many.to_json())
        signature = one.to_json()
        self.assertEqual(signature["bucket_bytes"], 10)
        self.assertEqual(len(signature["losses"]), BUCKETS)
        # Bucket b holds bytes 10b..10b+9: mean (10b + 4.5) / 100.
        self.assertEqual(signature["losses"][0], 0.045)
        self.assertEqual(signature["losses"][63], 6.345)

    def test_only_charged_buckets_and_bytes_past_the_plan_are_left_out(self) -> None:
        curve = LossCurve(6400, 256)
        curve.charge(torch.full((1, 250), 2.0, dtype=torch.float64))
        self.assertEqual(curve.to_json(), {"bucket_bytes": 100, "losses": [2.0, 2.0, 2.0]})
        past = LossCurve(64, 256)
        past.charge(torch.full((1, 100), 1.0, dtype=torch.float64))
        self.assertEqual(past.to_json()["losses"], [1.0] * BUCKETS)

    def test_a_nonfinite_batch_counts_at_the_uniform_cost(self) -> None:
        curve = LossCurve(64, 256)
        curve.charge(torch.tensor([[float("nan")] * 64], dtype=torch.float64))
        self.assertEqual(curve.to_json()["losses"], [round(math.log(256), 6)] * BUCKETS)

    def test_an_empty_run_has_an_empty_curve(self) -> None:
        self.assertEqual(LossCurve(0, 256).to_json(), {"bucket_bytes": 1, "losses": []})


if __name__ == "__main__":
    unittest.main()
