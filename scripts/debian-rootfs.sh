# shellcheck shell=bash
# A Debian root file system for an image built without any container registry: debootstrap
# (minbase) from this machine's configured Debian mirror, a package list installed with apt in a
# chroot, trimmed, and cached as a tarball keyed by what went into it. Sourced by the images'
# build scripts (examples/scoring-challenge/eval-image/build.sh,
# examples/agent-eval-challenge/worker-image/build.sh), which add their own files on top and
# `docker import` the result.
#
# The caller defines `log` and `die`, runs as root, and may define `rootfs_after_install ROOT`
# (run in the chroot stage with /proc mounted, after the packages: checks, extra trimming).
# Environment: DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR (default: read from
# /etc/apt/sources.list{,.d/*}), FORCE=1 (rebuild the cached root).

debian_suite=bookworm

# The first http(s) mirror of this machine's apt sources (deb822 .sources or one-line .list)
# serving the suite ("main") or its security updates ("security"); nothing when none does.
debian_mirror_for() { # $1: "main" or "security"
  local files=() f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ "${#files[@]}" -gt 0 ] || return 0
  # Plain POSIX awk (mawk on a fresh Debian): the first matching entry wins.
  awk -v want="$1" -v suite="$debian_suite" '
    function pick(uri, suites) {
      if (done || uri !~ /^https?:\/\//) return
      if (want == "security" && suites ~ /-security/) { print uri; done = 1 }
      if (want == "main" && suites ~ ("(^|[ \t])" suite "([ \t]|$)") && uri !~ /security/) { print uri; done = 1 }
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

# A fresh work directory ($rootfs_work, the root at $rootfs_root), unmounted and removed on exit.
debian_rootfs_workdir() { # $1: a name for the directory
  rootfs_work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  rootfs_root="$rootfs_work/root"
  trap debian_rootfs_cleanup EXIT
}

debian_rootfs_cleanup() {
  local m
  for m in proc sys dev/pts; do
    mountpoint -q "$rootfs_root/$m" 2>/dev/null && umount -l "$rootfs_root/$m" || true
  done
  rm -rf --one-file-system "$rootfs_work"
}

# The cached root for RECIPE and the packages, built into $rootfs_root when missing (or FORCE=1);
# sets $rootfs_tar. One builder at a time per cache directory (fd 9 holds its lock).
# Usage: debian_rootfs_cached CACHE_DIR RECIPE RECORD_FILE [PACKAGE...]
#   RECORD_FILE: where in the root the installed versions are listed (e.g. /etc/x-packages).
debian_rootfs_cached() {
  local cache=$1 recipe=$2 record=$3
  shift 3
  local packages=("$@") arch key
  arch=$(dpkg --print-architecture)
  mkdir -p "$cache"
  key=$(printf '%s\n' "recipe=$recipe" "suite=$debian_suite" "arch=$arch" "${packages[@]}" | sha256sum | cut -c1-32)
  rootfs_tar="$cache/rootfs-$debian_suite-$arch-$key.tar"
  exec 9>"$cache/.lock"
  flock 9
  if [ "${FORCE:-0}" != 1 ] && [ -s "$rootfs_tar" ]; then
    log "using cached root $rootfs_tar"
    return 0
  fi
  debian_rootfs_build "$record" "${packages[@]}"
  log "caching the root at $rootfs_tar"
  tar -C "$rootfs_root" --numeric-owner --one-file-system \
    --exclude='./proc/*' --exclude='./sys/*' --exclude='./dev/*' \
    -cf "$rootfs_tar.part.$$" .
  mv -f "$rootfs_tar.part.$$" "$rootfs_tar"
  # Roots of other package lists or recipes are dead weight (up to a GB each).
  find "$cache" -maxdepth 1 -name 'rootfs-*.tar' ! -path "$rootfs_tar" -delete
  log "root cached ($(du -h "$rootfs_tar" | cut -f1))"
}

debian_rootfs_build() { # $1: the record file; then the packages
  local record=$1 root=$rootfs_root mirror security arch
  shift
  arch=$(dpkg --print-architecture)
  mirror=${DEBIAN_MIRROR:-$(debian_mirror_for main)}
  mirror=${mirror:-http://deb.debian.org/debian}
  security=${DEBIAN_SECURITY_MIRROR:-$(debian_mirror_for security)}
  log "mirror $mirror${security:+, security $security}"
  if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap"
    apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
      { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
  fi
  log "debootstrap $debian_suite ($arch, minbase) from $mirror"
  debootstrap --variant=minbase --arch="$arch" "$debian_suite" "$root" "$mirror" >"$rootfs_work/debootstrap.log" 2>&1 ||
    { tail -n 30 "$rootfs_work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }

  {
    echo "deb $mirror $debian_suite main"
    echo "deb $mirror $debian_suite-updates main"
    [ -z "$security" ] || echo "deb $security $debian_suite-security main"
  } >"$root/etc/apt/sources.list"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # No daemon may start inside the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"

  if [ "$#" -gt 0 ]; then
    log "apt-get install $* (in the chroot)"
    chroot "$root" apt-get -qq -o Acquire::Retries=3 update
    chroot "$root" apt-get -y -q -o Acquire::Retries=3 -o Dpkg::Use-Pty=0 \
      install --no-install-recommends "$@" >"$rootfs_work/apt.log" 2>&1 ||
      { tail -n 30 "$rootfs_work/apt.log" >&2; die "apt-get install failed (log above)"; }
    # The versions that went in, for the record.
    chroot "$root" dpkg-query -W -f '${Package}=${Version}\n' "$@" >"$root$record"
  fi
  if declare -F rootfs_after_install >/dev/null; then rootfs_after_install "$root"; fi

  log "trimming (apt lists and caches, docs, man pages, locales, logs)"
  chroot "$root" apt-get clean
  umount -l "$root/proc"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
    "$root"/usr/share/locale/* "$root"/usr/share/lintian "$root"/usr/share/linda \
    "$root"/var/log/* "$root"/tmp/* "$root"/var/tmp/* "$root"/root/.cache \
    "$root/usr/sbin/policy-rc.d"
  : >"$root/etc/resolv.conf"
  chmod 1777 "$root/tmp"
}

# Whether REPO:HASH exists (then tagged REPO:local too): the build is a no-op unless FORCE=1.
imported_image_present() { # $1: the repository, $2: the inputs hash
  [ "${FORCE:-0}" != 1 ] && docker image inspect "$1:$2" >/dev/null 2>&1 || return 1
  docker tag "$1:$2" "$1:local"
  log "$1:$2 present; tagged $1:local (nothing to build)"
}

# Earlier builds share no layers with this one (an import is one layer): drop the tags of images
# carrying LABEL but another inputs hash (KEEP_OLD=1 keeps them). One still used by a container
# stays; that is fine.
imported_image_prune() { # $1: the inputs label, $2: the inputs hash
  [ "${KEEP_OLD:-0}" != 1 ] || return 0
  # `|| true`: with pipefail, a grep that keeps no line (no old image: a first build) is a
  # failure, and this is the build scripts' last command.
  { docker image ls --filter "label=$1" --format '{{.Repository}}:{{.Tag}}' |
    grep -v -e ":$2\$" -e ':local$' -e ':<none>$' || true; } | while read -r old; do
      docker image rm "$old" >/dev/null 2>&1 && log "removed old $old" || true
    done
}
