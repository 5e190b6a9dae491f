#!/usr/bin/env bash
# Build the local images the broker and runtime suites run, without any image registry: a
# busybox rootfs imported from Debian's busybox-static, then small variants built FROM it.
# Idempotent: an image that exists is left alone (FORCE=1 rebuilds them all).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

base=platform-test/busybox:1
force="${FORCE:-0}"

have() { [ "$force" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

if ! docker info >/dev/null 2>&1; then
  echo "test-images: no Docker engine answers (run .ci/docker-engine.sh first)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if have "$base"; then
  echo "test-images: $base present"
else
  # The static build: the rootfs holds nothing else, so no shared library may be needed.
  if ! dpkg -s busybox-static >/dev/null 2>&1; then
    apt-get install -y -qq busybox-static >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq busybox-static >/dev/null; }
  fi
  root="$work/rootfs"
  mkdir -p "$root"/{bin,etc,tmp,workspace,www,proc,sys,dev,root}
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\napp:x:1000:1000:app:/workspace:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\napp:x:1000:\n' >"$root/etc/group"
  chmod 1777 "$root/tmp"
  echo ok >"$root/www/health"
  tar -C "$root" --numeric-owner --owner=0 --group=0 -cf "$work/rootfs.tar" .
  docker import \
    --change 'ENV PATH=/bin' \
    --change 'WORKDIR /' \
    --change 'CMD ["/bin/sh"]' \
    "$work/rootfs.tar" "$base" >/dev/null
  echo "test-images: imported $base"
fi

# build <tag> <Dockerfile body after FROM>
build() {
  local tag=$1 body=$2
  if have "$tag"; then
    echo "test-images: $tag present"
    return
  fi
  if ! printf 'FROM %s\n%s\n' "$base" "$body" | docker build -q -t "$tag" - >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    exit 1
  fi
  echo "test-images: built $tag"
}

# Runs as a non-root user of its own: the broker must keep it, not force 65534.
build platform-test/nonroot:1 'USER 1000:1000'

# An image whose USER is a bare uid: Docker would give it gid 0; the sandbox must not.
build platform-test/uid-only:1 'USER 4242'

# Allocates memory until something stops it: awk doubles a string forever.
build platform-test/memhog:1 'ENTRYPOINT ["/bin/awk", "BEGIN { s = \"xxxxxxxxxxxxxxxx\"; while (1) s = s s }"]'

# An image whose python3 runs, prints nothing and exits 0: a harness that gives no report (the
# scoring challenge's pipeline tests; a missing python3 would not even start without Docker's init).
build platform-test/silent-python:1 'RUN printf "#!/bin/sh\nexit 0\n" >/bin/python3 && chmod 755 /bin/python3'

# A challenge service: busybox httpd answering /health on 8080, as a non-root user.
build platform-test/challenge:1 'USER 65534:65534
EXPOSE 8080
CMD ["/bin/httpd", "-f", "-v", "-p", "8080", "-h", "/www"]'

# The same service with its own HEALTHCHECK, so the runtime reports Docker's verdict.
build platform-test/challenge-healthcheck:1 'USER 65534:65534
EXPOSE 8080
HEALTHCHECK --interval=1s --timeout=1s --retries=3 CMD ["/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8080/health"]
CMD ["/bin/httpd", "-f", "-v", "-p", "8080", "-h", "/www"]'

# A challenge service with a page to proxy (the deployment's test: deploy/test/compose.test.ts).
# The master's proxy refuses /health from the public, so the other images have nothing to serve.
build platform-test/challenge-page:1 'RUN echo "hello from a challenge behind the deployed master" >/www/hello.txt
USER 65534:65534
EXPOSE 8080
CMD ["/bin/httpd", "-f", "-v", "-p", "8080", "-h", "/www"]'
