#!/usr/bin/env bash
# Test the evaluation image as the service runs it: the harness's unit and end-to-end tests
# (including the example bundles on the real corpus), then the containment check (a malicious
# bundle run with the gates bypassed stays contained). Exits non-zero on any failure.
#
#   bash test.sh            (after build.sh; HARNESS=<dir> mounts a working copy over /opt/harness)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
image=${EVAL_IMAGE:-platform/scoring-eval:local}
docker image inspect "$image" >/dev/null 2>&1 || { echo "test.sh: $image not found: run build.sh first" >&2; exit 1; }

hardened=(
  --rm --network none --read-only --user 65534:65534
  --tmpfs /tmp:rw,noexec,nosuid,nodev,size=512m
  --cap-drop ALL --security-opt no-new-privileges
  --pids-limit 512 --memory 4g --cpus 2
)
mounts=(-v "$here/../bundles:/bundles:ro" -v "$here/../corpus:/corpus:ro")
[ -z "${HARNESS:-}" ] || mounts+=(-v "$(cd "$HARNESS" && pwd):/opt/harness:ro")

echo "test.sh: harness tests in $image" >&2
docker run "${hardened[@]}" "${mounts[@]}" "$image" python3 /opt/harness/tests/run_all.py

# The service's layout: the scorer as the container's PID 1 (the task's `init: false`), against
# bundles past the gate that read every /proc entry and descriptor, and that stop and kill every
# process they can and forge the report (tests/pid1_attacks.py). PID1_INIT=--init runs the old
# layout (Docker's init as PID 1), where these checks fail.
echo "test.sh: the scorer as PID 1 against /proc readers and killers" >&2
pid1=$(mktemp -d)
trap 'rm -rf "$pid1"' EXIT
docker run --rm --network none --user "$(id -u):$(id -g)" -v "$pid1:/out" "${mounts[@]}" "$image" \
  python3 /opt/harness/tests/pid1_attacks.py prepare /out
for attack in reader killer; do
  # shellcheck disable=SC2086
  docker run "${hardened[@]}" ${PID1_INIT:-} --env-file "$pid1/env" -v "$pid1/$attack:/workspace:ro" \
    "${mounts[@]}" "$image" python3 /opt/harness/tests/ungated_run.py \
    >"$pid1/$attack.out" 2>"$pid1/$attack.err" || true
done
docker run --rm --network none -v "$pid1:/out:ro" "${mounts[@]}" "$image" \
  python3 /opt/harness/tests/pid1_attacks.py check /out

# Containment: run the malicious bundle's attempts directly, as if it had passed every gate.
echo "test.sh: containment of a bundle that got past the gates" >&2
work=$(mktemp -d)
trap 'rm -rf "$work" "$pid1"' EXIT
mkdir -p "$work/corpus"
head -c 4096 "$here/../corpus/corpus.txt.gz" >"$work/corpus/stream.bin"
chmod -R a+rX "$work"
# The bundle's attempts run as the bundle's process does (trainer.py: a clean environment);
# what the scorer beside it holds is tested by tests/test_isolation.py.
out=$(docker run "${hardened[@]}" -v "$here/../bundles/malicious:/workspace/bundle:ro" \
  -v "$work/corpus:/workspace/corpus:ro" "$image" \
  python3 -c '
import json, sys
sys.path.append("/workspace/bundle")
import training
print(json.dumps(training.attempt()))
')
echo "$out" >&2
python3 - "$out" <<'PY'
import json, sys
r = json.loads(sys.argv[1].strip().splitlines()[-1])
problems = []
if r["uid"] == 0 or r["gid"] == 0:
    problems.append(f"runs as uid/gid {r['uid']}/{r['gid']}")
for key in ("connect", "resolve", "overwrite_harness", "poison_corpus", "exec_from_tmp"):
    if r[key]["ok"]:
        problems.append(f"{key} succeeded: {r[key]}")
env = r["environ"].get("value") or []
if any(e.startswith("HARNESS_") for e in env):
    problems.append("a harness variable is readable in /proc/self/environ")
if problems:
    print("containment: FAILED: " + "; ".join(problems))
    print("containment: 0 passed, 1 failed")
    sys.exit(1)
print("containment: network, filesystem and exec all held")
print("containment: 1 passed, 0 failed")
PY
