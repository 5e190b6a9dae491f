"""The scored function: traced models evaluated by the scorer's interpreter, and what it refuses."""

from __future__ import annotations

import copy
import unittest

import torch

import harness_graph
from harness_graph import GraphError, ScoredFunction, export_function
from tests import support


def state_of(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    tensors = {name: p.detach().clone() for name, p in model.named_parameters()}
    tensors.update({name: b.detach().clone() for name, b in model.named_buffers()})
    return tensors


def scored(model: torch.nn.Module, seq_len: int = 32) -> tuple[ScoredFunction, dict[str, torch.Tensor]]:
    graph, constants = export_function(model, seq_len, "cpu")
    return ScoredFunction(graph, constants, device="cpu"), state_of(model)


class TinyTransformer(torch.nn.Module):
    """One causal attention block, in the style of the example bundle."""

    def __init__(self, width: int = 32, heads: int = 4, max_len: int = 32) -> None:
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(256, width)
        self.position = torch.nn.Parameter(torch.randn(max_len, width) * 0.02)
        self.norm = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 64), torch.nn.GELU(), torch.nn.Linear(64, width))
        self.head = torch.nn.Linear(width, 256)
        self.register_buffer("mask", torch.triu(torch.ones(max_len, max_len, dtype=torch.bool), 1), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        batch, length = tokens.shape
        x = self.embed(tokens) + self.position[:length]
        q, k, v = self.qkv(self.norm(x)).split(x.shape[-1], dim=-1)
        shape = (batch, length, self.heads, x.shape[-1] // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / 8.0
        scores = scores.masked_fill(self.mask[:length, :length], float("-inf"))
        x = x + (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, length, -1)
        return self.head(x + self.mlp(x))


class CausalConv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(256, 16)
        self.conv = torch.nn.Conv1d(16, 16, 3)
        self.norm = torch.nn.BatchNorm1d(16)
        self.head = torch.nn.Linear(16, 256)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens).transpose(1, 2)
        x = torch.nn.functional.pad(x, (2, 0))
        x = torch.relu_(self.norm(self.conv(x)))
        return self.head(x.transpose(1, 2))


class Recurrent(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(256, 16)
        self.rnn = torch.nn.GRU(16, 24, batch_first=True)
        self.head = torch.nn.Linear(24, 256)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


class Counter(support.Causal):
    """Tries to keep state between calls: a buffer bumped in place on every forward."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(1))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1.0)
        return super().forward(tokens) + self.calls


class Equivalence(unittest.TestCase):
    def test_models_evaluate_exactly_as_in_pytorch(self) -> None:
        torch.manual_seed(5)
        rows = torch.randint(0, 256, (1, 32))
        for model in (support.Causal(), support.Unigram(torch.full((256,), 1 / 256)), TinyTransformer(), CausalConv(), Recurrent()):
            with self.subTest(type(model).__name__):
                model.train()  # the trace is taken in eval mode whatever the bundle left
                function, state = scored(model)
                with torch.no_grad():
                    expected = copy.deepcopy(model).eval()(rows)
                    got = function(rows, state)
                self.assertEqual(got.shape, (1, 32, 256))
                self.assertTrue(torch.equal(got, expected), float((got - expected).abs().max()))
                self.assertTrue(model.training)

    def test_the_function_keeps_no_state_between_calls(self) -> None:
        model = Counter()
        function, state = scored(model)
        before = {name: t.clone() for name, t in state.items()}
        rows = torch.randint(0, 256, (1, 32))
        with torch.no_grad():
            first = function(rows, state)
            second = function(rows, state)
        self.assertTrue(torch.equal(first, second))
        for name, tensor in state.items():
            self.assertTrue(torch.equal(tensor, before[name]), name)

    def test_state_is_read_by_name_each_call(self) -> None:
        model = support.Causal()
        function, state = scored(model)
        rows = torch.randint(0, 256, (1, 32))
        with torch.no_grad():
            first = function(rows, state)
            changed = dict(state, **{"head.bias": state["head.bias"] + 1.0})
            self.assertTrue(torch.allclose(function(rows, changed), first + 1.0))
        self.assertEqual(harness_graph.check_state(function, state), 256 * 16 + 16 * 256 + 256)
        with self.assertRaisesRegex(GraphError, "head.weight is missing"):
            harness_graph.check_state(function, {k: v for k, v in state.items() if k != "head.weight"})


class Refusals(unittest.TestCase):
    def refused(self, forward: str, pattern: str) -> None:
        namespace: dict[str, object] = {"torch": torch, "support": support}
        exec(  # noqa: S102  the models under test
            "class M(support.Causal):\n    def forward(self, tokens):\n" + "".join(f"        {line}\n" for line in forward.splitlines()),
            namespace,
        )
        model = namespace["M"]()  # type: ignore[operator]
        with self.assertRaisesRegex(GraphError, pattern):
            scored(model)

    def test_operators_outside_the_pure_set(self) -> None:
        cases = {
            "return super().forward(tokens) + torch.empty(1)": "aten::empty",
            "return super().forward(tokens) + torch.rand(1)": "aten::rand",
            "return super().forward(tokens) * torch.bernoulli(torch.full((1,), 0.5))": "aten::bernoulli",
            "return super().forward(tokens) + torch.randn_like(super().forward(tokens))": "aten::randn_like",
            "x = super().forward(tokens)\nreturn x.as_strided((1, 32, 256), (1, 1, 1))": "aten::as_strided",
            "x = super().forward(tokens)\nreturn x + x.new_empty(1)": "aten::new_empty",
        }
        for forward, pattern in cases.items():
            with self.subTest(pattern):
                self.refused(forward, pattern)

    def test_dropout_in_training_mode_is_refused_at_evaluation(self) -> None:
        class Drop(support.Causal):
            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                return torch.nn.functional.dropout(super().forward(tokens), 0.5, training=True)

        function, state = scored(Drop())
        with self.assertRaisesRegex(GraphError, "training mode"):
            function(torch.zeros(1, 32, dtype=torch.int64), state)

    def test_malformed_graphs(self) -> None:
        graph, constants = export_function(support.Causal(), 32, "cpu")
        first_aten = next(i for i, n in enumerate(graph["nodes"]) if n["op"].startswith("aten::"))

        def changed(change: object) -> dict[str, object]:
            copy_ = copy.deepcopy(graph)
            change(copy_)  # type: ignore[operator]
            return copy_

        cases = {
            "version": (lambda g: g.update(version=99), "another version"),
            "unknown op": (lambda g: g["nodes"][first_aten].update(op="aten::system"), "aten::system"),
            "from_file": (lambda g: g["nodes"][first_aten].update(op="aten::from_file", overload="default"), "aten::from_file"),
            "prim op": (lambda g: g["nodes"][first_aten].update(op="prim::PythonOp"), "prim::PythonOp"),
            "arity": (lambda g: g["nodes"][first_aten]["in"].append(graph["input"]), "arguments"),
            "use before definition": (lambda g: g["nodes"][first_aten].update({"in": [10_000]}), "before it is computed"),
            "defined twice": (lambda g: g["nodes"].append(copy.deepcopy(g["nodes"][first_aten])), "twice"),
            "bad overload": (lambda g: g["nodes"][first_aten].update(overload="../x"), "malformed overload"),
            "unknown overload": (lambda g: g["nodes"][first_aten].update(overload="nope"), "not an operator"),
            "no output": (lambda g: g.update(output=99_999), "never computed"),
            "constant kind": (lambda g: g["nodes"].append({"op": "constant", "value": {"t": "pickle", "v": "x"}, "out": [88_888]}), "not one the scorer takes"),
            "missing constant tensor": (lambda g: g["nodes"].append({"op": "constant", "value": {"t": "tensor", "v": "constant:9"}, "out": [88_888]}), "did not send"),
            "too many nodes": (lambda g: g.update(nodes=[{"op": "constant", "value": {"t": "none"}, "out": [i]} for i in range(harness_graph.NODE_LIMIT + 1)]), "at most"),
        }
        for name, (change, pattern) in cases.items():
            with self.subTest(name):
                with self.assertRaisesRegex(GraphError, pattern):
                    ScoredFunction(changed(change), constants, device="cpu")

    def test_out_overloads_that_write_into_a_tensor_are_refused(self) -> None:
        # `torch.add(x, 1, out=buffer)` traces as aten::add.out: an allowed name whose overload
        # writes into the model's own tensor, which would carry state from one call to the next.
        class OutWriter(Counter):
            def forward(self, tokens: torch.Tensor) -> torch.Tensor:
                torch.add(self.calls, 1.0, out=self.calls)
                return support.Causal.forward(self, tokens) + self.calls

        graph, _ = export_function(OutWriter(), 32, "cpu")
        self.assertIn(("aten::add", "out"), [(n["op"], n.get("overload")) for n in graph["nodes"]])
        with self.assertRaisesRegex(GraphError, r"^aten::add\.out writes into its argument out"):
            scored(OutWriter())

    def test_in_place_writes_run_as_their_functional_twin(self) -> None:
        graph, constants = export_function(Counter(), 32, "cpu")
        kinds = {n["op"] for n in graph["nodes"]}
        self.assertIn("aten::add_", kinds)  # what the trace recorded...
        function = ScoredFunction(graph, constants, device="cpu")
        self.assertTrue(all(step.call is None or "add_" not in str(step.call) for step in function.steps))


if __name__ == "__main__":
    unittest.main()
