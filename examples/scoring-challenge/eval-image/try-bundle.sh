#!/usr/bin/env bash
# Run one bundle through the evaluation image the way the service does: gate.py, then run.py,
# each in a fresh container with the hardened flags (no network, read-only root, non-root user,
# a small noexec /tmp, no capabilities, limits). Prints both framed reports.
#
#   bash try-bundle.sh <bundle dir or .zip> [token_budget (default 262144)]
#
# Environment: EVAL_IMAGE (default platform/scoring-eval:local), STEP_BUDGET, BATCH_SIZE,
# SEQUENCE_LENGTH, SEED, HOLDOUT_BYTES (default 65536), HARNESS (a harness dir to mount over
# /opt/harness, for working on the harness without rebuilding).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
corpus_dir="$here/../corpus"
image=${EVAL_IMAGE:-platform/scoring-eval:local}
bundle=${1:?usage: try-bundle.sh <bundle dir or .zip> [token_budget]}
budget=${2:-262144}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/bundle" "$work/corpus"
if [ -d "$bundle" ]; then
  cp -R "$bundle/." "$work/bundle/"
else
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$bundle" "$work/bundle"
fi

# The stream is the start of the non-held-out corpus; the holdout a slice of the held-out tail.
# Both are sealed with a fresh key, as the service seals them; only run.py gets the key.
key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
python3 - "$corpus_dir" "$work" "$budget" "${HOLDOUT_BYTES:-65536}" "$key" "$here/harness" <<'EOF'
import gzip, hashlib, json, os, sys
corpus_dir, work, budget, holdout_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
key = bytes.fromhex(sys.argv[5])
sys.path.insert(0, sys.argv[6])
from harness_corpus import unseal
meta = json.load(open(os.path.join(corpus_dir, "corpus.json")))
data = gzip.open(os.path.join(corpus_dir, meta["file"])).read()
assert hashlib.sha256(data).hexdigest() == meta["sha256"], "corpus sha256 mismatch"
offset = meta["holdout"]["offset"]
stream, holdout = data[: min(budget, offset)], data[offset : offset + holdout_bytes]
open(os.path.join(work, "corpus", "stream.bin"), "wb").write(unseal(stream, key, "stream"))
open(os.path.join(work, "corpus", "holdout.bin"), "wb").write(unseal(holdout, key, "holdout"))
run = {
    "seed": int(os.environ.get("SEED", "1337")),
    "vocab_size": 256,
    "sequence_length": int(os.environ.get("SEQUENCE_LENGTH", "128")),
    "batch_size": int(os.environ.get("BATCH_SIZE", "8")),
    "token_budget": budget,
    "step_budget": int(os.environ.get("STEP_BUDGET", "1000000")),
    "memory_mb": 4096,
    "stream_sha256": hashlib.sha256(stream).hexdigest(),
    "holdout_sha256": hashlib.sha256(holdout).hexdigest(),
    "device": "auto",
}
json.dump(run, open(os.path.join(work, "run.json"), "w"))
EOF
chmod -R a+rX "$work"

mounts=(-v "$work:/workspace:ro")
[ -z "${HARNESS:-}" ] || mounts+=(-v "$(cd "$HARNESS" && pwd):/opt/harness:ro")
hardened=(
  --rm --network none --read-only --user 65534:65534
  --tmpfs /tmp:rw,noexec,nosuid,nodev,size=256m
  --cap-drop ALL --security-opt no-new-privileges
  --pids-limit 512 --memory 4g --cpus 2
)
for command in gate run; do
  nonce=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
  secrets=(-e HARNESS_NONCE="$nonce")
  [ "$command" = gate ] || secrets+=(-e HARNESS_CORPUS_KEY="$key")
  start=$(date +%s%N)
  out=$(docker run "${hardened[@]}" "${mounts[@]}" "${secrets[@]}" "$image" \
    python3 "/opt/harness/$command.py" 2>"$work.stderr") || true
  end=$(date +%s%N)
  if [ -n "${VERBOSE:-}" ]; then sed 's/^/  log: /' "$work.stderr" >&2; fi
  rm -f "$work.stderr"
  line=$(printf '%s\n' "$out" | grep -F "HARNESS-REPORT $nonce " | tail -n 1 || true)
  ms=$(((end - start) / 1000000))
  printf '%s (%d.%d s wall): %s\n' "$command" $((ms / 1000)) $((ms % 1000 / 100)) "${line#HARNESS-REPORT "$nonce" }"
done
