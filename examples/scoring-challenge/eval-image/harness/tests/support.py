"""Shared test helpers: tiny models with known behaviour, workspaces, subprocess runs."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
from typing import Any

import torch

import harness_corpus

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LN256 = math.log(256)
# The corpus key the test workspaces are sealed with (the service draws a fresh one per run).
CORPUS_KEY = bytes(range(32))

# A little natural text, repeated: enough bytes for several batches at small shapes.
TEXT = (
    b"It is a truth universally acknowledged, that a single man in possession of a good fortune, "
    b"must be in want of a wife. However little known the feelings or views of such a man may be "
    b"on his first entering a neighbourhood, this truth is so well fixed in the minds of the "
    b"surrounding families, that he is considered the rightful property of some one or other of "
    b"their daughters.\n"
)


class Uniform(torch.nn.Module):
    """Every byte equally likely: exactly 8 bits per byte."""

    def __init__(self, vocab: int = 256) -> None:
        super().__init__()
        self.vocab = vocab
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.zeros(tokens.shape[0], tokens.shape[1], self.vocab) + 0.0 * self.dummy


class Unigram(torch.nn.Module):
    """A fixed distribution q over bytes at every position: nll = -sum(log q[target])."""

    def __init__(self, probabilities: torch.Tensor) -> None:
        super().__init__()
        self.register_buffer("logq", probabilities.double().log())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.logq.expand(tokens.shape[0], tokens.shape[1], -1).clone()


class Causal(torch.nn.Module):
    """A running-mean-of-embeddings model: causal by construction."""

    def __init__(self, vocab: int = 256, width: int = 16) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.head = torch.nn.Linear(width, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        counts = torch.arange(1, tokens.shape[1] + 1, dtype=x.dtype).view(1, -1, 1)
        return self.head(x.cumsum(dim=1) / counts)


class PeekNext(Causal):
    """Looks one byte ahead: adds the embedding of token t+1 at position t."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        ahead = torch.roll(tokens, shifts=-1, dims=1)
        return self.head(self.embed(tokens) + self.embed(ahead))


class PeekLast(Causal):
    """Looks at the whole row (a mean over all positions): leaks the future everywhere."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        return self.head(x + x.mean(dim=1, keepdim=True))


def write_workspace(
    root: str,
    files: dict[str, str],
    *,
    stream: bytes = TEXT * 8,
    holdout: bytes = TEXT * 2,
    dedent: bool = True,
    **config: Any,
) -> str:
    """A /workspace lookalike: bundle/, corpus/{stream,holdout}.bin, run.json."""
    os.makedirs(os.path.join(root, "bundle"), exist_ok=True)
    os.makedirs(os.path.join(root, "corpus"), exist_ok=True)
    for name, text in files.items():
        path = os.path.join(root, "bundle", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(textwrap.dedent(text) if dedent else text)
    # Sealed as the service seals them: only the scorer, holding CORPUS_KEY, can open them.
    with open(os.path.join(root, "corpus", "stream.bin"), "wb") as handle:
        handle.write(harness_corpus.unseal(stream, CORPUS_KEY, "stream"))
    with open(os.path.join(root, "corpus", "holdout.bin"), "wb") as handle:
        handle.write(harness_corpus.unseal(holdout, CORPUS_KEY, "holdout"))
    run = {
        "seed": 1337,
        "vocab_size": 256,
        "sequence_length": 32,
        "batch_size": 4,
        "token_budget": 1 << 20,
        "step_budget": 1 << 20,
        "memory_mb": 0,
        "stream_sha256": hashlib.sha256(stream).hexdigest(),
        "holdout_sha256": hashlib.sha256(holdout).hexdigest(),
        "device": "cpu",
    }
    run.update(config)
    with open(os.path.join(root, "run.json"), "w", encoding="utf-8") as handle:
        json.dump(run, handle)
    return root


class Result:
    def __init__(self, process: subprocess.CompletedProcess[str], nonce: str) -> None:
        self.returncode = process.returncode
        self.stdout = process.stdout
        self.stderr = process.stderr
        prefix = f"HARNESS-REPORT {nonce} "
        lines = [line for line in process.stdout.splitlines() if line.startswith(prefix)]
        self.report: dict[str, Any] | None = json.loads(lines[-1][len(prefix) :]) if lines else None
        self.framed_lines = lines


def run_command(
    command: str, workspace: str, nonce: str = "test-nonce-0123456789", timeout: int = 300, *, gated: bool = True
) -> Result:
    """python3 <harness>/<command>.py --workspace ... with the nonce (and the corpus key) in the
    environment; `gated=False` runs the scorer with the static gate off (tests/ungated_run.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env["HARNESS_NONCE"] = nonce
    if command == "run":
        env["HARNESS_CORPUS_KEY"] = CORPUS_KEY.hex()
    script = os.path.join(HARNESS, f"{command}.py") if gated else os.path.join(HARNESS, "tests", "ungated_run.py")
    args = [sys.executable, script, "--workspace", workspace]
    if command == "run":
        args += ["--artifacts", os.path.join(workspace, "artifacts")]
    process = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return Result(process, nonce)


def temp_dir() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory(prefix="harness-test-")


def workspace_with_artifacts(root: str) -> str:
    os.makedirs(os.path.join(root, "artifacts"), exist_ok=True)
    return root


ARCH_CAUSAL = """
    import torch

    class Net(torch.nn.Module):
        def __init__(self, vocab):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, 16)
            self.head = torch.nn.Linear(16, vocab)

        def forward(self, tokens):
            x = self.embed(tokens)
            counts = torch.arange(1, tokens.shape[1] + 1, dtype=x.dtype).view(1, -1, 1)
            return self.head(x.cumsum(dim=1) / counts)

    def build_model(ctx):
        return Net(ctx.vocab_size)
"""

TRAIN_SGD = """
    import torch
    import torch.nn.functional as F

    def train(ctx):
        model = ctx.build_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        for batch in ctx.iter_train_batches(model):
            logits = model(batch.tokens)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, ctx.vocab_size), batch.tokens[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""
