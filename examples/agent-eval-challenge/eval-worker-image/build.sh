#!/usr/bin/env bash
# Build the agent-eval challenge's reference eval worker image (what an Eval VM runs) without any
# container registry: a Debian bookworm minbase root (scripts/debian-rootfs.sh: debootstrap from
# this machine's Debian mirror, cached as a tarball), this machine's `node` binary at
# /usr/bin/node, the bundled worker at /opt/agent-eval/dist/eval-worker.js (its task families,
# generators and checkers, are in the bundle; an operator's arrive sealed with the run's seed) and
# the development attestation key at /opt/agent-eval/dev-keys/, then `docker import`. Runs as an
# unprivileged user; entrypoint `node /opt/agent-eval/dist/eval-worker.js`. Tagged
# platform/agent-eval-eval-worker:<sha256 of the inputs> and :local; a no-op when the hash tag
# exists.
#
# The worker runs each trial in a container of the agent image (agent-image/build.sh) through a
# Docker engine: give it one, e.g. `-v /var/run/docker.sock:/var/run/docker.sock --group-add
# <the socket's gid>` (inside an Eval VM, the VM's own engine).
#
# Needs dist/ built first: `npm run build -w @platform/agent-eval-challenge` (the worker is one
# bundled file, so the image holds no node_modules). Runs non-interactively as root.
#
# Environment: EVAL_WORKER_IMAGE_REPO (default platform/agent-eval-eval-worker),
# EVAL_WORKER_IMAGE_CACHE (default $XDG_CACHE_HOME/platform-agent-eval-eval-worker or
# /var/cache/platform-agent-eval-eval-worker), NODE_BINARY (default: the `node` on PATH),
# DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR, FORCE=1 (rebuild the image and the root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
example=$(cd "$here/.." && pwd)
# shellcheck source=../../../scripts/debian-rootfs.sh
. "$here/../../../scripts/debian-rootfs.sh"
repo_name=${EVAL_WORKER_IMAGE_REPO:-platform/agent-eval-eval-worker}
# Bump when the root recipe changes in a way the inputs hash does not show.
rootfs_recipe=1
started=$SECONDS
# The user the worker runs as (no login, no home of its own).
worker_uid=10001

log() { printf 'eval-worker-image [%4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"

worker="$example/dist/eval-worker.js"
[ -s "$worker" ] ||
  die "$worker is missing: run \`npm run build -w @platform/agent-eval-challenge\` first"
node_binary=$(readlink -f "${NODE_BINARY:-$(command -v node)}") || die "no node binary found"
[ -x "$node_binary" ] || die "$node_binary is not an executable"

# --- the inputs hash: the build scripts, the node binary, the worker bundle, the keys.
inputs_hash() {
  {
    for f in "$here/build.sh" "$here/../../../scripts/debian-rootfs.sh" "$node_binary" "$worker" \
      "$example"/dev-keys/*; do
      printf '%s\n' "${f#"$example/"}"
      sha256sum <"$f" | cut -d' ' -f1
    done
  } | sha256sum | cut -d' ' -f1
}
hash=$(inputs_hash)
tag="$repo_name:$hash"

imported_image_present "$repo_name" "$hash" && exit 0
log "building $tag"

# --- the cached root: minbase has the C and C++ runtimes node links against, and libatomic1,
# which node links against from 26 on (the project's default line); no package more.
cache=${EVAL_WORKER_IMAGE_CACHE:-${XDG_CACHE_HOME:-/var/cache}/platform-agent-eval-eval-worker}
debian_rootfs_workdir agent-eval-eval-worker
work=$rootfs_work
debian_rootfs_cached "$cache" "$rootfs_recipe" /etc/platform-worker-packages libatomic1

# --- the image tarball: the root plus node, the worker and its key (root-owned,
# read-only).
log "adding node ($("$node_binary" --version)), the worker and the development key"
image_root="$work/image"
mkdir -p "$image_root"
tar -C "$image_root" --numeric-owner -xf "$rootfs_tar"
install -o 0 -g 0 -m 755 "$node_binary" "$image_root/usr/bin/node"
install -o 0 -g 0 -m 755 -d "$image_root/opt/agent-eval/dist" \
  "$image_root/opt/agent-eval/dev-keys"
install -o 0 -g 0 -m 644 "$worker" "$image_root/opt/agent-eval/dist/eval-worker.js"
install -o 0 -g 0 -m 644 "$example"/dev-keys/* "$image_root/opt/agent-eval/dev-keys/"
missing=$(chroot "$image_root" ldd /usr/bin/node | grep 'not found' || true)
[ -z "$missing" ] || die "node's libraries are missing from the root: $missing"
log "node in the root: $(chroot "$image_root" /usr/bin/node --version)" || die "node does not start in the root"
printf 'worker:x:%s:%s:eval worker:/tmp:/usr/sbin/nologin\n' "$worker_uid" "$worker_uid" >>"$image_root/etc/passwd"
printf 'worker:x:%s:\n' "$worker_uid" >>"$image_root/etc/group"
tar -C "$image_root" --numeric-owner --one-file-system -cf "$work/image.tar" .

log "docker import"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV HOME=/tmp' \
  --change 'ENV NODE_ENV=production' \
  --change "LABEL org.platform.agent-eval-eval-worker.inputs=$hash" \
  --change "USER $worker_uid:$worker_uid" \
  --change 'WORKDIR /tmp' \
  --change 'ENTRYPOINT ["node", "/opt/agent-eval/dist/eval-worker.js"]' \
  --message "agent-eval-eval-worker $hash" \
  "$work/image.tar" "$tag" >/dev/null
docker tag "$tag" "$repo_name:local"
log "built $tag and $repo_name:local ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"

imported_image_prune org.platform.agent-eval-eval-worker.inputs "$hash"
