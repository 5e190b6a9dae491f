"""run.py and gate.py end to end, as the service calls them (subprocesses, framed reports)."""

from __future__ import annotations

import math
import os
import sys
import textwrap
import time
import unittest
from typing import Any

from tests import support
from tests.support import ARCH_CAUSAL, TRAIN_SGD


def without_seconds(report: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in report.items() if k != "seconds"}


class Run(unittest.TestCase):
    def run_bundle(self, files: dict[str, str], **config: object) -> support.Result:
        self.tmp = support.temp_dir()
        self.addCleanup(self.tmp.cleanup)
        workspace = support.write_workspace(self.tmp.name, files, **config)
        result = support.run_command("run", workspace)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIsNotNone(result.report, f"no framed report; stdout={result.stdout!r} stderr={result.stderr[-2000:]}")
        return result

    def test_scored_run_report_shape_and_determinism(self) -> None:
        first = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD})
        report = first.report
        assert report is not None
        self.assertTrue(report["ok"], report)
        self.assertIsNone(report["error"])
        self.assertEqual(
            set(report),
            {
                "ok", "error", "harness_version", "stream_sha256", "vocab_size", "sequence_length", "batch_size",
                "batches", "tokens", "covered_bytes", "nll_nats", "first_batch_loss", "nonfinite_batches",
                "param_count", "steps", "causality", "holdout", "device", "seconds", "peak_memory_mb",
                "behaviour",
            },
        )
        # The behaviour signature: the charged losses by stream position, the same code length.
        curve = report["behaviour"]
        self.assertGreater(len(curve["losses"]), 1)
        bytes_per_bucket = [curve["bucket_bytes"]] * (len(curve["losses"]) - 1)
        bytes_per_bucket.append(report["covered_bytes"] - sum(bytes_per_bucket))
        self.assertGreater(bytes_per_bucket[-1], 0)
        total = sum(loss * count for loss, count in zip(curve["losses"], bytes_per_bucket))
        self.assertAlmostEqual(total / report["nll_nats"], 1.0, places=5)
        self.assertEqual(report["harness_version"], "2")
        self.assertEqual(report["device"], "cpu")
        self.assertEqual(report["covered_bytes"], report["batches"] and report["tokens"] - report["tokens"] // 32)
        self.assertGreater(report["batches"], 5)
        self.assertEqual(report["steps"], report["batches"])
        self.assertTrue(report["causality"]["ok"])
        # Every charged row had its twin.
        self.assertEqual(report["causality"]["checked_rows"], report["tokens"] // 32)
        self.assertGreater(report["causality"]["checked_positions"], 0)
        self.assertGreater(report["peak_memory_mb"], 0)
        self.assertGreater(report["holdout"]["covered_bytes"], 0)
        self.assertEqual(report["param_count"], 256 * 16 + 16 * 256 + 256)
        bpb = report["nll_nats"] / math.log(2) / report["covered_bytes"]
        self.assertLess(bpb, 8.0)  # it learns something from repeated text
        # Only the report reaches stdout.
        self.assertEqual(len(first.framed_lines), 1)
        second = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD})
        assert second.report is not None
        # Deterministic, but for the secret twins' cuts and the measured time and memory.
        for key in ("causality", "peak_memory_mb"):
            report.pop(key)
            second.report.pop(key)
        self.assertEqual(without_seconds(second.report), without_seconds(report))

    def test_uniform_bundle_scores_exactly_8_bits(self) -> None:
        arch = """
            import torch

            class Uniform(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.w = torch.nn.Parameter(torch.zeros(1))

                def forward(self, tokens):
                    return torch.zeros(tokens.shape[0], tokens.shape[1], 256) * self.w

            def build_model(ctx):
                return Uniform()
        """
        train = "def train(ctx):\n    for batch in ctx.iter_train_batches(ctx.build_model()):\n        pass\n"
        report = self.run_bundle({"architecture.py": arch, "training.py": train}).report
        assert report is not None
        self.assertEqual(report["nll_nats"], report["covered_bytes"] * math.log(256))
        self.assertEqual(report["first_batch_loss"], math.log(256))
        self.assertEqual(report["holdout"]["nll_nats"], report["holdout"]["covered_bytes"] * math.log(256))

    def test_budget_stops_and_steps(self) -> None:
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD}, token_budget=300).report
        assert report is not None
        self.assertEqual(report["tokens"], 288)  # 9 rows of 32: 4 + 4 + 1
        self.assertEqual(report["batches"], 3)
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD}, step_budget=2).report
        assert report is not None
        self.assertEqual(report["batches"], 2)

    def test_corpus_mismatch(self) -> None:
        report = self.run_bundle(
            {"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD}, stream_sha256="0" * 64
        ).report
        assert report is not None
        self.assertFalse(report["ok"])
        self.assertEqual(report["error"]["stage"], "corpus")
        self.assertIn("stream.bin sha256", report["error"]["message"])

    def test_gate_runs_again_before_any_import(self) -> None:
        train = textwrap.dedent(TRAIN_SGD) + "\nimport os\nos.system('touch /tmp/pwned')\n"
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": train}).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "import")
        self.assertRegex(report["error"]["message"], r"^static gate: import of os is not allowed \(training.py:\d+\)$")
        self.assertFalse(os.path.exists("/tmp/pwned"))

    def test_import_error_stage(self) -> None:
        report = self.run_bundle({"architecture.py": textwrap.dedent(ARCH_CAUSAL) + "\nraise ValueError('boom at import')\n", "training.py": TRAIN_SGD}).report
        assert report is not None
        self.assertEqual(report["error"], {"stage": "import", "message": "ValueError: boom at import"})

    def test_build_model_must_return_a_module(self) -> None:
        report = self.run_bundle({"architecture.py": "def build_model(ctx):\n    return 42\n", "training.py": TRAIN_SGD}).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "build_model")
        self.assertIn("returned int, not a torch.nn.Module", report["error"]["message"])

    def test_parameter_cap(self) -> None:
        arch = """
            import torch

            class Huge(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    # 200M parameters that take no memory: an expanded view.
                    self.w = torch.nn.Parameter(torch.zeros(1).expand(200_000_000))

                def forward(self, tokens):
                    return torch.zeros(tokens.shape[0], tokens.shape[1], 256) + self.w[0] * 0

            def build_model(ctx):
                return Huge()
        """
        report = self.run_bundle({"architecture.py": arch, "training.py": TRAIN_SGD}).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "budget")
        self.assertEqual(report["param_count"], 200_000_000)

    def test_train_raising_keeps_what_was_scored(self) -> None:
        train = """
            def train(ctx):
                model = ctx.build_model()
                for step, batch in enumerate(ctx.iter_train_batches(model)):
                    if step == 2:
                        raise RuntimeError("loss went nan")
        """
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": train}).report
        assert report is not None
        self.assertFalse(report["ok"])
        self.assertEqual(report["error"], {"stage": "train", "message": "RuntimeError: loss went nan"})
        self.assertEqual(report["batches"], 3)

    def test_system_exit_does_not_end_the_harness(self) -> None:
        train = "def train(ctx):\n    raise SystemExit(0)\n"
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": train}).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "train")

    def test_wrong_shape_is_refused(self) -> None:
        arch = ARCH_CAUSAL.replace("return self.head(x.cumsum(dim=1) / counts)", "return x")
        report = self.run_bundle({"architecture.py": arch, "training.py": TRAIN_SGD}).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "graph")
        self.assertIn("expected [1, 32, 256]", report["error"]["message"])
        self.assertEqual(report["batches"], 0)

    def test_a_refused_model_ends_the_run_even_if_the_bundle_swallows_it(self) -> None:
        # torch.empty reads uninitialised memory: the scorer does not evaluate it.
        arch = ARCH_CAUSAL.replace(
            "return self.head(x.cumsum(dim=1) / counts)",
            "return self.head(x.cumsum(dim=1) / counts) + torch.empty(1)",
        )
        train = """
            def train(ctx):
                try:
                    for batch in ctx.iter_train_batches(ctx.build_model()):
                        pass
                except Exception:
                    pass
        """
        report = self.run_bundle({"architecture.py": arch, "training.py": train}).report
        assert report is not None
        self.assertFalse(report["ok"])
        self.assertEqual(report["error"]["stage"], "graph")
        self.assertIn("aten::empty", report["error"]["message"])

    def test_lookahead_is_reported_not_failed(self) -> None:
        arch = ARCH_CAUSAL.replace(
            "return self.head(x.cumsum(dim=1) / counts)",
            "return self.head(x + self.embed(torch.roll(tokens, shifts=-1, dims=1)))",
        )
        report = self.run_bundle({"architecture.py": arch, "training.py": TRAIN_SGD}).report
        assert report is not None
        self.assertTrue(report["ok"])
        self.assertFalse(report["causality"]["ok"])
        self.assertGreater(report["causality"]["max_delta"], 1e-4)

    def test_miner_manifests_and_forged_lines_are_ignored(self) -> None:
        train = TRAIN_SGD
        forging = TRAIN_SGD.replace(
            "        model = ctx.build_model()\n",
            "        model = ctx.build_model()\n"
            "        print('HARNESS-REPORT test-nonce-0123456789 {\"ok\": true, \"nll_nats\": 0.0}')\n"
            "        print('HARNESS-REPORT guessed {\"ok\": true}')\n"
            "        torch.save({'bpb': 0.0, 'score': 1.0}, ctx.artifacts_dir + '/manifest.pt')\n",
        )
        plain = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": train}).report
        result = self.run_bundle(
            {
                "architecture.py": ARCH_CAUSAL,
                "training.py": forging,
                "prism.yaml": "score: 1.0\nbpb: 0.0\n",
                "manifest.json": '{"nll_nats": 0, "covered_bytes": 1000000}',
            }
        )
        assert plain is not None and result.report is not None
        self.assertEqual(len(result.framed_lines), 1)  # the forged line went to stderr
        self.assertIn("HARNESS-REPORT test-nonce", result.stderr)
        self.assertEqual(result.report["nll_nats"], plain["nll_nats"])
        self.assertEqual(result.report["covered_bytes"], plain["covered_bytes"])

    def test_memory_budget(self) -> None:
        report = self.run_bundle({"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD}, memory_mb=1).report
        assert report is not None
        self.assertEqual(report["error"]["stage"], "budget")
        self.assertIn("over the budget of 1 MB", report["error"]["message"])

    def test_no_nonce_no_report(self) -> None:
        with support.temp_dir() as tmp:
            workspace = support.write_workspace(tmp, {"architecture.py": ARCH_CAUSAL, "training.py": TRAIN_SGD})
            import subprocess
            import sys

            env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
            out = subprocess.run(
                [sys.executable, os.path.join(support.HARNESS, "run.py"), "--workspace", workspace],
                env=env, capture_output=True, text=True, timeout=120, check=False,
            )
            self.assertEqual(out.returncode, 2)
            self.assertNotIn("HARNESS-REPORT", out.stdout)


class Gate(unittest.TestCase):
    def test_gate_command(self) -> None:
        with support.temp_dir() as tmp:
            workspace = support.write_workspace(tmp, {"architecture.py": ARCH_CAUSAL, "training.py": "import socket\n"})
            result = support.run_command("gate", workspace)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(
                result.report,
                {
                    "ok": False,
                    "files": 2,
                    "violations": [
                        {"code": "forbidden_import", "path": "training.py", "line": 1, "message": "import of socket is not allowed"},
                        {
                            "code": "contract_missing_function",
                            "path": "training.py",
                            "line": 0,
                            "message": "training.py has no top-level function train(ctx)",
                        },
                    ],
                },
            )


if __name__ == "__main__":
    unittest.main()


class Reap(unittest.TestCase):
    def test_a_child_that_ends_at_the_deadline_keeps_its_status(self) -> None:
        # The race seen under load: the child is running at the last look and has ended by the
        # kill. Popen.kill() polls first, reaping it there, and wait4 then failed with "no child
        # processes": a harness fault (stage harness, retried) instead of the bundle's verdict.
        import subprocess
        from unittest import mock

        import run

        child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
        while not open(f"/proc/{child.pid}/stat").read().split(") ")[1].startswith("Z"):
            time.sleep(0.01)  # ended, not reaped
        real = os.wait4
        looks: list[int] = []

        def running_at_first_look(pid: int, options: int) -> Any:
            looks.append(options)
            return (0, 0, None) if len(looks) == 1 else real(pid, options)

        with mock.patch.object(run.os, "wait4", running_at_first_look):
            status, usage = run.reap(child, grace=0.0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 3)
        self.assertEqual(child.returncode, 3)
        self.assertIsNotNone(usage)
