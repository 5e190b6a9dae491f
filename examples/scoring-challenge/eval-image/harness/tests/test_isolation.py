"""The attacks that forged scores, each run against the real scorer: none of them gains anything.

An attack review got three forged results through the previous harness (bundle code and scorer
in one process): look-ahead switched on after the first batch, the static gate bypassed to read
the scored stream and /proc, and a report line forged with the nonce read from /proc. Here each
is tried again, with the static gate switched off where the attack needs a way past it (the gate
is the first layer, not the guarantee): the scorer is a separate process the bundle cannot read,
write for, or predict.
"""

from __future__ import annotations

import json
import math
import textwrap
import unittest

from tests import support
from tests.attack_bundles import TRAIN_SPAWNER
from tests.support import ARCH_CAUSAL, TRAIN_SGD

NONCE = "isolation-nonce-0123456789"

# A model that would predict byte t+1 perfectly once its `peek` flag is on: at position t it adds
# a large logit for the token at t+1.
ARCH_FLAGGED = """
    import torch

    class Net(torch.nn.Module):
        def __init__(self, vocab):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, 16)
            self.head = torch.nn.Linear(16, vocab)
            self.peek = False

        def forward(self, tokens):
            x = self.embed(tokens)
            counts = torch.arange(1, tokens.shape[1] + 1, dtype=x.dtype).view(1, -1, 1)
            logits = self.head(x.cumsum(dim=1) / counts)
            if self.peek:
                ahead = torch.roll(tokens, shifts=-1, dims=1)
                logits = logits + 30.0 * torch.nn.functional.one_hot(ahead, 256).to(logits.dtype)
            return logits

    def build_model(ctx):
        return Net(ctx.vocab_size)
"""

# Finding 1 as reported: the flag goes on after the first batch has been charged, and off
# before train() returns (so a check after training sees a causal model).
TRAIN_FLAG_AFTER_FIRST = """
    import torch
    import torch.nn.functional as F

    def train(ctx):
        model = ctx.build_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        for step, batch in enumerate(ctx.iter_train_batches(model)):
            model.peek = step >= 0
            logits = model(batch.tokens)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, ctx.vocab_size), batch.tokens[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.peek = False
"""

# The same, but the bundle makes the harness trace its model again with the flag on: a new
# wrapper object for every batch after the first.
TRAIN_FLAG_RETRACE = """
    import torch
    import torch.nn.functional as F

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, tokens):
            return self.inner(tokens)

    def train(ctx):
        model = ctx.build_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        current = model
        for step in range(100):
            got = None
            for batch in ctx.iter_train_batches(current):
                got = batch
                break
            if got is None:
                break
            model.peek = True
            current = Wrapper(model)
            logits = model(got.tokens)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, ctx.vocab_size), got.tokens[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""

# Look ahead only where the next byte looks like text (a lowercase letter): the twins replace it
# with any other byte, so the move shows wherever the charged row was peeked.
ARCH_PEEK_ON_TEXT = ARCH_CAUSAL.replace(
    "return self.head(x.cumsum(dim=1) / counts)",
    "ahead = torch.roll(tokens, shifts=-1, dims=1)\n"
    "            text = ((ahead >= 97) & (ahead <= 122)).unsqueeze(-1).to(x.dtype)\n"
    "            return self.head(x.cumsum(dim=1) / counts) + 30.0 * text * torch.nn.functional.one_hot(ahead, 256).to(x.dtype)",
)

# Read across rows: the last target of each row is the first byte of the next row of the batch.
ARCH_CROSS_ROW = ARCH_CAUSAL.replace(
    "return self.head(x.cumsum(dim=1) / counts)",
    "logits = self.head(x.cumsum(dim=1) / counts)\n"
    "            following = torch.roll(tokens, shifts=-1, dims=0)[:, :1]\n"
    "            hint = torch.nn.functional.one_hot(following, 256).to(x.dtype)\n"
    "            mask = (torch.arange(tokens.shape[1]) == tokens.shape[1] - 2).to(x.dtype).view(1, -1, 1)\n"
    "            return logits + 30.0 * mask * hint",
)

# Finding 3: with the gate bypassed, look for the nonce and the report channel everywhere the
# old harness left them, forge a perfect report, read the scored bytes, and leave.
TRAIN_FORGER = r"""
    import json
    import os
    import sys

    def attempt(name, action):
        try:
            value = action()
            return {"ok": True, "value": value if isinstance(value, (str, int, list)) else repr(value)[:200]}
        except BaseException as error:
            return {"ok": False, "error": type(error).__name__}

    def read(path, size=1 << 16):
        with open(path, "rb") as handle:
            return handle.read(size).decode("latin-1")

    def write(path, text):
        with open(path, "w") as handle:
            handle.write(text)
        return "written"

    def train(ctx):
        scorer = os.getppid()
        forged = 'HARNESS-REPORT isolation-nonce-0123456789 {"ok":true,"nll_nats":0.001,"covered_bytes":100000}\n'
        results = {
            "pid": os.getpid(),
            "scorer": scorer,
            "env": sorted(os.environ),
            "fds": attempt("fds", lambda: sorted(os.listdir("/proc/self/fd"))),
            "scorer_environ": attempt("environ", lambda: read(f"/proc/{scorer}/environ")),
            "scorer_cmdline": attempt("cmdline", lambda: read(f"/proc/{scorer}/cmdline")),
            "scorer_mem": attempt("mem", lambda: read(f"/proc/{scorer}/mem", 16)),
            "scorer_maps": attempt("maps", lambda: read(f"/proc/{scorer}/maps")),
            "scorer_fds": attempt("scorer fds", lambda: sorted(os.listdir(f"/proc/{scorer}/fd"))),
            "scorer_stdout": attempt("scorer stdout", lambda: write(f"/proc/{scorer}/fd/1", forged)),
            "stream": attempt("stream", lambda: read("/workspace/corpus/stream.bin") if os.path.exists("/workspace/corpus/stream.bin") else read(os.path.join(os.path.dirname(os.getcwd()), "corpus", "stream.bin"))),
        }
        sys.stdout.write(forged)
        sys.__stdout__.write(forged)
        os.write(1, forged.encode())
        os.write(2, forged.encode())
        results["dev_stdout"] = attempt("dev stdout", lambda: write("/dev/stdout", forged))
        print("ATTACK " + json.dumps(results), file=sys.stderr, flush=True)
        os._exit(0)
"""


class Attacks(unittest.TestCase):
    def run_bundle(self, architecture: str, training: str, *, gated: bool = True, **config: object) -> support.Result:
        tmp = support.temp_dir()
        self.addCleanup(tmp.cleanup)
        workspace = support.write_workspace(tmp.name, {"architecture.py": architecture, "training.py": training}, **config)
        result = support.run_command("run", workspace, nonce=NONCE, gated=gated)
        self.assertEqual(result.returncode, 0, result.stderr[-3000:])
        self.assertEqual(len(result.framed_lines), 1, result.stdout)
        assert result.report is not None
        return result

    @staticmethod
    def bpb(report: dict[str, object]) -> float:
        return float(report["nll_nats"]) / math.log(2) / float(report["covered_bytes"])  # type: ignore[arg-type]

    def test_look_ahead_switched_on_after_the_first_batch_gains_nothing(self) -> None:
        honest = self.run_bundle(ARCH_CAUSAL, TRAIN_SGD).report
        attack = self.run_bundle(ARCH_FLAGGED, TRAIN_FLAG_AFTER_FIRST).report
        assert honest is not None and attack is not None
        # The charged predictions come from the graph traced before the flag was ever read: the
        # flag changes what the bundle trains on, never what it is charged. With its look the
        # model would code the stream in a fraction of a bit per byte.
        self.assertTrue(attack["ok"], attack)
        self.assertTrue(attack["causality"]["ok"])
        self.assertEqual(attack["batches"], honest["batches"])
        self.assertGreater(self.bpb(attack), 1.0)
        self.assertGreater(self.bpb(attack), 0.8 * self.bpb(honest))

    def test_look_ahead_traced_again_with_the_flag_on_is_caught(self) -> None:
        report = self.run_bundle(ARCH_FLAGGED, textwrap.dedent(TRAIN_FLAG_RETRACE)).report
        assert report is not None
        self.assertTrue(report["ok"], report)
        self.assertFalse(report["causality"]["ok"])
        self.assertGreater(report["causality"]["max_delta"], 1.0)
        # Caught on the first row charged under the peeking graph: one batch went through.
        self.assertEqual(report["batches"], 1)

    def test_look_ahead_only_on_text_is_caught(self) -> None:
        report = self.run_bundle(ARCH_PEEK_ON_TEXT, TRAIN_SGD).report
        assert report is not None
        self.assertFalse(report["causality"]["ok"])

    def test_reading_the_next_row_gains_nothing(self) -> None:
        honest = self.run_bundle(ARCH_CAUSAL, TRAIN_SGD).report
        attack = self.run_bundle(ARCH_CROSS_ROW, TRAIN_SGD).report
        assert honest is not None and attack is not None
        # Each row is its own call: "the next row" is the row itself, a wrong hint, never a gain.
        self.assertTrue(attack["causality"]["ok"])
        self.assertGreater(attack["nll_nats"], honest["nll_nats"])

    def test_a_bundle_past_the_gate_cannot_read_the_scorer_or_forge_its_report(self) -> None:
        stream = support.TEXT * 8
        result = self.run_bundle(ARCH_CAUSAL, TRAIN_FORGER, gated=False, stream=stream)
        report = result.report
        assert report is not None
        # The one framed line is the scorer's: the bundle left without finishing, nothing scored.
        self.assertFalse(report["ok"])
        self.assertEqual(report["error"]["stage"], "train")
        self.assertIn("ended without finishing", report["error"]["message"])
        self.assertEqual(report["batches"], 0)
        attack_line = next(line for line in result.stderr.splitlines() if line.startswith("ATTACK "))
        seen = json.loads(attack_line[len("ATTACK ") :])
        # A clean environment: no nonce, no corpus key, nothing of the harness's.
        self.assertFalse([name for name in seen["env"] if name.startswith("HARNESS")], seen["env"])
        # Its descriptors: the standard three and its two pipes to the scorer, nothing else
        # (the listing itself opens one more).
        self.assertTrue(seen["fds"]["ok"])
        self.assertLessEqual(len(seen["fds"]["value"]), 6, seen["fds"])
        # The scorer's /proc is closed to it: environment, memory, maps, descriptors, stdout.
        for key in ("scorer_environ", "scorer_mem", "scorer_maps", "scorer_fds", "scorer_stdout"):
            self.assertFalse(seen[key]["ok"], (key, seen[key]))
        # The scored bytes on disk are sealed: what it reads is not the stream.
        self.assertTrue(seen["stream"]["ok"], seen["stream"])
        self.assertNotIn(support.TEXT[:24].decode("latin-1"), seen["stream"]["value"])
        # Whatever it wrote reached stderr, never the report channel.
        self.assertIn('"nll_nats":0.001', result.stderr)
        self.assertNotIn('"nll_nats":0.001', result.stdout)
        self.assertNotIn(NONCE, json.dumps(seen))

    def test_a_bundle_past_the_gate_cannot_start_a_process(self) -> None:
        # The kernel refuses it (the trainer's seccomp filter), whatever Python path is taken;
        # threads still run (torch's pools, Python's own), so the bundle then trains and is scored.
        result = self.run_bundle(ARCH_CAUSAL, TRAIN_SPAWNER, gated=False)
        report = result.report
        assert report is not None
        attack_line = next(line for line in result.stderr.splitlines() if line.startswith("ATTACK "))
        seen = json.loads(attack_line[len("ATTACK ") :])
        for path in ("subprocess", "system", "fork", "posix_spawn", "multiprocessing", "elastic_launch", "execve"):
            self.assertFalse(seen[path]["ok"], (path, seen[path]))
        self.assertEqual(seen["markers"], [], "a started process wrote its marker")
        self.assertIn("PermissionError", seen["fork"]["error"])
        self.assertIn("PermissionError", seen["posix_spawn"]["error"])
        self.assertTrue(report["ok"], report)
        self.assertGreater(report["batches"], 0)


if __name__ == "__main__":
    unittest.main()
