"""Run-time guards and determinism set-up."""

from __future__ import annotations

import os
import pickle
import tempfile
import unittest

import torch

import harness_runtime


class Evil:
    def __reduce__(self):  # what a pickle-borne payload looks like
        return (os.getpid, ())


class Guards(unittest.TestCase):
    def test_loads_and_saves_stay_in_the_artifacts_dir(self) -> None:
        with tempfile.TemporaryDirectory() as artifacts:
            harness_runtime.guard_file_loads(artifacts)
            torch.save({"w": torch.ones(2)}, os.path.join(artifacts, "ok.pt"))
            self.assertTrue(torch.equal(torch.load(os.path.join(artifacts, "ok.pt"))["w"], torch.ones(2)))
            with self.assertRaisesRegex(PermissionError, "torch.load outside the artifacts dir"):
                torch.load("/etc/passwd")
            with self.assertRaisesRegex(PermissionError, "torch.load outside the artifacts dir"):
                torch.load(os.path.join(artifacts, "..", "x.pt"))
            with self.assertRaisesRegex(PermissionError, "torch.save outside the artifacts dir"):
                torch.save({}, "/tmp/elsewhere.pt")
            with self.assertRaisesRegex(PermissionError, "torch.jit.load outside the artifacts dir"):
                torch.jit.load("/etc/passwd")

    def test_pickled_callables_are_refused(self) -> None:
        with tempfile.TemporaryDirectory() as artifacts:
            harness_runtime.guard_file_loads(artifacts)
            path = os.path.join(artifacts, "evil.pt")
            torch.save({"payload": Evil()}, path)
            with self.assertRaises(pickle.UnpicklingError):
                torch.load(path)
            # Asking for the unsafe loader does not help.
            with self.assertRaises(pickle.UnpicklingError):
                torch.load(path, weights_only=False)

    def test_seeds_are_forced(self) -> None:
        harness_runtime.force_seeds(1337)
        a = torch.rand(3)
        harness_runtime.force_seeds(1337)
        self.assertTrue(torch.equal(a, torch.rand(3)))
        self.assertTrue(torch.are_deterministic_algorithms_enabled())

    def test_threads_and_device(self) -> None:
        self.assertGreaterEqual(harness_runtime.cpu_threads(), 1)
        self.assertIn(harness_runtime.resolve_device("auto"), ("cpu", "cuda"))
        self.assertEqual(harness_runtime.resolve_device("cpu"), "cpu")
        with self.assertRaisesRegex(RuntimeError, "unknown device"):
            harness_runtime.resolve_device("tpu")


if __name__ == "__main__":
    unittest.main()
