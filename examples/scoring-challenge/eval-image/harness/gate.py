"""`python3 /opt/harness/gate.py`: the static gates and the contract over /workspace/bundle.

No bundle code is executed. Prints one framed report line (see the protocol in the README).
"""

from __future__ import annotations

import argparse
import os
import sys

sys.dont_write_bytecode = True

import harness_gate  # noqa: E402
import harness_process  # noqa: E402
import harness_report  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description="static gates over a scoring bundle")
    parser.add_argument("--workspace", default="/workspace", help="holds bundle/ (tests only)")
    options = parser.parse_args()
    harness_process.make_undumpable()  # before the nonce is read: no /proc of this process to read it from
    try:
        nonce = harness_report.take_nonce()
    except harness_report.NonceError as error:
        print(f"gate: {error}", file=sys.stderr)
        return 2
    bundle = os.path.join(options.workspace, "bundle")
    if not os.path.isdir(bundle):
        report = {
            "ok": False,
            "files": 0,
            "violations": [
                {"code": "contract_missing_file", "path": "", "line": 0, "message": "no bundle at /workspace/bundle"}
            ],
        }
    else:
        report = harness_gate.gate_report(bundle)
    harness_report.emit(sys.stdout, nonce, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
