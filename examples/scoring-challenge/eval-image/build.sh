#!/usr/bin/env bash
# Build the scoring challenge's evaluation image without any container registry: a Debian
# bookworm root made by debootstrap from this machine's configured Debian mirror, python3,
# python3-torch and python3-numpy installed with apt inside it, the harness at /opt/harness,
# then `docker import`. Tagged platform/scoring-eval:<sha256 of the inputs> and :local.
#
# Idempotent and cheap when nothing changed: the hash tag existing makes it a no-op, and the
# debootstrap root is cached as a tarball keyed by the package list (outside the repo), so a
# harness-only change just re-imports. Runs non-interactively as root (CI=true, no terminal).
# The mirror detection, debootstrap and the root's cache are scripts/debian-rootfs.sh, shared
# with the agent-eval challenge's worker image.
#
# Environment: EVAL_IMAGE_REPO (default platform/scoring-eval), EVAL_IMAGE_CACHE (default
# $XDG_CACHE_HOME/platform-eval or /var/cache/platform-eval), DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR
# (default: read from /etc/apt/sources.list{,.d/*}), FORCE=1 (rebuild the image and the root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rootfs_script="$here/../../../scripts/debian-rootfs.sh"
# shellcheck source=../../../scripts/debian-rootfs.sh
. "$rootfs_script"
repo_name=${EVAL_IMAGE_REPO:-platform/scoring-eval}
# Bump when the root recipe below changes in a way the package list does not show.
rootfs_recipe=4
started=$SECONDS

log() { printf 'eval-image [%4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"

# --- the inputs hash: the build scripts, the package list, every harness file (path + bytes).
inputs_hash() {
  (
    cd "$here"
    {
      echo build.sh
      echo ../../../scripts/debian-rootfs.sh
      echo packages.txt
      find harness -type f ! -path '*/__pycache__/*' ! -name '*.pyc' | sort
    } | while IFS= read -r f; do
      printf '%s\n' "$f"
      sha256sum <"$f" | cut -d' ' -f1
    done
  ) | sha256sum | cut -d' ' -f1
}
hash=$(inputs_hash)
tag="$repo_name:$hash"

imported_image_present "$repo_name" "$hash" && exit 0
log "building $tag"

# --- the package list: one name a line, # comments.
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$' | sort -u)
[ "${#packages[@]}" -gt 0 ] || die "packages.txt lists no package"

# --- the cached root: keyed by the package list, the suite, the architecture and the recipe.
# What only this image's root needs, with /proc mounted after the packages went in.
rootfs_after_install() { # $1: the root
  chroot "$1" python3 -c 'import numpy, torch; print("torch", torch.__version__, "numpy", numpy.__version__)' >&2
  # Pulled in by python3-torch's dependencies but never read by a scored run: libtorch's own
  # test binaries and GIS/imaging/X11 data files (about 90 MB).
  rm -rf "$1/usr/lib/libtorch-test" "$1/usr/share/proj" "$1/usr/share/gdal" \
    "$1"/usr/share/gdcm-* "$1/usr/share/X11/locale" "$1/usr/share/fonts"
  chroot "$1" python3 -c 'import numpy, torch; torch.nn.Linear(2, 2)(torch.ones(1, 2)).sum().item()' ||
    die "torch no longer imports after trimming"
  mkdir -p "$1/workspace" "$1/opt"
}
cache=${EVAL_IMAGE_CACHE:-${XDG_CACHE_HOME:-/var/cache}/platform-eval}
debian_rootfs_workdir scoring-eval
work=$rootfs_work
debian_rootfs_cached "$cache" "$rootfs_recipe" /etc/platform-eval-packages "${packages[@]}"

# --- the image tarball: the cached root plus the harness (root-owned, read-only to the runner).
log "adding the harness"
cp "$rootfs_tar" "$work/image.tar"
mkdir -p "$work/add/opt/harness"
cp -R "$here/harness/." "$work/add/opt/harness/"
find "$work/add/opt/harness" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +
find "$work/add/opt" -type d -exec chmod 755 {} +
find "$work/add/opt" -type f -exec chmod 644 {} +
tar -C "$work/add" --numeric-owner --owner=0 --group=0 --sort=name -rf "$work/image.tar" ./opt/harness

log "docker import"
docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV HOME=/tmp' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'ENV PYTHONUNBUFFERED=1' \
  --change 'ENV PYTHONNOUSERSITE=1' \
  --change "LABEL org.platform.scoring-eval.inputs=$hash" \
  --change 'USER 65534:65534' \
  --change 'WORKDIR /workspace' \
  --change 'CMD ["python3", "/opt/harness/run.py"]' \
  --message "scoring-eval $hash" \
  "$work/image.tar" "$tag" >/dev/null
docker tag "$tag" "$repo_name:local"
log "built $tag and $repo_name:local ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"

imported_image_prune org.platform.scoring-eval.inputs "$hash"
