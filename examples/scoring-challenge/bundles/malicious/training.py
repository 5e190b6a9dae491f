"""EXAMPLE MALICIOUS BUNDLE: exfiltration and escape attempts.

The static gate refuses it before any of it runs (import of socket/os, call of open, ...).
`attempt()` is what a bundle that slipped past the gates would try; eval-image/test.sh runs it
directly in the evaluation container, with the service's flags, to show the container holds:
no network, a read-only root and workspace, a non-root user, and no nonce in the environment.
"""

import json
import os
import socket

import torch
import torch.nn.functional as F


def _try(action):
    try:
        return {"ok": True, "value": action()}
    except Exception as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}


def _environ():
    with open("/proc/self/environ", "rb") as handle:
        return handle.read().decode("latin-1").split("\0")


def _connect():
    with socket.create_connection(("1.1.1.1", 443), timeout=3):
        return "connected"


def _resolve():
    return socket.gethostbyname("deb.debian.org")


def _overwrite_harness():
    with open("/opt/harness/run.py", "a") as handle:
        handle.write("# pwned\n")
    return "wrote /opt/harness/run.py"


def _poison_corpus():
    with open("/workspace/corpus/stream.bin", "r+b") as handle:
        handle.write(b"\0")
    return "wrote /workspace/corpus/stream.bin"


def _exec_from_tmp():
    path = "/tmp/payload.sh"
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\necho escaped\n")
    os.chmod(path, 0o755)
    output = os.popen(path + " 2>&1").read()
    if output.strip() != "escaped":
        raise PermissionError(f"payload did not run: {output.strip() or 'no output'}")
    return output


def attempt():
    """Every escape this bundle would try, each result recorded (used by test.sh)."""
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "environ": _try(_environ),
        "connect": _try(_connect),
        "resolve": _try(_resolve),
        "overwrite_harness": _try(_overwrite_harness),
        "poison_corpus": _try(_poison_corpus),
        "exec_from_tmp": _try(_exec_from_tmp),
    }


def train(ctx):
    print(json.dumps(attempt()))
    model = ctx.build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    for batch in ctx.iter_train_batches(model):
        loss = F.cross_entropy(model(batch.tokens)[:, :-1].reshape(-1, 256), batch.tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
