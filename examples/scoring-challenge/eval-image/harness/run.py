"""`python3 /opt/harness/run.py`: the forced-init scored run (prequential bits per byte).

Reads /workspace/bundle, /workspace/corpus/{stream,holdout}.bin and /workspace/run.json; prints
one framed report line on stdout (bundle prints go to stderr). The harness measures; the service
computes bpb and the score from the report. Order matters and is the protocol's:
nonce hidden -> corpus verified -> static gate again -> seeds forced -> bundle imported ->
seeds forced -> build_model -> causality probe -> seeds forced -> train (each batch scored before
the bundle sees it) -> probe again -> holdout scored.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import shutil
import sys
import time
import traceback
from types import SimpleNamespace
from typing import Any

sys.dont_write_bytecode = True
# Before torch loads OpenMP: idle worker threads sleep instead of spinning. On a shared or
# quota-limited CPU, spinning threads starve the one doing the work (measured: 2 threads ran
# 4x slower than 1 under load with the default policy, and faster than 1 with this one).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# cuBLAS needs this before CUDA initialises, or deterministic algorithms refuse matmuls.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import harness_report  # noqa: E402

HARNESS_VERSION = "1"
PARAM_CAP = 150_000_000
ARTIFACTS_DIR = "/tmp/artifacts"
MESSAGE_LIMIT = 2000
_HEX = set("0123456789abcdef")


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


def read_verified(path: str, expected: str, name: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise StageError("corpus", f"{name} is unreadable: {describe(error)}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise StageError("corpus", f"{name} sha256 is {actual}, run.json pins {expected}")
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
        # checked_positions 0 means the probe did not run (the error says why).
        "causality": {"ok": True, "max_delta": 0.0, "checked_positions": 0},
        "holdout": {"covered_bytes": 0, "nll_nats": 0.0},
        "device": "cpu",
        "seconds": 0.0,
    }


def execute(workspace: str, artifacts_dir: str, report: dict[str, Any]) -> None:
    """The run, filling report as it goes; raises StageError on the first failure."""
    config = read_config(os.path.join(workspace, "run.json"))
    report.update(empty_report(config))
    stream_bytes = read_verified(os.path.join(workspace, "corpus", "stream.bin"), config["stream_sha256"], "stream.bin")
    holdout_bytes = read_verified(os.path.join(workspace, "corpus", "holdout.bin"), config["holdout_sha256"], "holdout.bin")

    import harness_gate

    bundle_dir = os.path.join(workspace, "bundle")
    if not os.path.isdir(bundle_dir):
        raise StageError("import", "no bundle at /workspace/bundle")
    root = harness_gate.bundle_root(bundle_dir)
    # The gate runs again here: this command must never execute a bundle the gate refuses,
    # whatever the caller did before.
    for directory, _dirs, files in os.walk(root):
        for name in files + _dirs:
            if os.path.islink(os.path.join(directory, name)):
                raise StageError("import", f"bundle holds a symbolic link: {os.path.relpath(os.path.join(directory, name), root)}")
    violations = harness_gate.check_sources(harness_gate.read_bundle(root))
    if violations:
        first = violations[0]
        where = f" ({first.path}:{first.line})" if first.path else ""
        more = f" and {len(violations) - 1} more" if len(violations) > 1 else ""
        raise StageError("import", f"static gate: {first.message}{where}{more}")

    import harness_runtime  # first: it sets the environment torch reads when it loads
    import harness_probe
    import harness_stream
    import torch

    try:
        device = harness_runtime.resolve_device(config["device"])
    except RuntimeError as error:
        raise StageError("corpus", str(error)) from None
    report["device"] = device
    harness_runtime.configure_threads(harness_runtime.cpu_threads())

    # Miner-written manifests and leftovers are never read: the dir starts empty, the report
    # comes from the harness's own counters only.
    shutil.rmtree(artifacts_dir, ignore_errors=True)
    os.makedirs(artifacts_dir, mode=0o700, exist_ok=True)
    harness_runtime.guard_file_loads(artifacts_dir)

    seed = config["seed"]
    vocab = config["vocab_size"]
    seq_len = config["sequence_length"]
    batch_size = config["batch_size"]

    # --- import the bundle (seeds forced first: module-level code may draw random numbers)
    harness_runtime.force_seeds(seed)
    if root not in sys.path:
        sys.path.append(root)
    try:
        architecture = importlib.import_module("architecture")
        training = importlib.import_module("training")
    except BaseException as error:  # SystemExit too: bundle code must not end the harness
        traceback.print_exc()
        raise StageError("import", describe(error)) from None
    build_model = vars(architecture).get("build_model")
    train = vars(training).get("train")
    if not callable(build_model):
        raise StageError("import", "architecture.py has no top-level function build_model(ctx)")
    if not callable(train):
        raise StageError("import", "training.py has no top-level function train(ctx)")

    probe_results: list[harness_probe.ProbeResult] = []

    def run_probe(model: torch.nn.Module, seen: torch.Tensor | None) -> None:
        try:
            result = harness_probe.probe(model, seq_len=seq_len, vocab_size=vocab, seed=seed, device=device, seen=seen)
        except BaseException as error:
            traceback.print_exc()
            raise StageError("probe", f"causality probe: {describe(error)}") from None
        probe_results.append(result)
        merged = probe_results[0]
        for other in probe_results[1:]:
            merged = merged.merge(other)
        report["causality"] = merged.to_json()

    stream = harness_stream.TrainStream(
        stream_bytes,
        vocab_size=vocab,
        sequence_length=seq_len,
        batch_size=batch_size,
        token_budget=config["token_budget"],
        step_budget=config["step_budget"],
        device=device,
        # A model the harness did not build (or a second one) is probed before its first batch.
        on_new_model=lambda m: None if any(m is b for b in built) else run_probe(m, None),
    )
    built: list[torch.nn.Module] = []

    def ctx_build_model() -> torch.nn.Module:
        return built[0]

    ctx = SimpleNamespace(
        vocab_size=vocab,
        sequence_length=seq_len,
        batch_size=batch_size,
        seed=seed,
        device=device,
        token_budget=config["token_budget"],
        step_budget=config["step_budget"],
        memory_mb=config["memory_mb"],
        artifacts_dir=artifacts_dir,
        rank=0,
        world_size=1,
        build_model=ctx_build_model,
        iter_train_batches=stream.iterate,
    )

    # --- build the model (forced init) and check it
    harness_runtime.force_seeds(seed)
    try:
        model = build_model(ctx)
    except BaseException as error:
        traceback.print_exc()
        raise StageError("build_model", describe(error)) from None
    if not isinstance(model, torch.nn.Module):
        raise StageError("build_model", f"build_model(ctx) returned {type(model).__name__}, not a torch.nn.Module")
    param_count = sum(p.numel() for p in model.parameters())
    report["param_count"] = param_count
    if param_count > PARAM_CAP:
        raise StageError("budget", f"the model has {param_count} parameters, over the cap of {PARAM_CAP}")
    try:
        model = model.to(device)
    except BaseException as error:
        raise StageError("build_model", f"moving the model to {device}: {describe(error)}") from None
    built.append(model)
    run_probe(model, None)

    # --- train: the stream scores every batch before the bundle sees it
    harness_runtime.force_seeds(seed)
    train_error: StageError | None = None
    try:
        train(ctx)
    except BaseException as error:
        traceback.print_exc()
        train_error = StageError("train", describe(error))
    finally:
        tally = stream.tally
        report.update(
            batches=tally.batches,
            tokens=tally.tokens,
            covered_bytes=tally.covered_bytes,
            nll_nats=tally.nll.value,
            first_batch_loss=tally.first_batch_loss,
            nonfinite_batches=tally.nonfinite_batches,
            steps=stream.steps,
        )
    if stream.error is not None and train_error is None:
        # The bundle caught the harness's complaint and carried on: the complaint stands.
        train_error = StageError("train", describe(stream.error))
    if train_error is not None:
        raise train_error

    scored = stream.current_model or model
    report["param_count"] = sum(p.numel() for p in scored.parameters())
    run_probe(scored, stream.last_tokens)

    try:
        holdout = harness_stream.score_holdout(
            scored, holdout_bytes, vocab_size=vocab, sequence_length=seq_len, batch_size=batch_size, device=device
        )
    except BaseException as error:
        traceback.print_exc()
        raise StageError("train", f"scoring the holdout: {describe(error)}") from None
    report["holdout"] = {"covered_bytes": holdout.covered_bytes, "nll_nats": holdout.nll.value}

    peak = harness_runtime.peak_rss_mb()
    if config["memory_mb"] and peak > config["memory_mb"]:
        raise StageError("budget", f"peak memory {peak:.0f} MB is over the budget of {config['memory_mb']} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description="forced-init scored run of a scoring bundle")
    parser.add_argument("--workspace", default="/workspace", help="holds bundle/, corpus/, run.json (tests)")
    parser.add_argument("--artifacts", default=ARTIFACTS_DIR, help="the bundle's writable dir (tests)")
    options = parser.parse_args()
    try:
        held = harness_report.hold_nonce()
    except harness_report.NonceError as error:
        print(f"run: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    out = harness_report.claim_stdout()
    report = empty_report(None)
    try:
        execute(os.path.abspath(options.workspace), options.artifacts, report)
        report["ok"] = True
    except StageError as error:
        report["ok"] = False
        report["error"] = {"stage": error.stage, "message": error.message}
    except BaseException as error:  # a harness fault: still answer with a report
        traceback.print_exc()
        report["ok"] = False
        report["error"] = {"stage": "train", "message": f"harness: {describe(error)}"[:MESSAGE_LIMIT]}
    report["seconds"] = round(time.monotonic() - started, 3)
    harness_report.emit(out, held.read(), report)
    sys.stderr.flush()
    # Skip interpreter teardown: bundle finalizers and threads get no chance to run after the report.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
