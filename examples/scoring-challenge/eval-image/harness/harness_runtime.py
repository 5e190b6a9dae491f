"""Process set-up the harness owns: seeds, deterministic kernels, threads, guarded file loads."""

from __future__ import annotations

import math
import os
import random
from typing import Any, Callable

# cuBLAS needs this before CUDA initialises, or deterministic algorithms refuse matmuls.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy  # noqa: E402
import torch  # noqa: E402


def cpu_threads() -> int:
    """Threads the container may actually use: its CFS quota (cgroup v2 or v1), else affinity.

    Fixing the count keeps CPU reductions in one order for a given limit, and stops the default
    (one thread per host core) from thrashing a 2-CPU quota.
    """
    available = len(os.sched_getaffinity(0))
    quota = None
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as handle:
            text = handle.read().split()
        if text and text[0] != "max":
            quota = int(text[0]) / int(text[1])
    except (OSError, ValueError, IndexError):
        try:
            with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", encoding="ascii") as handle:
                q = int(handle.read())
            with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us", encoding="ascii") as handle:
                p = int(handle.read())
            if q > 0 and p > 0:
                quota = q / p
        except (OSError, ValueError):
            quota = None
    if quota is not None:
        available = min(available, max(1, math.ceil(quota)))
    return max(1, available)


def configure_threads(threads: int) -> None:
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set once in this process (tests); the value is the same


def resolve_device(requested: str) -> str:
    """`auto` -> cuda when a GPU is usable, else cpu. An unusable explicit `cuda` is an error."""
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device cuda requested but no CUDA device is available")
    if requested not in ("cpu", "cuda"):
        raise RuntimeError(f"unknown device {requested!r}")
    return requested


def force_seeds(seed: int) -> None:
    """Every seed a bundle could draw from, and deterministic kernels on."""
    random.seed(seed)
    numpy.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


_guard: dict[str, object] = {"root": "", "installed": False}


def guard_file_loads(artifacts_dir: str) -> None:
    """torch.load/save (and jit's) refuse paths outside the artifacts dir at run time too.

    The static gate already requires the path to be built from ctx.artifacts_dir; this catches
    whatever reached the function another way. File-like objects pass (a bundle cannot open files).
    """
    _guard["root"] = os.path.realpath(artifacts_dir)
    if _guard["installed"]:
        return
    _guard["installed"] = True

    def check(name: str, target: Any) -> None:
        if isinstance(target, (str, bytes, os.PathLike)):
            root = str(_guard["root"])
            path = os.path.realpath(os.fsdecode(target))
            if path != root and not path.startswith(root + os.sep):
                raise PermissionError(f"{name} outside the artifacts dir is not allowed: {path}")

    def wrap(name: str, original: Callable[..., Any], index: int, weights_only: bool = False) -> Callable[..., Any]:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            target = args[index] if len(args) > index else kwargs.get("f")
            check(name, target)
            if weights_only:
                # A pickle in the artifacts dir could name any callable (os.system): only
                # tensors and plain containers may be loaded.
                kwargs["weights_only"] = True
            return original(*args, **kwargs)

        guarded.__name__ = getattr(original, "__name__", name)
        guarded.__doc__ = getattr(original, "__doc__", None)
        return guarded

    import torch.serialization

    load = wrap("torch.load", torch.serialization.load, 0, weights_only=True)
    save = wrap("torch.save", torch.serialization.save, 1)
    torch.load = load
    torch.save = save
    torch.serialization.load = load
    torch.serialization.save = save
    torch.jit.load = wrap("torch.jit.load", torch.jit.load, 0)
    torch.jit.save = wrap("torch.jit.save", torch.jit.save, 1)

