"""The attacks that need the service's layout: the scorer as the container's PID 1 (no Docker init).

test.sh runs this in three steps, because each attack needs a container of its own:
  python3 pid1_attacks.py prepare <dir>    writes <dir>/<attack>/ (a workspace) and <dir>/env
  (test.sh runs tests/ungated_run.py in each workspace as PID 1, stdout and stderr to files)
  python3 pid1_attacks.py check <dir>      judges <dir>/<attack>.out and .err; exits 1 on a failure

The attacks (tests/attack_bundles.py), past the static gate: a bundle that reads every
/proc/<pid>/environ, cmdline and descriptor it can, looking for the nonce and the corpus key, and
writes a forged report into every descriptor it can open; a bundle that stops and kills every
process it can signal and forges the report. The first must find nothing and the run must end
with the scorer's honest report; the second must leave the scorer alive, reporting that the
bundle never finished. Run with `docker run --init` instead (Docker's init as PID 1, the old
layout) the checks fail: the nonce is in /proc/1/environ and the forged report wins.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

NONCE = "pid1-attack-nonce-0123456789"
ATTACKS = ("reader", "killer")
FORGED_MARK = '"nll_nats":0.001'


def prepare(root: str) -> None:
    from tests import attack_bundles, support

    secrets = [NONCE, support.CORPUS_KEY.hex()]
    bundles = {"reader": attack_bundles.TRAIN_PROC_READER, "killer": attack_bundles.TRAIN_KILLER}
    for name, training in bundles.items():
        files = {"architecture.py": support.ARCH_CAUSAL, "training.py": attack_bundles.with_secrets(training, secrets)}
        support.write_workspace(os.path.join(root, name), files, stream=support.TEXT * 8)
    with open(os.path.join(root, "env"), "w", encoding="ascii") as handle:
        handle.write(f"HARNESS_NONCE={NONCE}\nHARNESS_CORPUS_KEY={support.CORPUS_KEY.hex()}\n")
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chmod(os.path.join(directory, name), 0o755 if name in dirs else 0o644)
    os.chmod(root, 0o755)


def framed(stdout: str) -> list[dict[str, object]]:
    prefix = f"HARNESS-REPORT {NONCE} "
    return [json.loads(line[len(prefix) :]) for line in stdout.splitlines() if line.startswith(prefix)]


def attack_line(stderr: str) -> dict[str, object]:
    lines = [line for line in stderr.splitlines() if line.startswith("ATTACK ")]
    return json.loads(lines[-1][len("ATTACK ") :]) if lines else {}


def judge(name: str, stdout: str, stderr: str) -> list[str]:
    problems = []
    reports = framed(stdout)
    seen = attack_line(stderr)
    if not seen:
        problems.append("the bundle never reported what it tried")
    if len(reports) != 1:
        problems.append(f"{len(reports)} framed reports on stdout, not the scorer's one")
    if FORGED_MARK in stdout:
        problems.append("the forged report reached stdout")
    report = reports[-1] if reports else {}
    if name == "reader":
        if seen.get("found"):
            problems.append(f"a secret was readable: {seen['found']}")
        # Its cmdline is anyone's to read (and holds no secret); nothing else of the scorer is.
        opened = [path for path in seen.get("readable", []) if path.startswith("/proc/1/") and path != "/proc/1/cmdline"]  # type: ignore[union-attr]
        if opened:
            problems.append(f"the scorer's /proc was readable: {opened}")
        if report.get("ok") is not True or not report.get("batches"):
            problems.append(f"the honest run did not end with its report: {report}")
    if name == "killer":
        if 1 not in seen.get("stopped", [1]) or 1 not in seen.get("killed", [1]):  # type: ignore[operator]
            problems.append("the bundle could not even send PID 1 a signal: the attack did not run")
        error = report.get("error") or {}
        if report.get("ok") is not False or "ended without finishing" not in str(error.get("message")):  # type: ignore[union-attr]
            problems.append(f"the scorer did not report the bundle's end: {report}")
    return problems


def check(root: str) -> int:
    failed = 0
    for name in ATTACKS:
        with open(os.path.join(root, f"{name}.out"), encoding="utf-8", errors="replace") as handle:
            stdout = handle.read()
        with open(os.path.join(root, f"{name}.err"), encoding="utf-8", errors="replace") as handle:
            stderr = handle.read()
        problems = judge(name, stdout, stderr)
        print(f"pid1 {name}: " + ("; ".join(problems) if problems else "held"))
        if problems:
            print(stderr[-3000:])
        failed += bool(problems)
    print(f"pid1: {len(ATTACKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    mode, root = sys.argv[1], sys.argv[2]
    if mode == "prepare":
        prepare(root)
        sys.exit(0)
    sys.exit(check(root))
