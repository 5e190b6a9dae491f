"""The bundle's process: imports the bundle, builds and trains its model, asks for each batch.

Started by the scorer (run.py) with a clean environment, the container's stderr as its stdout
and stderr, and two pipes to the scorer as its only other descriptors. Before any bundle code is
imported it installs a seccomp filter on itself: no process can be started from here (threads
can), which the scorer checks in /proc before it serves anything. Nothing in this process
is trusted: the bundle runs here and can change anything in it, this file included. What the
scorer accepts from it is data (harness_wire.py), and a batch reaches it only after the scorer
has charged the model's predictions for it. The protocol, from this side:

  <- hello {ctx}                       the run's settings
  -> model {graph_id, seq_len} + graph a model's forward, traced (harness_graph.py); once per
                                       model object and row length, again if its tensors change
  -> probe {graph_id} + tensors        the model as build_model made it, at the full row length:
                                       the step-0 check, before train(ctx); no batch before it
  -> batch {graph_id, batch_size, seq_len} + the model's tensors
  <- batch + tokens | end | error {message}
  -> done {graph_id} + tensors         train() returned: the holdout is scored with these
  -> failed {stage, message}           the bundle raised (import, build_model, train, graph)
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import traceback
from types import SimpleNamespace
from typing import Any, Iterator

sys.dont_write_bytecode = True
# Before torch loads OpenMP: idle worker threads sleep instead of spinning (harness_runtime).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import harness_process  # noqa: E402
import harness_runtime  # noqa: E402  (it sets the environment torch reads, before torch loads)
import harness_wire  # noqa: E402
import torch  # noqa: E402

from harness_graph import GraphError, export_function  # noqa: E402

# What the scorer sends back is small (a batch of tokens); the cap only bounds a broken peer.
_REPLY_LIMIT = 1 << 30


class HarnessError(Exception):
    """A problem the harness found in the bundle's behaviour (bad arguments, a refused model)."""


class Batch:
    """What a bundle receives: `.tokens`, a LongTensor [B, T] of byte values on ctx.device."""

    __slots__ = ("tokens",)

    def __init__(self, tokens: torch.Tensor) -> None:
        self.tokens = tokens

    def __repr__(self) -> str:
        return f"Batch(tokens={tuple(self.tokens.shape)})"


def describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def model_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter and buffer by its dotted name, as the traced graph reads them."""
    tensors = {name: p.detach() for name, p in model.named_parameters()}
    tensors.update({name: b.detach() for name, b in model.named_buffers()})
    return tensors


def signature(tensors: dict[str, torch.Tensor]) -> list[tuple[str, tuple[int, ...], str]]:
    return sorted((name, tuple(t.shape), str(t.dtype)) for name, t in tensors.items())


class Session:
    """This side of the conversation with the scorer."""

    def __init__(self, inbound: Any, outbound: Any) -> None:
        self.inbound = inbound
        self.outbound = outbound
        self.models: list[torch.nn.Module] = []  # kept alive: graph ids are indexes into this
        # (model index, row length) -> (graph id, tensor signature, names the graph reads)
        self.graphs: dict[tuple[int, int], tuple[int, list[Any], list[str]]] = {}
        self.next_graph = 0
        self.last: tuple[torch.nn.Module, int] | None = None

    def send(self, kind: str, fields: dict[str, Any] | None = None, tensors: dict[str, torch.Tensor] | None = None) -> None:
        harness_wire.send(self.outbound, kind, fields, tensors)

    def receive(self) -> harness_wire.Message:
        return harness_wire.receive(self.inbound, payload_limit=_REPLY_LIMIT)

    def graph_for(self, model: torch.nn.Module, seq_len: int, device: str) -> tuple[int, dict[str, torch.Tensor]]:
        """The graph id of (model, seq_len), traced and sent when new or when its tensors changed."""
        if not any(model is m for m in self.models):
            self.models.append(model)
        index = next(i for i, m in enumerate(self.models) if m is model)
        tensors = model_tensors(model)
        shape = signature(tensors)
        known = self.graphs.get((index, seq_len))
        if known is not None and known[1] == shape:
            return known[0], {name: tensors[name] for name in known[2]}
        try:
            graph, constants = export_function(model, seq_len, device)
        except GraphError as error:
            raise HarnessError(str(error)) from None
        except Exception as error:
            raise HarnessError(f"the model's forward could not be traced: {describe(error)}") from None
        graph_id = self.next_graph
        self.next_graph += 1
        self.send("model", {"graph_id": graph_id, "seq_len": seq_len, "graph": graph}, constants)
        reply = self.receive()
        if reply.kind != "ok":
            raise HarnessError(str(reply.fields.get("message", "the scorer refused the model")))
        names = sorted({node["name"] for node in graph["nodes"] if node["op"] == "state"})
        self.graphs[(index, seq_len)] = (graph_id, shape, names)
        return graph_id, {name: tensors[name] for name in names}


class Feed:
    """ctx.iter_train_batches: each batch asked of the scorer, which charges it first."""

    def __init__(self, session: Session, config: dict[str, Any], device: str) -> None:
        self.session = session
        self.config = config
        self.device = device

    def iterate(self, model: Any, batch_size: Any = None, seq_len: Any = None, tokenizer: Any = None) -> Iterator[Batch]:
        if not isinstance(model, torch.nn.Module):
            raise HarnessError(f"iter_train_batches needs the model (a torch.nn.Module), got {type(model).__name__}")
        if tokenizer is not None:
            raise HarnessError("iter_train_batches: tokenizer is not supported: the harness is byte-level (vocab 256)")
        size = self.config["batch_size"] if batch_size is None else batch_size
        length = self.config["sequence_length"] if seq_len is None else seq_len
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 4096:
            raise HarnessError(f"iter_train_batches: batch_size must be an integer in 1..4096, got {size!r}")
        limit = self.config["sequence_length"]
        if not isinstance(length, int) or isinstance(length, bool) or not 2 <= length <= limit:
            raise HarnessError(f"iter_train_batches: seq_len must be an integer in 2..{limit}, got {length!r}")
        return self._batches(model, size, length)

    def _batches(self, model: torch.nn.Module, size: int, length: int) -> Iterator[Batch]:
        while True:
            graph_id, tensors = self.session.graph_for(model, length, self.device)
            self.session.send("batch", {"graph_id": graph_id, "batch_size": size, "seq_len": length}, tensors)
            self.session.last = (model, length)
            reply = self.session.receive()
            if reply.kind == "end":
                return
            if reply.kind == "error":
                raise HarnessError(str(reply.fields.get("message", "the scorer refused the batch")))
            tokens = reply.tensors.get("tokens")
            if reply.kind != "batch" or tokens is None:
                raise HarnessError("the scorer answered with something other than a batch")
            yield Batch(tokens.to(self.device))


def run(session: Session, bundle_root: str, artifacts_dir: str) -> None:
    hello = session.receive()
    if hello.kind != "hello":
        raise HarnessError("the scorer did not start the conversation")
    config = hello.fields
    device = config["device"]
    harness_runtime.configure_threads(int(config["threads"]))
    shutil.rmtree(artifacts_dir, ignore_errors=True)
    os.makedirs(artifacts_dir, mode=0o700, exist_ok=True)
    harness_runtime.guard_file_loads(artifacts_dir)
    seed = int(config["seed"])

    def failed(stage: str, error: BaseException) -> None:
        traceback.print_exc()
        session.send("failed", {"stage": stage, "message": describe(error)})

    harness_runtime.force_seeds(seed)
    sys.path.append(bundle_root)
    try:
        architecture = importlib.import_module("architecture")
        training = importlib.import_module("training")
    except BaseException as error:  # SystemExit too: bundle code must not end the run silently
        return failed("import", error)
    build_model = vars(architecture).get("build_model")
    train = vars(training).get("train")
    if not callable(build_model):
        return failed("import", HarnessError("architecture.py has no top-level function build_model(ctx)"))
    if not callable(train):
        return failed("import", HarnessError("training.py has no top-level function train(ctx)"))

    feed = Feed(session, config, device)
    built: list[torch.nn.Module] = []
    ctx = SimpleNamespace(
        vocab_size=config["vocab_size"],
        sequence_length=config["sequence_length"],
        batch_size=config["batch_size"],
        seed=seed,
        device=device,
        token_budget=config["token_budget"],
        step_budget=config["step_budget"],
        memory_mb=config["memory_mb"],
        artifacts_dir=artifacts_dir,
        rank=0,
        world_size=1,
        build_model=lambda: built[0],
        iter_train_batches=feed.iterate,
    )

    harness_runtime.force_seeds(seed)
    try:
        model = build_model(ctx)
    except BaseException as error:
        return failed("build_model", error)
    if not isinstance(model, torch.nn.Module):
        return failed("build_model", HarnessError(f"build_model(ctx) returned {type(model).__name__}, not a torch.nn.Module"))
    try:
        model = model.to(device)
    except BaseException as error:
        return failed("build_model", HarnessError(f"moving the model to {device}: {describe(error)}"))
    built.append(model)

    # The step-0 check, in the harness's shape: the model as build_model made it, traced at the
    # full row length, before train(ctx) can change a tensor (the scorer refuses a batch before it).
    try:
        graph_id, tensors = session.graph_for(model, config["sequence_length"], device)
    except BaseException as error:
        return failed("graph", error)
    session.send("probe", {"graph_id": graph_id}, tensors)
    reply = session.receive()
    if reply.kind != "ok":
        return failed("graph", HarnessError(str(reply.fields.get("message", "the scorer refused the probe"))))

    harness_runtime.force_seeds(seed)
    try:
        train(ctx)
    except BaseException as error:
        return failed("train", error)

    # The holdout is scored with the model the bundle trained last, at the full row length.
    final = session.last[0] if session.last else model
    try:
        graph_id, tensors = session.graph_for(final, config["sequence_length"], device)
    except BaseException as error:
        return failed("train", error)
    session.send("done", {"graph_id": graph_id}, tensors)


def main() -> int:
    parser = argparse.ArgumentParser(description="the bundle's side of a scored run (started by run.py)")
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--fd-in", type=int, required=True)
    parser.add_argument("--fd-out", type=int, required=True)
    options = parser.parse_args()
    # Before any bundle code is imported: from here on this process (and any thread of it) can
    # start no other process, whatever the bundle calls (harness_process.py).
    harness_process.forbid_new_processes()
    inbound = os.fdopen(options.fd_in, "rb")
    outbound = os.fdopen(options.fd_out, "wb")
    session = Session(inbound, outbound)
    try:
        run(session, options.bundle, options.artifacts)
    except (BrokenPipeError, EOFError):
        return 1  # the scorer ended the run
    finally:
        sys.stderr.flush()
    # No interpreter teardown: bundle finalizers and threads have nothing left to say.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
