#!/usr/bin/env bash
# Build the deployment's two images without any container registry, from a Debian bookworm
# minbase root (scripts/debian-rootfs.sh: debootstrap from this machine's Debian mirror, cached
# as a tarball), then `docker import`:
#
#   platform/master   Node (the npm registry's node-linux-<arch> package, pinned by version and
#                     integrity below) at /usr/bin/node, the published content of the workspace
#                     packages (`npm pack`: @platform/core, chain, challenge-sdk, master, cli) and
#                     their production dependencies (the lockfile's versions, copied from this
#                     checkout's node_modules) under /opt/platform; `platform` on PATH; runs as
#                     the unprivileged user `platform` (uid 10001); entrypoint
#                     images/master-entrypoint.sh, command `master serve`.
#   platform/postgres Debian's postgresql-15, entrypoint images/postgres-entrypoint.sh (initdb
#                     from a password file on first start), images/postgres-backup.sh for the
#                     scheduled pg_dump; runs as `postgres`.
#
# Each is tagged <repo>:<sha256 of its inputs> and <repo>:local; a no-op when the hash tag exists
# (FORCE=1 rebuilds). A new build removes the older builds of the same image (those carrying its
# inputs label with another hash; KEEP_OLD=1 keeps them); no other image is touched.
#
# Needs the workspace built first (`npm install && npm run build`): the master image is made
# from dist/. Runs non-interactively as root (debootstrap and chroot need it).
#
# Environment: MASTER_IMAGE_REPO (default platform/master), POSTGRES_IMAGE_REPO (default
# platform/postgres), DEPLOY_IMAGE_CACHE (default $XDG_CACHE_HOME/platform-deploy or
# /var/cache/platform-deploy), DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR, FORCE=1, KEEP_OLD=1.
# Usage: deploy/build-images.sh [master|postgres]...   (both when none is named)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/.." && pwd)
rootfs_script="$repo_root/scripts/debian-rootfs.sh"
# shellcheck source=../scripts/debian-rootfs.sh
. "$rootfs_script"

master_repo=${MASTER_IMAGE_REPO:-platform/master}
postgres_repo=${POSTGRES_IMAGE_REPO:-platform/postgres}
cache_root=${DEPLOY_IMAGE_CACHE:-${XDG_CACHE_HOME:-/var/cache}/platform-deploy}
# Node, pinned: the version the project's engines accept and CI runs, and the registry's sha512
# of each architecture's package (what `npm view node-linux-<arch>@<version> dist.integrity`
# answers). A tarball whose digest differs is refused. The same version as .ci/node.sh's default
# line (docs/decisions.md, "Node 26 by default"): the image runs what the suite tested.
node_version=26.12.1
declare -A node_integrity=(
  [x64]=sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==
  [arm64]=sha512-8Oxs6Y7rDcKufVIM/zYRSwytj46WOrZk7yFCLTKDcs17bBjAeD9HMAqo97hMfMyxozIud0S4vZCs5WB/3iavNQ==
)
# Bump when a root recipe changes in a way the inputs hash does not show.
master_recipe=1
postgres_recipe=1
postgres_major=15
# The master's user (no login; /var/lib/platform is its home and data directory).
master_uid=10001
started=$SECONDS

log() { printf 'deploy-images [%4ss] %s\n' "$((SECONDS - started))" "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
docker info >/dev/null 2>&1 || die "no Docker engine answers"

# sha256 of files, each named by its path relative to the repository (a rename changes it).
files_hash() {
  local f
  for f in "$@"; do
    printf '%s\n' "${f#"$repo_root/"}"
    sha256sum <"$f" | cut -d' ' -f1
  done | sha256sum | cut -d' ' -f1
}

# --- Node from the npm registry -------------------------------------------------------------
node_arch() {
  case "$(dpkg --print-architecture)" in
    amd64) echo x64 ;;
    arm64) echo arm64 ;;
    *) die "no pinned Node for $(dpkg --print-architecture)" ;;
  esac
}

# Sets $node_tgz: the pinned package, from the cache or the registry, its digest checked.
fetch_node() {
  local arch want got dir
  arch=$(node_arch)
  want=${node_integrity[$arch]:-}
  [ -n "$want" ] || die "no integrity pinned for node-linux-$arch@$node_version"
  dir="$cache_root/node"
  mkdir -p "$dir"
  node_tgz="$dir/node-linux-$arch-$node_version.tgz"
  if [ ! -s "$node_tgz" ]; then
    log "npm pack node-linux-$arch@$node_version"
    (cd "$dir" && npm pack --silent "node-linux-$arch@$node_version" >/dev/null) ||
      die "npm pack node-linux-$arch@$node_version failed"
  fi
  got="sha512-$(sha512sum <"$node_tgz" | cut -d' ' -f1 | xxd -r -p | base64 -w0)"
  if [ "$got" != "$want" ]; then
    rm -f "$node_tgz"
    die "node-linux-$arch-$node_version.tgz has integrity $got, not the pinned $want"
  fi
}

# --- The application: the workspace packages as published, and their production dependencies --
workspace_packages=(core chain challenge-sdk master cli)

# `npm pack` of each workspace package (its "files", as published) into $1/packs, and the list of
# production dependencies into $1/deps.txt. Both are quick and byte-stable (npm pack fixes
# times and order), so the inputs hash is known before anything big is copied.
pack_app() { # $1: a work directory
  local work=$1 name flags=()
  for name in "${workspace_packages[@]}"; do
    [ -d "$repo_root/packages/$name/dist" ] ||
      die "packages/$name/dist is missing: run \`npm run build\` first"
    flags+=(-w "@platform/$name")
  done
  mkdir -p "$work/packs"
  log "npm pack the workspace packages"
  (cd "$repo_root" && npm pack --silent --ignore-scripts --pack-destination "$work/packs" \
    "${flags[@]}" >/dev/null) || die "npm pack of the workspace packages failed"
  (cd "$repo_root" && npm ls --omit=dev --all --parseable -w @platform/cli) >"$work/deps.txt" ||
    die "npm ls failed: run \`npm install\` first"
}

# What the application is made of: the packs, the lockfile (the dependencies' versions) and
# which dependencies are taken.
app_hash() { # $1: the work directory
  {
    sha256sum "$1"/packs/*.tgz | sed "s#$1/##"
    sha256sum <"$repo_root/package-lock.json"
    sed "s#^$repo_root##" "$1/deps.txt"
  } | sha256sum | cut -d' ' -f1
}

# The application's tree at $1/app (/opt/platform and the `platform` command). Every dependency
# is copied from node_modules as the lockfile installed it, without the nested node_modules npm
# lists separately (dev-only ones stay out).
stage_app() { # $1: a work directory
  local work=$1 stage="$1/app/opt/platform" path rel name dest
  for name in "${workspace_packages[@]}"; do
    mkdir -p "$stage/node_modules/@platform/$name"
    # npm pack names it platform-<name>-<version>.tgz: one per package, whatever its version.
    tar -C "$stage/node_modules/@platform/$name" --strip-components=1 -xzf \
      "$(ls "$work"/packs/platform-"$name"-[0-9]*.tgz)"
  done
  log "copying the production dependencies"
  while IFS= read -r path; do
    rel=${path#"$repo_root/"}
    case "$rel" in
      "$repo_root" | node_modules/@platform/*) continue ;;
      # A workspace package's own nested dependency goes under its copy.
      packages/*/node_modules/*)
        name=${rel#packages/}
        name=${name%%/*}
        dest="node_modules/@platform/$name/${rel#packages/"$name"/}"
        ;;
      node_modules/*) dest=$rel ;;
      *) die "unexpected dependency path $rel" ;;
    esac
    mkdir -p "$stage/$dest"
    tar -C "$repo_root/$rel" --exclude=./node_modules -cf - . | tar -C "$stage/$dest" -xf -
  done <"$work/deps.txt"
  mkdir -p "$work/app/usr/local/bin"
  ln -s /opt/platform/node_modules/@platform/cli/bin/platform.js "$work/app/usr/local/bin/platform"
  install -m 755 "$here/images/master-entrypoint.sh" "$work/app/usr/local/bin/platform-entrypoint"
}

build_master() {
  local work hash tag image_root
  debian_rootfs_workdir platform-deploy-master
  work=$rootfs_work
  fetch_node
  pack_app "$work"
  hash=$(
    {
      files_hash "$here/build-images.sh" "$rootfs_script" "$here/images/master-entrypoint.sh"
      echo "recipe=$master_recipe node=$node_version ${node_integrity[$(node_arch)]}"
      app_hash "$work"
    } | sha256sum | cut -d' ' -f1
  )
  tag="$master_repo:$hash"
  if imported_image_present "$master_repo" "$hash"; then
    debian_rootfs_cleanup
    trap - EXIT
    return 0
  fi
  log "building $tag"
  # libatomic1: node links against it from 26 on (minbase has the rest of what it needs).
  debian_rootfs_cached "$cache_root/master-root" "$master_recipe" /etc/platform-master-packages \
    libatomic1

  image_root="$work/image"
  mkdir -p "$image_root"
  stage_app "$work"
  tar -C "$image_root" --numeric-owner -xf "$rootfs_tar"
  tar -C "$work/app" --owner=0 --group=0 --numeric-owner --mode=go-w -cf - . |
    tar -C "$image_root" --numeric-owner -xf -
  tar -C "$work" -xzf "$node_tgz" package/bin/node
  install -o 0 -g 0 -m 755 "$work/package/bin/node" "$image_root/usr/bin/node"
  local missing
  missing=$(chroot "$image_root" ldd /usr/bin/node | grep 'not found' || true)
  [ -z "$missing" ] || die "node's libraries are missing from the root: $missing"
  log "node in the root: $(chroot "$image_root" /usr/bin/node --version)"
  log "platform in the root: $(chroot "$image_root" /usr/local/bin/platform --version 2>&1 | tail -n 1)"
  # The CLI loads the master lazily: load it, and so every module it imports, now.
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$image_root" /usr/bin/node --input-type=module -e \
    'await import("/opt/platform/node_modules/@platform/master/dist/index.js")' ||
    die "the master does not load in the root (a dependency missing?)"
  printf 'platform:x:%s:%s:platform master:/var/lib/platform:/usr/sbin/nologin\n' \
    "$master_uid" "$master_uid" >>"$image_root/etc/passwd"
  printf 'platform:x:%s:\n' "$master_uid" >>"$image_root/etc/group"
  install -d -o "$master_uid" -g "$master_uid" -m 700 "$image_root/var/lib/platform"
  tar -C "$image_root" --numeric-owner --one-file-system -cf "$work/image.tar" .

  log "docker import $tag"
  docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV NODE_ENV=production' \
    --change 'ENV HOME=/var/lib/platform' \
    --change 'ENV PLATFORM_DATA_DIR=/var/lib/platform' \
    --change 'ENV PLATFORM_HOST=0.0.0.0' \
    --change 'ENV PLATFORM_PORT=8080' \
    --change 'ENV PLATFORM_ADMIN_PORT=8081' \
    --change "LABEL org.platform.deploy.master.inputs=$hash" \
    --change "LABEL org.platform.deploy.node=$node_version" \
    --change "USER $master_uid:$master_uid" \
    --change 'WORKDIR /var/lib/platform' \
    --change 'EXPOSE 8080 8081' \
    --change 'ENTRYPOINT ["/usr/local/bin/platform-entrypoint"]' \
    --change 'CMD ["master", "serve"]' \
    --message "platform master $hash" \
    "$work/image.tar" "$tag" >/dev/null
  docker tag "$tag" "$master_repo:local"
  log "built $tag and $master_repo:local ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
  imported_image_prune org.platform.deploy.master.inputs "$hash"
  debian_rootfs_cleanup
  trap - EXIT
}

build_postgres() {
  local work hash tag image_root
  hash=$(
    {
      files_hash "$here/build-images.sh" "$rootfs_script" "$here/images/postgres-entrypoint.sh" \
        "$here/images/postgres-backup.sh"
      echo "recipe=$postgres_recipe postgresql-$postgres_major"
    } | sha256sum | cut -d' ' -f1
  )
  tag="$postgres_repo:$hash"
  imported_image_present "$postgres_repo" "$hash" && return 0
  log "building $tag"
  debian_rootfs_workdir platform-deploy-postgres
  work=$rootfs_work
  # The package's own cluster (made by its postinst) is not ours: the entrypoint makes one in
  # the volume from the password file. The binaries must run after the trimming.
  rootfs_after_install() { # $1: the root
    rm -rf "$1/etc/postgresql/$postgres_major" "$1/var/lib/postgresql/$postgres_major"
    chroot "$1" "/usr/lib/postgresql/$postgres_major/bin/postgres" --version >&2 ||
      die "postgres does not start in the root"
  }
  debian_rootfs_cached "$cache_root/postgres-root" "$postgres_recipe" /etc/platform-postgres-packages \
    "postgresql-$postgres_major"
  unset -f rootfs_after_install

  image_root="$work/image"
  mkdir -p "$image_root"
  tar -C "$image_root" --numeric-owner -xf "$rootfs_tar"
  install -o 0 -g 0 -m 755 "$here/images/postgres-entrypoint.sh" "$image_root/usr/local/bin/platform-postgres"
  install -o 0 -g 0 -m 755 "$here/images/postgres-backup.sh" "$image_root/usr/local/bin/platform-backup"
  local pg_uid pg_gid
  pg_uid=$(chroot "$image_root" id -u postgres)
  pg_gid=$(chroot "$image_root" id -g postgres)
  # The data directory and the backups directory, owned by postgres: a new named volume takes
  # the owner and mode of the image's directory it is mounted on.
  install -d -o "$pg_uid" -g "$pg_gid" -m 700 "$image_root/var/lib/postgresql/data"
  install -d -o "$pg_uid" -g "$pg_gid" -m 700 "$image_root/backups"
  install -d -o "$pg_uid" -g "$pg_gid" -m 2775 "$image_root/var/run/postgresql"
  tar -C "$image_root" --numeric-owner --one-file-system -cf "$work/image.tar" .

  log "docker import $tag"
  docker import \
    --change "ENV PATH=/usr/lib/postgresql/$postgres_major/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PGDATA=/var/lib/postgresql/data' \
    --change "LABEL org.platform.deploy.postgres.inputs=$hash" \
    --change 'USER postgres' \
    --change 'WORKDIR /var/lib/postgresql' \
    --change 'EXPOSE 5432' \
    --change 'ENTRYPOINT ["/usr/local/bin/platform-postgres"]' \
    --message "platform postgres $hash" \
    "$work/image.tar" "$tag" >/dev/null
  docker tag "$tag" "$postgres_repo:local"
  log "built $tag and $postgres_repo:local ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
  imported_image_prune org.platform.deploy.postgres.inputs "$hash"
  debian_rootfs_cleanup
  trap - EXIT
}

targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(postgres master)
for target in "${targets[@]}"; do
  case "$target" in
    master) build_master ;;
    postgres) build_postgres ;;
    *) die "unknown image $target (master or postgres)" ;;
  esac
done
