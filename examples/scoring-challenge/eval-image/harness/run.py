"""`python3 /opt/harness/run.py`: the scorer of a forced-init scored run (prequential bits per byte).

Two processes, two trust domains. This one, the scorer, holds everything a score depends on:
the stream and the holdout (sealed on disk, opened here with a key only this process had), the
nonce, the report channel (the real stdout) and the arithmetic. It never imports, unpickles or
runs bundle code. The bundle runs in a child process (trainer.py) with a clean environment, the
container's stderr for its output, and two pipes to the scorer as its only channel; this process
makes itself non-dumpable first, so the child cannot read its memory, environment or
descriptors through /proc, nor ptrace it.

For each batch the child asks for, the scorer evaluates the child's model, sent as a traced graph
plus its current tensors (harness_graph.py), on every row of the batch, one row per call, and
charges the negative log-likelihood; it checks each row against a twin with a secret cut
(harness_causality.py); only then does it hand the batch over. The report (one framed line on
stdout) carries only what the scorer measured; the service computes bpb and the score from it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

sys.dont_write_bytecode = True
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import harness_corpus  # noqa: E402
import harness_process  # noqa: E402
import numpy  # noqa: E402
import harness_report  # noqa: E402

HARNESS_VERSION = "2"
PARAM_CAP = 150_000_000
ARTIFACTS_DIR = "/tmp/artifacts"
MESSAGE_LIMIT = 2000
GRAPH_LIMIT = 64
HERE = os.path.dirname(os.path.abspath(__file__))
_HEX = set("0123456789abcdef")
# Stages the bundle's process may report for its own failures; anything else counts as train.
_CHILD_STAGES = {"import", "build_model", "train", "graph"}


class StageError(Exception):
    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message[:MESSAGE_LIMIT]


def describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def read_config(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError) as error:
        raise StageError("corpus", f"run.json is unreadable: {describe(error)}") from None
    if not isinstance(config, dict):
        raise StageError("corpus", "run.json must be a JSON object")

    def integer(name: str, low: int, high: int) -> int:
        value = config.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise StageError("corpus", f"run.json: {name} must be an integer in {low}..{high}, got {value!r}")
        return value

    def digest(name: str) -> str:
        value = config.get(name)
        if not isinstance(value, str) or len(value) != 64 or not set(value) <= _HEX:
            raise StageError("corpus", f"run.json: {name} must be a lowercase sha256 hex digest")
        return value

    device = config.get("device", "auto")
    if device not in ("auto", "cpu", "cuda"):
        raise StageError("corpus", f"run.json: device must be auto, cpu or cuda, got {device!r}")
    vocab = integer("vocab_size", 2, 1 << 20)
    if vocab != 256:
        raise StageError("corpus", f"run.json: vocab_size {vocab} is not supported: the harness is byte-level (256)")
    return {
        "seed": integer("seed", 0, 2**63 - 1),
        "vocab_size": vocab,
        "sequence_length": integer("sequence_length", 2, 65536),
        "batch_size": integer("batch_size", 1, 4096),
        "token_budget": integer("token_budget", 0, 2**62),
        "step_budget": integer("step_budget", 0, 2**62),
        "memory_mb": integer("memory_mb", 0, 2**40),
        "stream_sha256": digest("stream_sha256"),
        "holdout_sha256": digest("holdout_sha256"),
        "device": device,
    }


def read_sealed(path: str, key: bytes, label: str, expected: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            sealed = handle.read()
    except OSError as error:
        raise StageError("corpus", f"{label}.bin is unreadable: {describe(error)}") from None
    data = harness_corpus.unseal(sealed, key, label)
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise StageError("corpus", f"{label}.bin sha256 is {actual} after unsealing, run.json pins {expected}")
    return data


def empty_report(config: dict[str, Any] | None) -> dict[str, Any]:
    c = config or {}
    return {
        "ok": False,
        "error": None,
        "harness_version": HARNESS_VERSION,
        "stream_sha256": c.get("stream_sha256"),
        "vocab_size": c.get("vocab_size"),
        "sequence_length": c.get("sequence_length"),
        "batch_size": c.get("batch_size"),
        "batches": 0,
        "tokens": 0,
        "covered_bytes": 0,
        "nll_nats": 0.0,
        "first_batch_loss": None,
        "nonfinite_batches": 0,
        "param_count": 0,
        "steps": 0,
        # checked_rows 0 means no batch was charged (the error says why).
        "causality": {"ok": True, "max_delta": 0.0, "checked_positions": 0, "checked_rows": 0},
        "holdout": {"covered_bytes": 0, "nll_nats": 0.0},
        "device": "cpu",
        "seconds": 0.0,
    }


class Scorer:
    """The scorer's half of the conversation with the bundle's process."""

    def __init__(
        self, config: dict[str, Any], stream: bytes, holdout: bytes, device: str, report: dict[str, Any], *, threads: int
    ) -> None:
        import harness_behaviour
        import harness_causality
        import harness_stream

        self.config = config
        self.device = device
        self.threads = threads
        self.report = report
        self.cursor = harness_stream.StreamCursor(
            stream,
            sequence_length=config["sequence_length"],
            token_budget=config["token_budget"],
            step_budget=config["step_budget"],
        )
        self.tally = harness_stream.Tally(config["vocab_size"])
        self.twins = harness_causality.Twins(config["vocab_size"])
        # The step-0 loss: the model as build_model made it, on a first batch of the harness's shape.
        self.first_batch_loss: float | None = None
        # The holdout is read like the stream, beside it (shadow): as the pass moves through the
        # stream, the same model at the same moment predicts rows of the holdout of the same
        # length; what the pass did not reach is predicted by the final model. It never reaches
        # the bundle's process.
        self.holdout = numpy.frombuffer(holdout, dtype=numpy.uint8)
        self.holdout_position = 0
        self.holdout_tally = harness_stream.Tally(config["vocab_size"])
        # The behaviour signature (the copy check's): the loss curve over the bytes a full pass predicts.
        length = config["sequence_length"]
        predicted = min(max(0, len(stream) - 1), config["token_budget"] * (length - 1) // length)
        self.curve = harness_behaviour.LossCurve(predicted, config["vocab_size"])
        self.functions: dict[int, tuple[Any, int]] = {}
        # The largest message: the model's tensors and constants within the memory budget.
        self.payload_limit = max(256, config["memory_mb"] or 4096) * 1024 * 1024

    def evaluate(self, function: Any, state: dict[str, Any], row: Any) -> Any:
        import harness_graph

        logits = function(row, state)
        expected = (1, row.shape[1], self.config["vocab_size"])
        if not hasattr(logits, "shape") or not hasattr(logits, "double"):
            raise harness_graph.GraphError(f"the model returned {type(logits).__name__}, not a tensor of logits {list(expected)}")
        if tuple(logits.shape) != expected:
            raise harness_graph.GraphError(f"the model returned logits of shape {list(logits.shape)}; expected {list(expected)} [B, T, V]")
        return logits

    def prepared_state(self, function: Any, tensors: dict[str, Any]) -> dict[str, Any]:
        import harness_graph

        try:
            size = harness_graph.check_state(function, tensors)
        except harness_graph.GraphError as error:
            raise StageError("graph", str(error)) from None
        self.report["param_count"] = max(self.report["param_count"], size)
        if size > PARAM_CAP:
            raise StageError("budget", f"the model has {size} parameters, over the cap of {PARAM_CAP}")
        return {name: tensors[name].to(self.device) for name in set(function.state_names)}

    def register(self, message: Any) -> None:
        import harness_graph

        graph_id, seq_len = message.fields.get("graph_id"), message.fields.get("seq_len")
        if not isinstance(graph_id, int) or isinstance(graph_id, bool) or not isinstance(seq_len, int):
            raise StageError("graph", "the bundle's process sent a model without an id or row length")
        if graph_id in self.functions or len(self.functions) >= GRAPH_LIMIT:
            raise StageError("graph", f"the bundle's process sent more than {GRAPH_LIMIT} models, or one twice")
        try:
            function = harness_graph.ScoredFunction(message.fields.get("graph"), message.tensors, device=self.device)
        except harness_graph.GraphError as error:
            raise StageError("graph", str(error)) from None
        self.functions[graph_id] = (function, seq_len)

    def function_for(self, fields: dict[str, Any]) -> tuple[Any, int]:
        known = self.functions.get(fields.get("graph_id"))  # type: ignore[arg-type]
        if known is None:
            raise StageError("graph", "the bundle's process asked for a batch for a model it never sent")
        return known

    def probe(self, message: Any) -> None:
        """The step-0 check, in the harness's shape, before train(ctx) runs.

        The model as build_model(ctx) made it, traced at the full row length, on the rows of a
        first batch of the run's batch_size: the shape is the harness's, never the bundle's (a
        first batch of one short row would weigh a single prediction). Nothing is charged.
        """
        import harness_stream
        import torch

        if self.first_batch_loss is not None or self.tally.batches:
            raise StageError("train", "the bundle's process sent the step-0 probe twice, or after a batch")
        function, seq_len = self.function_for(message.fields)
        if seq_len != self.config["sequence_length"]:
            raise StageError("graph", "the step-0 probe must be traced at the full row length")
        state = self.prepared_state(function, message.tensors)
        tokens = self.cursor.first_rows(self.config["batch_size"], seq_len).to(self.device)
        with torch.no_grad():
            losses = self.evaluated(
                lambda: [harness_stream.target_nll(self.evaluate(function, state, tokens[i : i + 1]), tokens[i : i + 1]) for i in range(tokens.shape[0])],
                "the step-0 probe",
            )
        tally = harness_stream.Tally(self.config["vocab_size"])
        tally.charge(torch.cat(losses, dim=0), tokens.numel())
        self.first_batch_loss = tally.first_batch_loss

    def evaluated(self, compute: Any, what: str | None = None) -> Any:
        """compute(), its failures the bundle's (stage graph), named by `what` when given."""
        import harness_graph

        try:
            return compute()
        except harness_graph.GraphError as error:
            raise StageError("graph", f"{what}: {error}" if what else str(error)) from None
        except StageError:
            raise
        except Exception as error:  # an operator refused the model's inputs: the bundle's error
            raise StageError("graph", f"{what or 'evaluating the model'}: {describe(error)}") from None

    def predict_holdout(self, function: Any, state: dict[str, Any], count: int, length: int) -> None:
        """Charge the holdout's next `count` rows of `length` to its tally, under this model."""
        import harness_stream
        import torch

        rows = harness_stream.rows(self.holdout, self.holdout_position, count, length).to(self.device)
        self.holdout_position += count * (length - 1)
        with torch.no_grad():
            for index in range(count):
                row = rows[index : index + 1]
                nll = self.evaluated(lambda: harness_stream.target_nll(self.evaluate(function, state, row), row), "scoring the holdout")
                self.holdout_tally.charge(nll, row.numel())

    def shadow(self, function: Any, state: dict[str, Any], length: int) -> None:
        """Predict the holdout rows due at this point of the pass with the model of this batch.

        The same model, at the same moment, on rows drawn like the stream's that it has never
        seen, at the batch's row length: an honest model predicts them as it predicts the batch;
        one that carries the stream's bytes does not (score.ts, the memorisation gap).
        """
        import harness_stream

        target = int(self.cursor.progress() * (len(self.holdout) - 1))
        count = max(0, (target - self.holdout_position) // (length - 1))
        count = min(count, harness_stream.row_count(len(self.holdout), self.holdout_position, length))
        if count > 0:
            self.predict_holdout(function, state, count, length)

    def charge(self, message: Any) -> Any:
        """Charge the next batch under the sent model; the tokens, or None when the pass is over."""
        import harness_stream
        import torch

        function, seq_len = self.function_for(message.fields)
        size, length = message.fields.get("batch_size"), message.fields.get("seq_len")
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 4096:
            raise StageError("train", f"iter_train_batches: batch_size must be an integer in 1..4096, got {size!r}")
        if not isinstance(length, int) or isinstance(length, bool) or not 2 <= length <= self.config["sequence_length"]:
            raise StageError("train", f"iter_train_batches: seq_len must be an integer in 2..{self.config['sequence_length']}, got {length!r}")
        if length != seq_len:
            raise StageError("graph", f"a batch of rows of {length} asked with a model traced for {seq_len}")
        if self.first_batch_loss is None:
            raise StageError("train", "the bundle's process asked for a batch before the step-0 probe")
        state = self.prepared_state(function, message.tensors)
        tokens = self.cursor.next_rows(size, length)
        if tokens is None:
            return None
        tokens = tokens.to(self.device)

        def rows_with_twins() -> list[Any]:
            losses = []
            for index in range(tokens.shape[0]):
                row = tokens[index : index + 1]
                logits = self.evaluate(function, state, row)
                losses.append(harness_stream.target_nll(logits, row))
                twin, cut = self.twins.twin(row)
                if not self.twins.compare(logits, self.evaluate(function, state, twin), cut):
                    break  # one row that looked ahead is enough: the run ends here
            return losses

        with torch.no_grad():
            losses = self.evaluated(rows_with_twins)
        if not self.twins.ok:
            return None
        charged = torch.cat(losses, dim=0)
        self.tally.charge(charged, tokens.numel())
        self.curve.charge(charged)
        self.shadow(function, state, length)
        return tokens

    def score_holdout(self, message: Any) -> None:
        import harness_stream

        function, seq_len = self.function_for(message.fields)
        if seq_len != self.config["sequence_length"]:
            raise StageError("graph", "the final model must be traced at the full row length")
        state = self.prepared_state(function, message.tensors)
        # The rows the pass did not reach (it ended early, or rounding): the final model's.
        self.predict_holdout(function, state, harness_stream.row_count(len(self.holdout), self.holdout_position, seq_len), seq_len)

    def record(self) -> None:
        t = self.tally
        self.report.update(
            batches=t.batches,
            tokens=t.tokens,
            covered_bytes=t.covered_bytes,
            nll_nats=t.nll.value,
            first_batch_loss=self.first_batch_loss,
            nonfinite_batches=t.nonfinite_batches,
            steps=t.batches,
            causality=self.twins.to_json(),
            holdout={"covered_bytes": self.holdout_tally.covered_bytes, "nll_nats": self.holdout_tally.nll.value},
            behaviour=self.curve.to_json(),
        )

    def converse(self, inbound: Any, outbound: Any, child_pid: int | None = None) -> None:
        """Serve the bundle's process until it is done; raises StageError for its failures.

        With `child_pid`, nothing is served until the kernel says that process can start no other
        (its seccomp filter is installed before any bundle code is imported).
        """
        import harness_wire

        hello = {
            "vocab_size": self.config["vocab_size"],
            "sequence_length": self.config["sequence_length"],
            "batch_size": self.config["batch_size"],
            "seed": self.config["seed"],
            "device": self.device,
            "token_budget": self.config["token_budget"],
            "step_budget": self.config["step_budget"],
            "memory_mb": self.config["memory_mb"],
            "threads": self.threads,
        }
        harness_wire.send(outbound, "hello", hello)
        while True:
            try:
                message = harness_wire.receive(inbound, payload_limit=self.payload_limit, element_limit=PARAM_CAP)
            except harness_wire.TooLarge as error:
                self.report["param_count"] = max(self.report["param_count"], error.elements)
                raise StageError("budget", f"the model has {error.elements} parameters, over the cap of {PARAM_CAP}") from None
            except harness_wire.WireError as error:
                raise StageError("train", f"the bundle's process broke the protocol: {error}") from None
            if child_pid is not None:
                if not harness_process.cannot_start_processes(child_pid):
                    raise StageError("harness", "the bundle's process runs without its seccomp filter")
                child_pid = None
            if message.kind == "model":
                self.register(message)
                harness_wire.send(outbound, "ok")
            elif message.kind == "probe":
                self.probe(message)
                harness_wire.send(outbound, "ok")
            elif message.kind == "batch":
                tokens = self.charge(message)
                self.record()
                if not self.twins.ok:
                    return  # a row looked ahead: the verdict is in the report, the run is over
                if tokens is None:
                    harness_wire.send(outbound, "end")
                else:
                    harness_wire.send(outbound, "batch", {}, {"tokens": tokens})
            elif message.kind == "done":
                self.record()
                self.score_holdout(message)
                return
            elif message.kind == "failed":
                stage = message.fields.get("stage")
                text = message.fields.get("message")
                raise StageError(stage if stage in _CHILD_STAGES else "train", str(text) if text is not None else "the bundle failed")
            else:
                raise StageError("train", f"the bundle's process sent an unknown message: {message.kind[:40]!r}")


def start_trainer(root: str, artifacts_dir: str) -> tuple[subprocess.Popen[bytes], Any, Any]:
    """The bundle's process: a clean environment, the container's stderr, two pipes to us."""
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_WAIT_POLICY": "PASSIVE",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    }
    child = subprocess.Popen(
        [
            sys.executable,
            os.path.join(HERE, "trainer.py"),
            "--bundle", root,
            "--artifacts", artifacts_dir,
            "--fd-in", str(to_child_r),
            "--fd-out", str(from_child_w),
        ],
        stdin=subprocess.DEVNULL,
        stdout=2,
        stderr=2,
        env=env,
        close_fds=True,
        pass_fds=(to_child_r, from_child_w),
        cwd=root,
    )
    os.close(to_child_r)
    os.close(from_child_w)
    return child, os.fdopen(from_child_r, "rb"), os.fdopen(to_child_w, "wb")


def execute(workspace: str, artifacts_dir: str, report: dict[str, Any], key: bytes) -> None:
    """The run, filling report as it goes; raises StageError on the first failure."""
    config = read_config(os.path.join(workspace, "run.json"))
    report.update(empty_report(config))
    stream = read_sealed(os.path.join(workspace, "corpus", "stream.bin"), key, "stream", config["stream_sha256"])
    holdout = read_sealed(os.path.join(workspace, "corpus", "holdout.bin"), key, "holdout", config["holdout_sha256"])

    import harness_gate

    bundle_dir = os.path.join(workspace, "bundle")
    if not os.path.isdir(bundle_dir):
        raise StageError("import", "no bundle at /workspace/bundle")
    root = harness_gate.bundle_root(bundle_dir)
    # The gate runs again here: the scorer never starts a bundle the gate refuses, whatever the
    # caller did before.
    for directory, dirs, files in os.walk(root):
        for name in files + dirs:
            if os.path.islink(os.path.join(directory, name)):
                raise StageError("import", f"bundle holds a symbolic link: {os.path.relpath(os.path.join(directory, name), root)}")
    violations = harness_gate.check_sources(harness_gate.read_bundle(root))
    if violations:
        first = violations[0]
        where = f" ({first.path}:{first.line})" if first.path else ""
        more = f" and {len(violations) - 1} more" if len(violations) > 1 else ""
        raise StageError("import", f"static gate: {first.message}{where}{more}")

    # Everything the scorer will ever import, before the bundle's process can write a file
    # anywhere (its /tmp is this process's /tmp too).
    import harness_behaviour  # noqa: F401
    import harness_causality  # noqa: F401
    import harness_graph  # noqa: F401
    import harness_runtime
    import harness_stream  # noqa: F401
    import harness_wire  # noqa: F401
    import torch  # noqa: F401

    try:
        device = harness_runtime.resolve_device(config["device"])
    except RuntimeError as error:
        raise StageError("corpus", str(error)) from None
    report["device"] = device
    threads = harness_runtime.cpu_threads()
    harness_runtime.configure_threads(threads)

    scorer = Scorer(config, stream, holdout, device, report, threads=threads)
    child, inbound, outbound = start_trainer(root, artifacts_dir)
    finished = False
    try:
        scorer.converse(inbound, outbound, child.pid)
        finished = True
    except (EOFError, BrokenPipeError):
        status, _usage = reap(child, grace=5.0)
        raise StageError(
            "train", f"the bundle's process ended without finishing (exit code {os.waitstatus_to_exitcode(status)})"
        ) from None
    finally:
        scorer.record()
        for end in (inbound, outbound):
            try:
                end.close()
            except OSError:
                pass
        if child.returncode is None:
            # After `done` the process exits on its own; after anything else it is stopped now.
            _status, usage = reap(child, grace=5.0 if finished else 0.0)
            report["peak_memory_mb"] = round(usage.ru_maxrss / 1024.0, 1)
    peak = report.get("peak_memory_mb", 0.0)
    if config["memory_mb"] and peak > config["memory_mb"]:
        raise StageError("budget", f"peak memory {peak:.0f} MB is over the budget of {config['memory_mb']} MB")


def reap(child: subprocess.Popen[bytes], *, grace: float) -> tuple[int, Any]:
    """Wait up to `grace` seconds for the bundle's process, then kill it; its status and rusage."""
    deadline = time.monotonic() + grace
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid == child.pid:
            break
        if time.monotonic() >= deadline:
            # os.kill, not child.kill(): Popen polls first, and a child that ended in between would
            # be reaped there, its status and usage lost (wait4 then fails: no child processes).
            # Unreaped, the pid is still ours, so the signal cannot reach another process.
            os.kill(child.pid, signal.SIGKILL)
            _pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.02)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return status, usage


def main() -> int:
    parser = argparse.ArgumentParser(description="the scorer of a scoring bundle's forced-init run")
    parser.add_argument("--workspace", default="/workspace", help="holds bundle/, corpus/, run.json (tests)")
    parser.add_argument("--artifacts", default=ARTIFACTS_DIR, help="the bundle's writable dir (tests)")
    options = parser.parse_args()
    # Before any secret is read: from here on, /proc/<this pid> is closed to the bundle's uid,
    # and (as the container's PID 1) no signal the bundle sends reaches this process.
    harness_process.make_undumpable()
    harness_process.ignore_signals_as_init()
    try:
        nonce = harness_report.take_nonce()
        key = harness_corpus.parse_key(os.environ.pop(harness_corpus.KEY_ENV, None))
    except (harness_report.NonceError, harness_corpus.CorpusKeyError) as error:
        print(f"run: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    out = harness_report.claim_stdout()
    report = empty_report(None)
    try:
        execute(os.path.abspath(options.workspace), options.artifacts, report, key)
        report["ok"] = True
    except StageError as error:
        report["ok"] = False
        report["error"] = {"stage": error.stage, "message": error.message}
    except BaseException as error:  # a harness fault: still answer with a report
        traceback.print_exc()
        report["ok"] = False
        report["error"] = {"stage": "harness", "message": f"harness: {describe(error)}"[:MESSAGE_LIMIT]}
    report["seconds"] = round(time.monotonic() - started, 3)
    harness_report.emit(out, nonce, report)
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
