#!/usr/bin/env bash
# Make sure a Docker engine answers: install docker.io and start dockerd in the background
# when none does. Used by CI and by developers before running the broker suites.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

if docker info >/dev/null 2>&1; then
  docker version --format 'engine {{.Server.Version}} already running'
  exit 0
fi
if ! command -v dockerd >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq docker.io >/dev/null
fi
mkdir -p /var/log
nohup dockerd --storage-driver=overlay2 >/var/log/dockerd-ci.log 2>&1 &
for _ in $(seq 1 60); do
  docker info >/dev/null 2>&1 && break
  sleep 1
done
if ! docker info >/dev/null 2>&1; then
  echo "dockerd did not answer within 60 s; its log:" >&2
  tail -n 50 /var/log/dockerd-ci.log >&2 || true
  exit 1
fi
docker version --format 'engine {{.Server.Version}} started'
