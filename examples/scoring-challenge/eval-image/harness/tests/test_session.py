"""The scorer's side of the protocol, driven by a hand-written peer: order, refusals, budgets."""

from __future__ import annotations

import json
import os
import struct
import threading
import unittest
from typing import Any

import torch

import harness_stream
import harness_wire
import run
from harness_graph import export_function
from tests import support

CONFIG = {
    "seed": 1337,
    "vocab_size": 256,
    "sequence_length": 32,
    "batch_size": 4,
    "token_budget": 1 << 20,
    "step_budget": 1 << 20,
    "memory_mb": 0,
    "stream_sha256": "0" * 64,
    "holdout_sha256": "0" * 64,
    "device": "cpu",
}


class Peer:
    """A scorer in a thread, and this test as the bundle's process on the other end of two pipes."""

    def __init__(self, test: unittest.TestCase, **config: Any) -> None:
        self.report = run.empty_report(dict(CONFIG, **config))
        self.scorer = run.Scorer(dict(CONFIG, **config), support.TEXT * 8, support.TEXT * 2, "cpu", self.report, threads=1)
        to_scorer_r, to_scorer_w = os.pipe()
        from_scorer_r, from_scorer_w = os.pipe()
        self.outbound = os.fdopen(to_scorer_w, "wb")
        self.inbound = os.fdopen(from_scorer_r, "rb")
        self.error: BaseException | None = None
        scorer_in, scorer_out = os.fdopen(to_scorer_r, "rb"), os.fdopen(from_scorer_w, "wb")

        def serve() -> None:
            try:
                self.scorer.converse(scorer_in, scorer_out)
            except BaseException as error:  # noqa: BLE001  examined by the test
                self.error = error
            finally:
                scorer_out.close()
                scorer_in.close()

        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        test.addCleanup(self.close)
        hello = self.receive()
        test.assertEqual(hello.kind, "hello")
        self.hello = hello.fields

    def send(self, kind: str, fields: dict[str, Any] | None = None, tensors: dict[str, torch.Tensor] | None = None) -> None:
        harness_wire.send(self.outbound, kind, fields, tensors)

    def receive(self) -> harness_wire.Message:
        return harness_wire.receive(self.inbound, payload_limit=1 << 30)

    def finish(self) -> BaseException | None:
        self.outbound.close()
        self.thread.join(timeout=60)
        return self.error

    def close(self) -> None:
        for end in (self.outbound, self.inbound):
            try:
                end.close()
            except OSError:
                pass
        self.thread.join(timeout=60)

    def register(self, model: torch.nn.Module, graph_id: int = 0, seq_len: int = 32, probe: bool = True) -> dict[str, torch.Tensor]:
        """Send a model; the first one at the full row length also makes the step-0 probe, as trainer.py does."""
        graph, constants = export_function(model, seq_len, "cpu")
        self.send("model", {"graph_id": graph_id, "seq_len": seq_len, "graph": graph}, constants)
        reply = self.receive()
        assert reply.kind == "ok", reply.fields
        state = {name: t.detach() for name, t in list(model.named_parameters()) + list(model.named_buffers())}
        if probe and seq_len == CONFIG["sequence_length"] and self.scorer.first_batch_loss is None:
            self.send("probe", {"graph_id": graph_id}, state)
            reply = self.receive()
            assert reply.kind == "ok", reply.fields
        return state


class Protocol(unittest.TestCase):
    def test_a_batch_is_charged_before_it_is_handed_over(self) -> None:
        peer = Peer(self)
        self.assertEqual(peer.hello["sequence_length"], 32)
        self.assertNotIn("stream_sha256", peer.hello)  # nothing about the data beyond its shape
        state = peer.register(support.Uniform())
        for step in range(3):
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 32}, state)
            reply = peer.receive()
            self.assertEqual(reply.kind, "batch")
            # When the tokens arrive, their cost is already in the account.
            self.assertEqual(peer.scorer.tally.batches, step + 1)
            self.assertEqual(peer.scorer.tally.tokens, (step + 1) * reply.tensors["tokens"].numel())
        self.assertEqual(peer.scorer.tally.nll.value, peer.scorer.tally.covered_bytes * support.LN256)
        self.assertIsInstance(peer.finish(), EOFError)

    def test_the_pass_ends_with_end_and_done_scores_the_holdout(self) -> None:
        peer = Peer(self, step_budget=2)
        state = peer.register(support.Uniform())
        kinds = []
        for _ in range(3):
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 32}, state)
            kinds.append(peer.receive().kind)
        self.assertEqual(kinds, ["batch", "batch", "end"])
        peer.send("done", {"graph_id": 0}, state)
        self.assertIsNone(peer.finish())
        holdout = peer.report["holdout"]
        self.assertEqual(holdout["nll_nats"], holdout["covered_bytes"] * support.LN256)
        self.assertEqual(holdout["covered_bytes"], harness_stream.holdout_rows(support.TEXT * 2, 32).shape[0] * 31)

    def test_the_step_0_probe_is_in_the_harness_shape_whatever_the_bundle_asks(self) -> None:
        # A first batch of one 2-byte row would weigh a single prediction: the probe is the run's
        # batch_size rows at the full row length, on the model as sent before any batch.
        peer = Peer(self)
        model = support.Causal()
        state = peer.register(model)
        expected = peer.scorer.first_batch_loss
        assert expected is not None
        rows = harness_stream.rows(peer.scorer.cursor.data, 0, 4, 32)
        with torch.no_grad():
            losses = torch.cat([harness_stream.target_nll(model(rows[i : i + 1]), rows[i : i + 1]) for i in range(4)])
        self.assertAlmostEqual(expected, float(losses.mean()), places=9)
        graph, constants = export_function(model, 2, "cpu")
        peer.send("model", {"graph_id": 1, "seq_len": 2, "graph": graph}, constants)
        self.assertEqual(peer.receive().kind, "ok")
        peer.send("batch", {"graph_id": 1, "batch_size": 1, "seq_len": 2}, state)
        self.assertEqual(peer.receive().kind, "batch")
        self.assertEqual(peer.scorer.first_batch_loss, expected)
        self.assertIsInstance(peer.finish(), EOFError)

    def test_holdout_rows_are_evaluated_beside_the_batches(self) -> None:
        peer = Peer(self, step_budget=4)
        state = peer.register(support.Uniform())
        rows = peer.scorer.holdout_rows.shape[0]
        seen = []
        for _ in range(4):
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 32}, state)
            self.assertEqual(peer.receive().kind, "batch")
            seen.append(peer.scorer.shadowed)
        # A quarter of the holdout after each of the four steps of the step budget.
        self.assertEqual(seen, [rows // 4, rows // 2, (3 * rows) // 4, rows])
        self.assertIsInstance(peer.finish(), EOFError)

    def refusal(self, steps: Any, stage: str, pattern: str, **config: Any) -> None:
        peer = Peer(self, **config)
        steps(peer)
        error = peer.finish()
        self.assertIsInstance(error, run.StageError)
        assert isinstance(error, run.StageError)
        self.assertEqual(error.stage, stage)
        self.assertRegex(error.message, pattern)

    def test_refusals(self) -> None:
        def unknown_graph(peer: Peer) -> None:
            peer.send("batch", {"graph_id": 7, "batch_size": 4, "seq_len": 32}, {})

        def bad_size(peer: Peer) -> None:
            state = peer.register(support.Uniform())
            peer.send("batch", {"graph_id": 0, "batch_size": 5000, "seq_len": 32}, state)

        def longer_rows(peer: Peer) -> None:
            state = peer.register(support.Uniform())
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 64}, state)

        def other_length(peer: Peer) -> None:
            state = peer.register(support.Uniform(), seq_len=16)
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 32}, state)

        def missing_state(peer: Peer) -> None:
            peer.register(support.Causal())
            peer.send("batch", {"graph_id": 0, "batch_size": 4, "seq_len": 32}, {})

        def garbage(peer: Peer) -> None:
            peer.outbound.write(b"\xff" * 12 + b"nonsense")
            peer.outbound.flush()

        def too_large(peer: Peer) -> None:
            peer.register(support.Uniform())
            # Only the header: the scorer must refuse before it reads (or waits for) the payload.
            header = json.dumps(
                {
                    "kind": "batch",
                    "fields": {"graph_id": 0, "batch_size": 4, "seq_len": 32},
                    "tensors": [{"name": "w", "dtype": "float32", "shape": [run.PARAM_CAP + 1], "offset": 0, "nbytes": 4 * (run.PARAM_CAP + 1)}],
                }
            ).encode()
            peer.outbound.write(struct.pack(">IQ", len(header), 4 * (run.PARAM_CAP + 1)) + header)
            peer.outbound.flush()

        def same_id_twice(peer: Peer) -> None:
            peer.register(support.Uniform())
            graph, constants = export_function(support.Uniform(), 32, "cpu")
            peer.send("model", {"graph_id": 0, "seq_len": 32, "graph": graph}, constants)

        def bad_graph(peer: Peer) -> None:
            peer.send("model", {"graph_id": 0, "seq_len": 32, "graph": {"version": 1, "nodes": "x"}}, {})

        def batch_before_probe(peer: Peer) -> None:
            state = peer.register(support.Uniform(), probe=False)
            peer.send("batch", {"graph_id": 0, "batch_size": 1, "seq_len": 32}, state)

        def probe_twice(peer: Peer) -> None:
            state = peer.register(support.Uniform())
            peer.send("probe", {"graph_id": 0}, state)

        def probe_after_a_batch(peer: Peer) -> None:
            peer.scorer.first_batch_loss = None  # as if the scorer had lost it: a batch was charged
            peer.scorer.tally.batches = 1
            state = peer.register(support.Uniform(), probe=False)
            peer.send("probe", {"graph_id": 0}, state)

        def short_probe(peer: Peer) -> None:
            state = peer.register(support.Uniform(), seq_len=2)
            peer.send("probe", {"graph_id": 0}, state)

        def unknown_kind(peer: Peer) -> None:
            peer.send("score", {"bpb": 0.0})

        def claimed_stage(peer: Peer) -> None:
            peer.send("failed", {"stage": "corpus", "message": "not mine"})

        cases = [
            (unknown_graph, "graph", "never sent"),
            (bad_size, "train", "batch_size must be"),
            (longer_rows, "train", r"seq_len must be an integer in 2\.\.32"),
            (other_length, "graph", "traced for 16"),
            (missing_state, "graph", "is missing"),
            (garbage, "train", "broke the protocol"),
            (too_large, "budget", "over the cap"),
            (same_id_twice, "graph", "twice"),
            (bad_graph, "graph", "list of at most"),
            (unknown_kind, "train", "unknown message"),
            (batch_before_probe, "train", "before the step-0 probe"),
            (probe_twice, "train", "probe twice"),
            (probe_after_a_batch, "train", "after a batch"),
            (short_probe, "graph", "full row length"),
            # The bundle's process cannot blame the platform: an unknown stage is its own train.
            (claimed_stage, "train", "not mine"),
        ]
        for steps, stage, pattern in cases:
            with self.subTest(steps.__name__):
                self.refusal(steps, stage, pattern)


if __name__ == "__main__":
    unittest.main()
