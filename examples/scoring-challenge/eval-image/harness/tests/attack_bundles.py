"""training.py of bundles that attack the scorer from past the static gate (run ungated).

Each reports what it tried on one stderr line, `ATTACK <json>`, then trains or leaves as said.
Used by tests/test_isolation.py (in the test container) and tests/pid1_attacks.py (each in a
container of its own whose PID 1 is the scorer, as the service runs it).
"""

from __future__ import annotations

import textwrap

from tests.support import TRAIN_SGD

# Every way Python has to start a process, each with a marker the started process would write.
# The seccomp filter refuses all of them; then the bundle trains as usual (then_training).
SPAWNER = r"""
    import ctypes
    import json
    import multiprocessing
    import os
    import subprocess
    import sys

    def attempt(action):
        try:
            return {"ok": True, "value": repr(action())[:200]}
        except BaseException as error:
            return {"ok": False, "error": f"{type(error).__name__}: {error}"[:200]}

    def touch(name):
        return ["/bin/sh", "-c", f"echo ran > {ARTIFACTS}/{name}"]

    def forked():
        pid = os.fork()
        if pid == 0:
            with open(f"{ARTIFACTS}/fork", "w") as handle:
                handle.write("ran")
            os._exit(0)
        return os.waitpid(pid, 0)

    def system():
        status = os.system(f"echo ran > {ARTIFACTS}/system")
        if status != 0:
            raise OSError(f"os.system returned {status}")
        return status

    def elastic():
        from torch.distributed.launcher.api import LaunchConfig, elastic_launch

        config = LaunchConfig(
            min_nodes=1, max_nodes=1, nproc_per_node=1, run_id="attack", rdzv_backend="c10d",
            rdzv_endpoint="127.0.0.1:0", max_restarts=0, monitor_interval=0.1, start_method="spawn",
        )
        return elastic_launch(config, "/bin/sh")("-c", f"echo ran > {ARTIFACTS}/elastic")

    def execve():
        libc = ctypes.CDLL(None, use_errno=True)
        argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", f"echo ran > {ARTIFACTS}/execve".encode(), None)
        libc.execve(b"/bin/sh", argv, None)
        raise OSError(ctypes.get_errno(), "execve")

    def attack(ctx):
        global ARTIFACTS
        ARTIFACTS = ctx.artifacts_dir
        results = {
            "subprocess": attempt(lambda: subprocess.run(touch("subprocess"), check=True)),
            "system": attempt(system),
            "fork": attempt(forked),
            "posix_spawn": attempt(lambda: os.waitpid(os.posix_spawn("/bin/sh", touch("posix_spawn"), {}), 0)),
            "multiprocessing": attempt(lambda: multiprocessing.Process(target=print).start()),
            "elastic_launch": attempt(elastic),
            "execve": attempt(execve),
        }
        results["markers"] = sorted(name for name in os.listdir(ARTIFACTS))
        print("ATTACK " + json.dumps(results), file=sys.stderr, flush=True)
"""

# Reads /proc/<every pid>/environ and cmdline and every descriptor it can open under
# /proc/*/fd, looking for the run's secrets (given to it here, as the test knows them), and
# writes a forged report into every descriptor it can open for writing (but its own wire to the
# scorer); then it trains as usual (then_training), so the run ends with the scorer's report.
PROC_READER = r"""
    import json
    import os
    import sys

    NEEDLES = [s.encode() for s in SECRETS]
    FORGED = ("\nHARNESS-REPORT " + SECRETS[0] + ' {"ok":true,"nll_nats":0.001,"covered_bytes":100000}\n').encode()

    def read(path):
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            return os.read(fd, 1 << 20)
        finally:
            os.close(fd)

    def link(path):
        try:
            return os.readlink(path)
        except OSError:
            return path

    def attack(ctx):
        me = os.getpid()
        wire = {link(f"/proc/{me}/fd/{fd}") for fd in os.listdir(f"/proc/{me}/fd") if int(fd) > 2}
        readable, found, written, writable, pids = [], [], [], [], []
        for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
            pids.append(int(pid))
            paths = [f"/proc/{pid}/environ", f"/proc/{pid}/cmdline"]
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
                readable.append(f"/proc/{pid}/fd")
            except OSError:
                fds = []
            paths += [f"/proc/{pid}/fd/{fd}" for fd in fds]
            for path in paths:
                target = link(path) if "/fd/" in path else path
                if "/fd/" in path and target in wire:
                    continue  # its own pipes to the scorer: reading would only break the run
                try:
                    data = read(path)
                    readable.append(path)
                    found += [path for needle in NEEDLES if needle in data]
                except OSError:
                    pass
                if "/fd/" in path:
                    writable.append((path, target))
        # Written only after everything was read: its own forgery must not be read back as a find.
        for path, target in writable:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                os.write(fd, FORGED)
                os.close(fd)
                written.append(f"{path} -> {target}")
            except OSError:
                pass
        print("ATTACK " + json.dumps({"pids": pids, "readable": readable, "found": found, "written": written}), file=sys.stderr, flush=True)
"""

# Stops every process it can signal, writes a forged report everywhere it can (PID 1's stdout
# included), then sends every other signal and SIGKILL: the scorer, PID 1, must take none of
# them and report that the bundle never finished.
TRAIN_KILLER = r"""
    import json
    import os
    import signal
    import sys

    FORGED = "HARNESS-REPORT " + SECRETS[0] + ' {"ok":true,"nll_nats":0.001,"covered_bytes":100000}'

    def signal_all(numbers, me):
        signalled = []
        for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
            for number in numbers:
                try:
                    if pid != me:
                        os.kill(pid, number)
                        signalled.append(pid)
                except OSError:
                    pass
        return sorted(set(signalled))

    def train(ctx):
        me = os.getpid()
        stopped = signal_all([signal.SIGSTOP], me)
        written = []
        for path in ("/proc/1/fd/1", "/dev/stdout", "/proc/self/fd/1"):
            try:
                with open(path, "w") as handle:
                    handle.write("\n" + FORGED + "\n")
                written.append(path)
            except OSError:
                pass
        others = [n for n in range(1, 65) if n not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCONT)]
        killed = signal_all(others + [signal.SIGKILL], me)
        print("ATTACK " + json.dumps({"pid": me, "stopped": stopped, "killed": killed, "written": written}), file=sys.stderr, flush=True)
        print(FORGED, file=sys.stdout, flush=True)
        os._exit(0)
"""


def then_training(attack: str) -> str:
    """training.py: `attack` (which defines attack(ctx)), then tests.support's SGD training."""
    train = textwrap.dedent(TRAIN_SGD).replace("def train(ctx):\n", "def train(ctx):\n    attack(ctx)\n", 1)
    return textwrap.dedent(attack) + train


TRAIN_SPAWNER = then_training(SPAWNER)
TRAIN_PROC_READER = then_training(PROC_READER)


def with_secrets(training: str, secrets: list[str]) -> str:
    """The bundle's training.py with the secrets it looks for (the nonce first) bound as SECRETS."""
    return f"SECRETS = {secrets!r}\n" + textwrap.dedent(training)
