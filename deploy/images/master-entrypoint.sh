#!/bin/sh
# The master image's entrypoint: runs `platform "$@"` (default `master serve`) after one step the
# master has no variable for: DATABASE_PASSWORD_FILE (a Compose or Swarm secret) is read and put,
# percent-encoded, into DATABASE_URL (given without a password, e.g.
# postgres://platform@postgres:5432/platform). The password never appears in the container's
# configuration (`docker inspect`), only in this process's environment.
set -eu

if [ -n "${DATABASE_PASSWORD_FILE:-}" ]; then
  if [ -z "${DATABASE_URL:-}" ]; then
    echo "platform-entrypoint: DATABASE_PASSWORD_FILE is set but DATABASE_URL is not" >&2
    exit 64
  fi
  DATABASE_URL=$(node -e '
    const { readFileSync } = require("node:fs");
    const file = process.env.DATABASE_PASSWORD_FILE;
    let password;
    try {
      password = readFileSync(file, "utf8").split(/\r?\n/)[0];
    } catch (error) {
      console.error(`platform-entrypoint: cannot read DATABASE_PASSWORD_FILE (${file}): ${error.code}`);
      process.exit(66);
    }
    if (!password) {
      console.error(`platform-entrypoint: DATABASE_PASSWORD_FILE (${file}) is empty`);
      process.exit(65);
    }
    let url;
    try {
      url = new URL(process.env.DATABASE_URL);
    } catch {
      console.error("platform-entrypoint: DATABASE_URL is not a URL");
      process.exit(64);
    }
    if (url.password) {
      console.error("platform-entrypoint: DATABASE_URL carries a password and DATABASE_PASSWORD_FILE is set: keep only the file");
      process.exit(64);
    }
    url.password = encodeURIComponent(password);
    process.stdout.write(url.href);
  ')
  export DATABASE_URL
  unset DATABASE_PASSWORD_FILE
fi

exec /usr/local/bin/platform "$@"
