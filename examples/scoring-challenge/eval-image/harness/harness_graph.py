"""The scored function: a bundle's model as data, evaluated by the scorer's own interpreter.

The bundle's process traces its model (`torch.jit.trace`, eval mode, one row of the requested
length) and sends the graph as plain data: nodes naming aten operators, constants, and the
model's tensors by name. The scorer never imports, unpickles or runs any of the bundle's
Python: it checks every node against `ALLOWED_OPS` (pure tensor arithmetic: nothing that reads a
file, the clock, a random generator or uninitialised memory, and nothing that writes into its
arguments) and executes the graph itself through `torch.ops.aten`. The result is a pure
function of (row, tensors): it keeps no state from one call to the next, so the scorer can ask
it the same question twice, once with the true continuation of a row and once without, and
compare (harness_causality.py). Python control flow and Python-side state in the model's
`forward` are frozen into the trace; the model still trains as ordinary Python in its own
process.

`export_function` runs in the bundle's process (untrusted: a bundle may send any graph it
likes; the scorer's checks are what count). `ScoredFunction` runs in the scorer.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

GRAPH_VERSION = 1
NODE_LIMIT = 200_000

# Pure aten operators the scorer evaluates. A name here is looked up as torch.ops.aten.<name>;
# its overloads are accepted unless their schema writes into an argument. In-place spellings
# (relu_, add_, masked_fill_) run as their functional twin (relu, add, masked_fill).
ALLOWED_OPS = frozenset(
    """
    abs acos add addbmm addcdiv addcmul addmm addmv alias all amax amin any arange argmax argmin
    argsort asin atan atan2 baddbmm batch_norm bitwise_and bitwise_not bitwise_or bitwise_xor
    bmm broadcast_tensors cat ceil celu chunk clamp clamp_max clamp_min clip clone
    constant_pad_nd contiguous conv1d conv2d _convolution convolution cos cosh cummax cummin
    cumprod cumsum detach diag diagonal div dot dropout einsum elu embedding eq erf erfc exp exp2
    expand expand_as expm1 eye feature_dropout flatten flip floor floor_divide fmod frac full
    full_like gather ge gelu glu group_norm gru gt hardsigmoid hardswish hardtanh hypot index
    index_select isfinite isinf isnan layer_norm le leaky_relu lerp lift_fresh linear linspace log
    log10 log1p log2 log_sigmoid lstm log_softmax logical_and logical_not logical_or logical_xor logit
    logsumexp lt masked_fill matmul max maximum mean min minimum mish mm movedim mul mv
    nan_to_num narrow ne neg new_full new_ones new_zeros norm numel one_hot ones ones_like outer
    pad permute pow prelu prod reciprocal relu relu6 remainder repeat repeat_interleave reshape
    reshape_as rnn_relu rnn_tanh roll round rsqrt rsub scalar_tensor select selu sigmoid sign silu sin sinh slice
    softmax softplus sort split split_with_sizes sqrt square squeeze stack std sub sum swapaxes t
    take_along_dim tanh tensor tensor_split tile to topk transpose tril triu true_divide trunc
    type_as unbind unflatten unsqueeze var view view_as where xlogy zeros zeros_like
    size dim Int Float Bool ScalarImplicit item __and__ __or__ __xor__ __not__
    """.split()
)

# Operators that update their arguments when a flag says "training": allowed only with the flag
# off (the scored function is always the model in eval mode).
_TRAINING_FLAGS = {
    "dropout": "train",
    "feature_dropout": "train",
    "batch_norm": "training",
    "lstm": "train",
    "gru": "train",
    "rnn_tanh": "train",
    "rnn_relu": "train",
}

# prim nodes a traced forward contains, each a pure data shuffle.
_PRIM_OPS = frozenset(
    {
        "prim::ListConstruct",
        "prim::ListUnpack",
        "prim::TupleConstruct",
        "prim::TupleUnpack",
        "prim::NumToTensor",
        "prim::device",
        "prim::dtype",
    }
)


class GraphError(Exception):
    """The graph cannot be exported or is not one the scorer evaluates; the message says why."""


# ---------------------------------------------------------------------------------------------
# The bundle's side: trace and describe.


def _encode_constant(value: Any, tensors: dict[str, torch.Tensor]) -> Any:
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, int):
        return {"t": "int", "v": value}
    if isinstance(value, float):
        return {"t": "float", "v": repr(value)}
    if isinstance(value, str):
        return {"t": "str", "v": value}
    if isinstance(value, torch.device):
        return {"t": "device", "v": str(value)}
    if isinstance(value, torch.dtype):
        return {"t": "dtype", "v": str(value).replace("torch.", "")}
    if isinstance(value, torch.Tensor):
        name = f"constant:{len(tensors)}"
        tensors[name] = value.detach()
        return {"t": "tensor", "v": name}
    if isinstance(value, (list, tuple)):
        return {"t": "list", "v": [_encode_constant(item, tensors) for item in value]}
    raise GraphError(f"the traced forward holds a constant of type {type(value).__name__}, which the scorer does not take")


def export_function(model: torch.nn.Module, seq_len: int, device: str) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Trace `model` in eval mode on one row of `seq_len` tokens; the graph and its constants."""
    was_training = model.training
    example = torch.zeros(1, seq_len, dtype=torch.int64, device=device)
    model.eval()
    try:
        with torch.no_grad():
            traced = torch.jit.trace(model, example, check_trace=False, strict=False)
    finally:
        model.train(was_training)
    graph = traced.inlined_graph
    inputs = list(graph.inputs())
    if len(inputs) != 2:
        raise GraphError(f"the model's forward takes {len(inputs) - 1} inputs; it must take one: the tokens")
    ids: dict[Any, int] = {}

    def vid(value: Any) -> int:
        if value not in ids:
            ids[value] = len(ids)
        return ids[value]

    paths: dict[Any, str] = {inputs[0]: ""}
    constants: dict[str, torch.Tensor] = {}
    nodes: list[dict[str, Any]] = []
    for node in graph.nodes():
        kind = node.kind()
        if list(node.blocks()):
            raise GraphError(f"the traced forward holds control flow ({kind}), which the scorer does not evaluate")
        if kind == "prim::GetAttr":
            parent = paths.get(node.input())
            if parent is None:
                raise GraphError("the traced forward reads an attribute of something that is not the model")
            name = node.s("name")
            path = f"{parent}.{name}" if parent else name
            output = node.output()
            if output.type().kind() == "TensorType":
                nodes.append({"op": "state", "name": path, "out": [vid(output)]})
            else:
                paths[output] = path  # a submodule: only the tensors under it become nodes
            continue
        if kind == "prim::Constant":
            value = node.output().toIValue() if node.hasAttributes() else None
            nodes.append({"op": "constant", "value": _encode_constant(value, constants), "out": [vid(node.output())]})
            continue
        entry: dict[str, Any] = {
            "op": kind,
            "in": [vid(value) for value in node.inputs()],
            "out": [vid(value) for value in node.outputs()],
        }
        if kind.startswith("aten::"):
            entry["overload"] = _overload_of(node)
        nodes.append(entry)
    outputs = list(graph.outputs())
    if len(outputs) != 1:
        raise GraphError("the model's forward must return one tensor of logits")
    return (
        {"version": GRAPH_VERSION, "input": vid(inputs[1]), "output": vid(outputs[0]), "nodes": nodes},
        constants,
    )


def _overload_of(node: Any) -> str:
    schema = node.schema()
    if schema == "(no schema)":
        raise GraphError(f"the traced forward calls {node.kind()} with no known schema")
    head = schema.split("(", 1)[0]
    return head.split(".", 1)[1] if "." in head else "default"


# ---------------------------------------------------------------------------------------------
# The scorer's side: check and evaluate.


def _decode_constant(entry: Any, tensors: dict[str, torch.Tensor], device: str) -> Any:
    if not isinstance(entry, dict):
        raise GraphError("a constant is malformed")
    kind, value = entry.get("t"), entry.get("v")
    if kind == "none":
        return None
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise GraphError(f"a float constant is malformed: {value[:40]!r}") from None
    if kind == "str" and isinstance(value, str) and len(value) <= 256:
        return value
    if kind == "device" and isinstance(value, str):
        # The scorer evaluates on its own device, whatever the trace saw.
        return torch.device(device)
    if kind == "dtype" and isinstance(value, str):
        dtype = getattr(torch, value, None)
        if not isinstance(dtype, torch.dtype):
            raise GraphError(f"a dtype constant is unknown: {value[:40]!r}")
        return dtype
    if kind == "tensor" and isinstance(value, str):
        if value not in tensors:
            raise GraphError(f"the graph names a constant tensor it did not send: {value[:80]}")
        return tensors[value].to(device)
    if kind == "list" and isinstance(value, list):
        return [_decode_constant(item, tensors, device) for item in value]
    raise GraphError(f"a constant of kind {str(kind)[:40]!r} is not one the scorer takes")


def _resolve(op: str, overload: Any) -> tuple[Callable[..., Any], list[tuple[str, bool]], str]:
    """torch.ops.aten.<name>.<overload>, its arguments (name, keyword-only) and the bare name."""
    name = op[len("aten::") :]
    base = name
    if name.endswith("_") and not name.endswith("__") and name[:-1] in ALLOWED_OPS:
        base = name[:-1]  # the functional twin of an in-place operator
    if base not in ALLOWED_OPS:
        raise GraphError(f"the model's forward uses {op}, which the scorer does not evaluate")
    if not isinstance(overload, str) or not overload.replace("_", "").isalnum():
        raise GraphError(f"{op} names a malformed overload")
    packet = getattr(torch.ops.aten, base, None)
    target = getattr(packet, overload, None) if packet is not None else None
    if target is None:
        raise GraphError(f"{op}.{overload} is not an operator the scorer knows")
    schema = target._schema
    for argument in schema.arguments:
        if argument.alias_info is not None and argument.alias_info.is_write:
            raise GraphError(f"{op}.{overload} writes into its argument {argument.name}; the scorer evaluates pure operators only")
    return target, [(a.name, a.kwarg_only) for a in schema.arguments], base


def _prim(op: str) -> Callable[..., Any]:
    if op == "prim::ListConstruct":
        return lambda *items: list(items)
    if op == "prim::TupleConstruct":
        return lambda *items: tuple(items)
    if op in ("prim::ListUnpack", "prim::TupleUnpack"):
        return lambda items: items
    if op == "prim::NumToTensor":
        return lambda number: torch.scalar_tensor(number)
    if op == "prim::device":
        return lambda tensor: tensor.device
    if op == "prim::dtype":
        return lambda tensor: tensor.dtype
    raise GraphError(f"the model's forward uses {op}, which the scorer does not evaluate")


class _Step:
    """One node, ready to run: a state read (`state`), an aten call (`names`) or a prim shuffle."""

    __slots__ = ("state", "call", "names", "inputs", "outputs", "unpack", "flag")

    def __init__(
        self,
        *,
        outputs: list[int],
        state: str | None = None,
        call: Callable[..., Any] | None = None,
        names: list[tuple[str, bool]] | None = None,
        inputs: list[int] | None = None,
        unpack: bool = False,
        flag: int | None = None,
    ) -> None:
        self.state = state
        self.call = call
        self.names = names
        self.inputs = inputs or []
        self.outputs = outputs
        self.unpack = unpack
        self.flag = flag


class ScoredFunction:
    """A checked graph: `logits = function(row, state)` for one row [1, T] of tokens."""

    def __init__(self, graph: Any, constants: dict[str, torch.Tensor], *, device: str) -> None:
        if not isinstance(graph, dict) or graph.get("version") != GRAPH_VERSION:
            raise GraphError("the graph is malformed or of another version")
        nodes = graph.get("nodes")
        if not isinstance(nodes, list) or len(nodes) > NODE_LIMIT:
            raise GraphError(f"the graph must hold a list of at most {NODE_LIMIT} nodes")
        self.device = device
        self.input = self._id(graph.get("input"))
        self.output = self._id(graph.get("output"))
        self.state_names: list[str] = []
        self.constants: dict[int, Any] = {}
        self.steps: list[_Step] = []
        self.constant_elements = sum(t.numel() for t in constants.values())
        defined = {self.input}
        for node in nodes:
            self._compile(node, constants, defined)
        if self.output not in defined:
            raise GraphError("the graph's output is never computed")

    @staticmethod
    def _id(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 4 * NODE_LIMIT:
            raise GraphError("the graph names a malformed value")
        return value

    def _define(self, outputs: Any, defined: set[int]) -> list[int]:
        if not isinstance(outputs, list):
            raise GraphError("a node's outputs are malformed")
        ids = [self._id(v) for v in outputs]
        for value in ids:
            if value in defined:
                raise GraphError("the graph defines a value twice")
            defined.add(value)
        return ids

    def _compile(self, node: Any, constants: dict[str, torch.Tensor], defined: set[int]) -> None:
        if not isinstance(node, dict) or not isinstance(node.get("op"), str):
            raise GraphError("a node is malformed")
        op = node["op"]
        if op == "state":
            name = node.get("name")
            if not isinstance(name, str) or not name or len(name) > 1024:
                raise GraphError("a state node names no tensor")
            (out,) = self._single(node, defined)
            self.steps.append(_Step(outputs=[out], state=name))
            self.state_names.append(name)
            return
        if op == "constant":
            (out,) = self._single(node, defined)
            self.constants[out] = _decode_constant(node.get("value"), constants, self.device)
            return
        inputs = node.get("in")
        if not isinstance(inputs, list):
            raise GraphError(f"{op[:80]} has malformed inputs")
        inputs = [self._id(v) for v in inputs]
        for value in inputs:
            if value not in defined:
                raise GraphError(f"{op[:80]} reads a value before it is computed")
        if op.startswith("aten::"):
            call, names, base = _resolve(op, node.get("overload"))
            if len(inputs) != len(names):
                raise GraphError(f"{op} takes {len(names)} arguments, the graph passes {len(inputs)}")
            flag = None
            if base in _TRAINING_FLAGS:
                flag = [n for n, _ in names].index(_TRAINING_FLAGS[base])
            outputs = self._define(node.get("out"), defined)
            self.steps.append(_Step(outputs=outputs, call=call, names=names, inputs=inputs, unpack=len(outputs) > 1, flag=flag))
            return
        if op in _PRIM_OPS:
            call = _prim(op)
            outputs = self._define(node.get("out"), defined)
            unpack = op in ("prim::ListUnpack", "prim::TupleUnpack")
            if not unpack and len(outputs) != 1:
                raise GraphError(f"{op} has {len(outputs)} outputs")
            self.steps.append(_Step(outputs=outputs, call=call, inputs=inputs, unpack=unpack))
            return
        raise GraphError(f"the model's forward uses {op[:80]}, which the scorer does not evaluate")

    def _single(self, node: dict[str, Any], defined: set[int]) -> list[int]:
        outputs = self._define(node.get("out"), defined)
        if len(outputs) != 1:
            raise GraphError(f"a {node['op']} node must have one output")
        return outputs

    def __call__(self, row: torch.Tensor, state: dict[str, torch.Tensor]) -> Any:
        values: dict[int, Any] = dict(self.constants)
        values[self.input] = row
        for step in self.steps:
            if step.state is not None:
                result = state[step.state]
            elif step.names is None:
                result = step.call(*[values[i] for i in step.inputs])
            else:
                args = []
                kwargs = {}
                for (name, keyword_only), index in zip(step.names, step.inputs):
                    if keyword_only:
                        kwargs[name] = values[index]
                    else:
                        args.append(values[index])
                if step.flag is not None and values[step.inputs[step.flag]] is not False:
                    raise GraphError("the traced forward runs a layer in training mode; the scorer evaluates eval mode only")
                result = step.call(*args, **kwargs)
            if step.unpack:
                items = list(result)
                if len(items) != len(step.outputs):
                    raise GraphError(f"unpacking {len(items)} values into {len(step.outputs)}")
                for index, item in zip(step.outputs, items):
                    values[index] = item
            else:
                values[step.outputs[0]] = result
        return values[self.output]


def check_state(function: ScoredFunction, state: dict[str, torch.Tensor]) -> int:
    """Every tensor the graph reads is present; the number of elements it reads (its size)."""
    missing = [name for name in function.state_names if name not in state]
    if missing:
        raise GraphError(f"the model's tensors do not match its graph: {missing[0][:200]} is missing")
    return sum(state[name].numel() for name in set(function.state_names)) + function.constant_elements

