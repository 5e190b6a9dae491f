#!/usr/bin/env bash
# Build the image the agent-eval challenge's agents run in, one container per trial, without any
# container registry: a Debian bookworm minbase root (scripts/debian-rootfs.sh: debootstrap from
# this machine's Debian mirror, cached as a tarball) with python3-minimal and its standard
# library, then `docker import`.
# The eval worker gives each trial its files under /workspace (read-only): the agent's at
# /workspace/agent, which /agent links to, so an agent runs as `python3 /agent/agent.py`. No
# network tools, no compilers, no secrets: the image is the same for every agent.
# Runs as an unprivileged numeric user (the sandbox would pick one anyway); entrypoint none.
# Tagged platform/agent-eval-agent:<sha256 of the inputs> and :local; a no-op when the hash tag
# exists. Runs non-interactively as root.
#
# Environment: AGENT_IMAGE_REPO (default platform/agent-eval-agent), AGENT_IMAGE_CACHE (default
# $XDG_CACHE_HOME/platform-agent-eval-agent or /var/cache/platform-agent-eval-agent),
# DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR, FORCE=1 (rebuild the image and the root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
example=$(cd "$here/.." && pwd)
# shellcheck source=../../../scripts/debian-rootfs.sh
. "$here/../../../scripts/debian-rootfs.sh"
repo_name=${AGENT_IMAGE_REPO:-platform/agent-eval-agent}
# Bump when the root recipe changes in a way the inputs hash does not show.
rootfs_recipe=1
# python3-minimal alone has no json, csv or decimal: the standard library comes with it.
packages=(python3-minimal libpython3-stdlib)
started=$SECONDS
# The user agents run as (no login; /tmp, the only writable place, is its home).
agent_uid=10002

log() { printf 'agent-image [%4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"

# --- the inputs hash: the build scripts and the package list (the mirror's versions are recorded
# in the root, at /etc/platform-agent-packages).
inputs_hash() {
  {
    for f in "$here/build.sh" "$here/../../../scripts/debian-rootfs.sh"; do
      printf '%s\n' "${f#"$example/"}"
      sha256sum <"$f" | cut -d' ' -f1
    done
    printf '%s\n' "recipe=$rootfs_recipe" "${packages[@]}"
  } | sha256sum | cut -d' ' -f1
}
hash=$(inputs_hash)
tag="$repo_name:$hash"

imported_image_present "$repo_name" "$hash" && exit 0
log "building $tag"

cache=${AGENT_IMAGE_CACHE:-${XDG_CACHE_HOME:-/var/cache}/platform-agent-eval-agent}
debian_rootfs_workdir agent-eval-agent
work=$rootfs_work
debian_rootfs_cached "$cache" "$rootfs_recipe" /etc/platform-agent-packages "${packages[@]}"

image_root="$work/image"
mkdir -p "$image_root"
tar -C "$image_root" --numeric-owner -xf "$rootfs_tar"
# /agent is where agents expect themselves; the worker puts them at /workspace/agent.
ln -s /workspace/agent "$image_root/agent"
install -o 0 -g 0 -m 755 -d "$image_root/workspace"
log "python in the root: $(chroot "$image_root" /usr/bin/python3 --version 2>&1)" ||
  die "python3 does not start in the root"
printf 'agent:x:%s:%s:agent:/tmp:/usr/sbin/nologin\n' "$agent_uid" "$agent_uid" >>"$image_root/etc/passwd"
printf 'agent:x:%s:\n' "$agent_uid" >>"$image_root/etc/group"
tar -C "$image_root" --numeric-owner --one-file-system -cf "$work/image.tar" .

log "docker import"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV HOME=/tmp' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change "LABEL org.platform.agent-eval-agent.inputs=$hash" \
  --change "USER $agent_uid:$agent_uid" \
  --change 'WORKDIR /tmp' \
  --message "agent-eval-agent $hash" \
  "$work/image.tar" "$tag" >/dev/null
docker tag "$tag" "$repo_name:local"
log "built $tag and $repo_name:local ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"

imported_image_prune org.platform.agent-eval-agent.inputs "$hash"
