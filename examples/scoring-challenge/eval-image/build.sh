#!/usr/bin/env bash
# Build the scoring challenge's evaluation image without any container registry: a Debian
# bookworm root made by debootstrap from this machine's configured Debian mirror, python3,
# python3-torch and python3-numpy installed with apt inside it, the harness at /opt/harness,
# then `docker import`. Tagged platform/scoring-eval:<sha256 of the inputs> and :local.
#
# Idempotent and cheap when nothing changed: the hash tag existing makes it a no-op, and the
# debootstrap root is cached as a tarball keyed by the package list (outside the repo), so a
# harness-only change just re-imports. Runs non-interactively as root (CI=true, no terminal).
#
# Environment: EVAL_IMAGE_REPO (default platform/scoring-eval), EVAL_IMAGE_CACHE (default
# $XDG_CACHE_HOME/platform-eval or /var/cache/platform-eval), DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR
# (default: read from /etc/apt/sources.list{,.d/*}), FORCE=1 (rebuild the image and the root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_name=${EVAL_IMAGE_REPO:-platform/scoring-eval}
suite=bookworm
# Bump when the root recipe below changes in a way the package list does not show.
rootfs_recipe=4
force=${FORCE:-0}
started=$SECONDS

log() { printf 'eval-image [%4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"

# --- the inputs hash: the build script, the package list, every harness file (path + bytes).
inputs_hash() {
  (
    cd "$here"
    {
      echo build.sh
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

if [ "$force" != 1 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  docker tag "$tag" "$repo_name:local"
  log "$tag present; tagged $repo_name:local (nothing to build)"
  exit 0
fi
log "building $tag"

# --- the package list: one name a line, # comments.
mapfile -t packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$' | sort -u)
[ "${#packages[@]}" -gt 0 ] || die "packages.txt lists no package"

# --- the Debian mirror this machine is configured with (deb822 .sources or one-line .list).
mirror_for() { # $1: "main" or "security"
  local files=() f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ "${#files[@]}" -gt 0 ] || return 0
  # Plain POSIX awk (mawk on a fresh Debian): the first matching entry wins.
  awk -v want="$1" '
    function pick(uri, suites) {
      if (done || uri !~ /^https?:\/\//) return
      if (want == "security" && suites ~ /-security/) { print uri; done = 1 }
      if (want == "main" && suites ~ /(^|[ \t])bookworm([ \t]|$)/ && uri !~ /security/) { print uri; done = 1 }
    }
    FNR == 1 { if (u != "") pick(u, s); u = ""; s = "" }
    FILENAME ~ /\.sources$/ {
      if ($0 ~ /^[ \t]*$/) { if (u != "") pick(u, s); u = ""; s = ""; next }
      if ($1 == "URIs:") u = $2
      if ($1 == "Suites:") { $1 = ""; s = $0 }
      next
    }
    /^deb[ \t]/ {
      i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
      pick($i, $(i + 1))
    }
    END { if (u != "") pick(u, s) }
  ' "${files[@]}"
}
mirror=${DEBIAN_MIRROR:-$(mirror_for main)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-$(mirror_for security)}
log "mirror $mirror${security:+, security $security}"

# --- the cached root: keyed by the package list, the suite, the architecture and the recipe.
arch=$(dpkg --print-architecture)
cache=${EVAL_IMAGE_CACHE:-${XDG_CACHE_HOME:-/var/cache}/platform-eval}
mkdir -p "$cache"
rootfs_key=$(printf '%s\n' "recipe=$rootfs_recipe" "suite=$suite" "arch=$arch" "${packages[@]}" | sha256sum | cut -c1-32)
rootfs_tar="$cache/rootfs-$suite-$arch-$rootfs_key.tar"

work=$(mktemp -d "${TMPDIR:-/tmp}/scoring-eval.XXXXXX")
root="$work/root"
cleanup() {
  local m
  for m in proc sys dev/pts; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m" || true
  done
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

build_rootfs() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
  fi
  log "debootstrap $suite ($arch, minbase) from $mirror"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }

  {
    echo "deb $mirror $suite main"
    echo "deb $mirror $suite-updates main"
    [ -z "$security" ] || echo "deb $security $suite-security main"
  } >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # No daemon may start inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"

  log "apt-get install ${packages[*]} (in the chroot)"
  chroot "$root" apt-get -qq -o Acquire::Retries=3 update
  chroot "$root" apt-get -y -q -o Acquire::Retries=3 -o Dpkg::Use-Pty=0 \
    install --no-install-recommends "${packages[@]}" >"$work/apt.log" 2>&1 ||
    { tail -n 30 "$work/apt.log" >&2; die "apt-get install failed (log above)"; }
  chroot "$root" python3 -c 'import numpy, torch; print("torch", torch.__version__, "numpy", numpy.__version__)' >&2
  # The versions that went in, for the record (and the image label).
  chroot "$root" dpkg-query -W -f '${Package}=${Version}\n' "${packages[@]}" >"$root/etc/platform-eval-packages"

  log "trimming (apt lists and caches, docs, man pages, locales, logs)"
  chroot "$root" apt-get clean
  # Pulled in by python3-torch's dependencies but never read by a scored run: libtorch's own
  # test binaries and GIS/imaging/X11 data files (about 90 MB).
  rm -rf "$root/usr/lib/libtorch-test" "$root/usr/share/proj" "$root/usr/share/gdal" \
    "$root"/usr/share/gdcm-* "$root/usr/share/X11/locale" "$root/usr/share/fonts"
  chroot "$root" python3 -c 'import numpy, torch; torch.nn.Linear(2, 2)(torch.ones(1, 2)).sum().item()' ||
    die "torch no longer imports after trimming"
  umount -l "$root/proc"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/usr/share/linda \
    "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/* "$root"/root/.cache \
    "$root/usr/sbin/policy-rc.d"
  : >"$root/etc/resolv.conf"
  mkdir -p "$root/workspace" "$root/opt"
  chmod 1777 "$root/tmp"

  log "caching the root at $rootfs_tar"
  tar -C "$root" --numeric-owner --one-file-system \
    --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' \
    -cf "$rootfs_tar.part.$$" .
  mv -f "$rootfs_tar.part.$$" "$rootfs_tar"
  # Roots of other package lists or recipes are dead weight (over 1 GB each).
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -path "$rootfs_tar" -delete
  log "root cached ($(du -h "$rootfs_tar" | cut -f1))"
}

# One builder at a time per cache (CI and a developer may race on the same machine).
exec 9>"$cache/.lock"
flock 9
if [ "$force" = 1 ] || [ ! -s "$rootfs_tar" ]; then
  build_rootfs
else
  log "using cached root $rootfs_tar"
fi

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

# Earlier builds of this image are 1.2 GB each (an import shares no layers): drop their tags
# (KEEP_OLD=1 keeps them). One still used by a container stays; that is fine.
if [ "${KEEP_OLD:-0}" != 1 ]; then
  docker image ls --filter "label=org.platform.scoring-eval.inputs" --format '{{.Repository}}:{{.Tag}}' |
    grep -v -e ":$hash\$" -e ':local$' -e ':<none>$' | while read -r old; do
      docker image rm "$old" >/dev/null 2>&1 && log "removed old $old" || true
    done
fi
