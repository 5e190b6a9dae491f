#!/usr/bin/env node
// The packages as a user gets them: build, `npm pack` every publishable workspace, install the
// tarballs into empty projects outside the repository (no workspace links, no path aliases, no
// `@platform/source` condition), and then, on each Node line asked for (installed from the npm
// registry by .ci/node.sh):
//   - import every public entry of every package from plain Node ESM;
//   - typecheck a TypeScript project (`moduleResolution: nodenext`) importing every entry;
//   - `platform challenge create` from the installed CLI, `npm install` of the created project
//     (quiet: no warning), its typecheck, its own tests, and its `platform dev` until ready;
// and, once, the SDK's install size with its dependencies.
//
//   node scripts/user-install-check.mjs [--skip-build] [--lines default,oldest] [--keep]
//
// The created project asks for `^<each package's own version>` of @platform/* (the SDK's for the
// SDK, the CLI's for the CLI); the registry has no such release while we test it, so the check
// stands in for the registry: it first checks that each range is one that package's packed
// version satisfies, then points those ranges (and, through `overrides`, every package's own
// @platform dependencies) at the tarballs. Nothing here names a version, so it works the same
// before and after a release bump. The created challenge's `GET /version` must report the
// packed SDK's version. Prints one line per check and `user-install: N passed, N failed` last;
// exit 1 if any failed.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] ? args[at + 1] : fallback;
};
const LINES = option("--lines", "default,oldest").split(",");
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

let passed = 0;
let failed = 0;
function report(ok, what, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok" : "not ok"} - ${what}${detail && !ok ? `\n${indent(detail)}` : ""}`);
  return ok;
}
const indent = (text) =>
  text
    .trimEnd()
    .split("\n")
    .slice(-60)
    .map((line) => `    ${line}`)
    .join("\n");

/** Run a command to completion: exit code and everything it printed (stdout and stderr). */
async function run(command, commandArgs, { cwd, env = process.env, timeoutMs = 600_000 } = {}) {
  const child = spawn(command, commandArgs, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const [code] = await once(child, "close");
  clearTimeout(timer);
  return { code, output };
}

/** The publishable workspaces (not private), in the root's (dependency) order. */
function publishable() {
  return readJson(join(repo, "package.json"))
    .workspaces.filter((pattern) => !pattern.includes("*"))
    .map((dir) => ({ dir, pkg: readJson(join(repo, dir, "package.json")) }))
    .filter(({ pkg }) => !pkg.private);
}

/** `npm pack` each package into `into`; name -> { version, tarball, entries }. */
async function packAll(into) {
  const packed = new Map();
  for (const { dir, pkg } of publishable()) {
    const result = await run("npm", ["pack", "--json", "--pack-destination", into], {
      cwd: join(repo, dir),
    });
    if (!report(result.code === 0, `npm pack ${pkg.name}@${pkg.version}`, result.output)) continue;
    const [info] = JSON.parse(result.output.slice(result.output.indexOf("[")));
    const entries = Object.keys(pkg.exports ?? {})
      .filter((subpath) => subpath !== "./package.json")
      .map((subpath) => pkg.name + subpath.slice(1));
    const peers = pkg.peerDependencies ?? {};
    packed.set(pkg.name, {
      version: pkg.version,
      tarball: join(into, info.filename),
      entries,
      peers,
    });
  }
  return packed;
}

/** `npm install` dependencies that are only the tarballs, the way a registry would serve them. */
function tarballSpecs(packed, names = [...packed.keys()]) {
  return Object.fromEntries(names.map((name) => [name, `file:${packed.get(name).tarball}`]));
}

// The install scripts of the SDK's dependencies that nothing needs (docs/decisions.md, "A quiet
// install"); the template carries the same list, so a user's project installs quietly too.
const ALLOW_SCRIPTS = { "cpu-features": false, esbuild: false, protobufjs: false, ssh2: false };

/** Lines of npm's output that are warnings or errors (a quiet install has none). */
const npmWarnings = (output) =>
  output
    .split("\n")
    .filter((line) => /^npm (warn|error|WARN|ERR)/.test(line))
    .join("\n");

/** The environment of one Node line: its bin first on PATH, native builds against its headers. */
async function lineEnv(line) {
  const result = await run("bash", [join(repo, ".ci/node.sh"), line], { cwd: repo });
  if (result.code !== 0) throw new Error(`.ci/node.sh ${line} failed:\n${result.output}`);
  const bin = result.output.trim().split("\n").pop();
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(npm_|NODE_OPTIONS$|NODE_PATH$|INIT_CWD$|__?VITEST)/i.test(key),
    ),
  );
  return {
    ...env,
    PATH: [bin, env.PATH].join(delimiter),
    npm_config_nodedir: dirname(bin),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
  };
}

/** Whether `version` satisfies `range`, for the one form `create` writes: `^major.minor.patch`. */
function caretSatisfies(range, version) {
  const want = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range)?.slice(1).map(Number);
  const have = /^(\d+)\.(\d+)\.(\d+)$/.exec(version)?.slice(1).map(Number);
  if (!want || !have) return false;
  const [M, m, p] = want;
  const [M2, m2, p2] = have;
  if (M > 0) return M2 === M && (m2 > m || (m2 === m && p2 >= p));
  if (m > 0) return M2 === 0 && m2 === m && p2 >= p;
  return M2 === 0 && m2 === 0 && p2 === p;
}

/** An empty project outside the repository with every tarball installed, and TypeScript. */
async function installHost(root, packed, env, label) {
  const host = join(root, "host");
  mkdirSync(host);
  const deps = tarballSpecs(packed);
  const { devDependencies } = readJson(join(repo, "package.json"));
  writeJson(join(host, "package.json"), {
    name: "user-host",
    private: true,
    type: "module",
    dependencies: deps,
    devDependencies: {
      typescript: devDependencies.typescript,
      "@types/node": devDependencies["@types/node"],
      // What an entry asks the user to bring (vitest, for the SDK's testing kit).
      ...Object.assign({}, ...[...packed.values()].map((p) => p.peers)),
    },
    overrides: deps,
    allowScripts: ALLOW_SCRIPTS,
  });
  const result = await run("npm", ["install"], { cwd: host, env });
  const warnings = npmWarnings(result.output);
  const ok = result.code === 0 && warnings === "";
  report(
    ok,
    `${label}: npm install of the ${packed.size} tarballs into an empty project, quiet`,
    ok ? "" : result.output,
  );
  return ok ? host : null;
}

/** Every public entry imported from plain Node ESM, resolved inside the project's node_modules. */
async function importEntries(host, packed, env, label) {
  const entries = [...packed.values()].flatMap((p) => p.entries);
  const script = [
    "const results = [];",
    `for (const entry of ${JSON.stringify(entries)}) {`,
    "  try {",
    "    const where = import.meta.resolve(entry);",
    "    const names = Object.keys(await import(entry));",
    "    results.push({ entry, where, names: names.length });",
    "  } catch (error) {",
    "    results.push({ entry, error: String(error?.stack ?? error) });",
    "  }",
    "}",
    "console.log(JSON.stringify(results));",
    // An entry may start a timer or a pool on import; the check is over once each has loaded.
    "process.exit(0);",
  ].join("\n");
  writeFileSync(join(host, "import-all.mjs"), script);
  const result = await run("node", ["import-all.mjs"], { cwd: host, env });
  let results = [];
  try {
    results = JSON.parse(result.output.trim().split("\n").pop());
  } catch {
    return report(false, `${label}: import every entry from plain Node ESM`, result.output);
  }
  const inside = join(host, "node_modules");
  for (const { entry, where, names, error } of results) {
    const path = where ? fileURLToPath(where) : "";
    const ok = !error && names > 0 && path.startsWith(inside) && path.includes("/dist/");
    report(
      ok,
      `${label}: import("${entry}") from plain ESM (${names ?? 0} names)`,
      ok ? "" : (error ?? `resolved to ${path}`),
    );
  }
}

/** A TypeScript project (nodenext, strict, the packages' own declarations checked too). */
async function typecheckEntries(host, packed, env, label) {
  const entries = [...packed.values()].flatMap((p) => p.entries);
  const lines = entries.map((entry, i) => `import * as e${i} from "${entry}";`);
  lines.push(`export const entries = [${entries.map((_, i) => `e${i}`).join(", ")}] as const;`);
  writeFileSync(join(host, "entries.ts"), `${lines.join("\n")}\n`);
  writeJson(join(host, "tsconfig.json"), {
    compilerOptions: {
      target: "ES2023",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: ["node"],
    },
    files: ["entries.ts"],
  });
  const result = await run("node", [join(host, "node_modules/typescript/bin/tsc"), "-p", "."], {
    cwd: host,
    env,
  });
  // Our own declarations are checked (skipLibCheck false) but another package's are not ours to
  // fix: @polkadot/api-derive's .d.ts name lookup types that only its augmentation defines.
  const errors = result.output.split("\n").filter((line) => /error TS\d+/.test(line));
  const ours = errors.filter((line) => !/^node_modules\/(?!@platform\/)/.test(line));
  const ok = result.code === 0 || (errors.length > 0 && ours.length === 0);
  const theirs = errors.length - ours.length;
  report(
    ok,
    `${label}: tsc (nodenext, strict, our declarations checked) over ${entries.length} entries${theirs ? ` (${theirs} errors inside third-party declarations ignored)` : ""}`,
    ours.length ? ours.join("\n") : result.output,
  );
}

/** `platform challenge create` from the installed CLI, pointed at the tarballs, installed. */
async function createProject(root, host, packed, env, label) {
  const project = join(root, "user-chal");
  const cli = join(host, "node_modules/.bin/platform");
  const created = await run(cli, ["challenge", "create", "user-chal", "--out", project], {
    cwd: root,
    env,
  });
  if (
    !report(
      created.code === 0,
      `${label}: platform challenge create (installed CLI)`,
      created.output,
    )
  )
    return null;
  const pkg = readJson(join(project, "package.json"));
  for (const field of ["dependencies", "devDependencies"]) {
    for (const [name, range] of Object.entries(pkg[field] ?? {})) {
      if (!name.startsWith("@platform/")) continue;
      const version = packed.get(name)?.version;
      const ok = version !== undefined && caretSatisfies(range, version);
      report(
        ok,
        `${label}: the project asks for ${name}@${range}, which ${version ?? "(not packed)"} satisfies`,
      );
      if (ok) pkg[field][name] = tarballSpecs(packed, [name])[name];
    }
  }
  pkg.overrides = { ...pkg.overrides, ...tarballSpecs(packed) };
  writeJson(join(project, "package.json"), pkg);
  const installed = await run("npm", ["install"], { cwd: project, env });
  const warnings = npmWarnings(installed.output);
  const ok = installed.code === 0 && warnings === "";
  report(ok, `${label}: npm install in the created project, quiet`, ok ? "" : installed.output);
  return ok ? project : null;
}

/** The created project's own typecheck and tests, as its author runs them. */
async function projectScripts(project, env, label) {
  for (const script of ["typecheck", "test"]) {
    const result = await run("npm", ["run", script], { cwd: project, env });
    const plain = result.output.replace(/\u001b\[[0-9;]*m/g, "");
    const tests = /Tests\s+(\d+) passed/.exec(plain)?.[1];
    report(
      result.code === 0,
      `${label}: npm run ${script} in the created project${tests ? ` (${tests} tests passed)` : ""}`,
      result.code === 0 ? "" : plain,
    );
  }
}

/** Its `platform dev` until ready, one request through the master, then a clean stop. */
async function projectDev(root, project, packed, env, label) {
  const cli = join(project, "node_modules/.bin/platform");
  const child = spawn(cli, ["dev", "--port", "0", "--json", "--data-dir", join(root, "dev-data")], {
    cwd: project,
    env: { ...env, ADMIN_TOKEN: "", ADMIN_TOKEN_FILE: "", DATABASE_URL: "", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const ready = new Promise((resolveReady) => {
    const timer = setTimeout(() => resolveReady(null), 180_000);
    const onData = (chunk) => {
      output += chunk;
      const line = /^\{"status":"ready".*\}$/m.exec(output)?.[0];
      if (line) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line));
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("close", () => resolveReady(null));
  });
  const closed = once(child, "close");
  const started = await ready;
  let answer = "";
  if (started) {
    const response = await fetch(`${started.master_url}/challenges/user-chal/v1/task`);
    answer = `${response.status} ${(await response.text()).slice(0, 120)}`;
  }
  report(
    started !== null,
    `${label}: platform dev in the created project until ready`,
    started ? "" : output,
  );
  if (started) {
    report(
      answer.startsWith("200 "),
      `${label}: GET /challenges/user-chal/v1/task through its master`,
      answer,
    );
    await reportedVersions(started, packed, label);
  }
  child.kill("SIGTERM");
  const [code] = await closed;
  report(
    code === 0,
    `${label}: platform dev stops cleanly on SIGTERM (exit ${code})`,
    code === 0 ? "" : output,
  );
}

/**
 * The challenge's own `GET /version` (the proxy blocks it; asked at its internal URL): the SDK's
 * version as the installed tarball's package.json says, beside the challenge's own.
 */
async function reportedVersions(started, packed, label) {
  const challenge = started.challenges?.find((item) => item.slug === "user-chal");
  const sdk = packed.get("@platform/challenge-sdk")?.version;
  let body = null;
  try {
    const response = await fetch(`${challenge?.internal_url}/version`);
    body = await response.json();
  } catch (error) {
    body = { error: String(error) };
  }
  report(
    body?.sdk_version === sdk && body?.challenge_version === challenge?.version,
    `${label}: the created challenge's GET /version reports sdk_version ${sdk} and challenge_version ${challenge?.version}`,
    JSON.stringify(body),
  );
}

/** What `npm install @platform/challenge-sdk` puts on disk: bytes and packages, dependencies included. */
async function sdkInstallSize(root, packed, env) {
  const dir = join(root, "sdk-size");
  mkdirSync(dir);
  const sdk = "@platform/challenge-sdk";
  writeJson(join(dir, "package.json"), {
    name: "sdk-size",
    private: true,
    dependencies: tarballSpecs(packed, [sdk]),
    overrides: tarballSpecs(packed, [...packed.keys()]),
    allowScripts: ALLOW_SCRIPTS,
  });
  const installed = await run("npm", ["install", "--omit=dev"], { cwd: dir, env });
  if (!report(installed.code === 0, "npm install of the SDK alone (size)", installed.output))
    return;
  const du = await run("du", ["-sb", "node_modules"], { cwd: dir });
  const listed = await run("npm", ["ls", "--all", "--parseable", "--omit=dev"], { cwd: dir, env });
  const packages = new Set(listed.output.trim().split("\n").slice(1)).size;
  const bytes = Number(du.output.split(/\s/)[0]);
  const tarballs = Object.fromEntries(
    await Promise.all(
      [...packed].map(async ([name, { tarball }]) => [
        name,
        Number((await run("stat", ["-c", "%s", tarball])).output),
      ]),
    ),
  );
  // The largest installed packages (nested copies counted with the package that holds them).
  const each = await run(
    "bash",
    ["-c", "du -sb node_modules/*/ node_modules/@*/*/ | sort -rn | head -8"],
    { cwd: dir },
  );
  const largest = Object.fromEntries(
    each.output
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/))
      .filter(([size, path]) => size && path && !path.endsWith("node_modules/@platform/"))
      .map(([size, path]) => [
        path.replace(/^node_modules\/|\/$/g, ""),
        +(Number(size) / 2 ** 20).toFixed(1),
      ]),
  );
  const mib = +(bytes / 2 ** 20).toFixed(1);
  console.log(
    `sdk-install-size: ${JSON.stringify({ bytes, mib, packages, largest_mib: largest, tarball_bytes: tarballs })}`,
  );
}

/** Every user step on one Node line, in a fresh folder outside the repository. */
async function checkLine(line, packed, measure) {
  const env = await lineEnv(line);
  const version = (await run("node", ["--version"], { env })).output.trim();
  const label = `node ${version}`;
  const root = mkdtempSync(join(tmpdir(), `platform-user-${line}-`));
  report(
    relative(repo, root).startsWith(".."),
    `${label}: working outside the repository (${root})`,
  );
  try {
    const host = await installHost(root, packed, env, label);
    if (host) {
      await importEntries(host, packed, env, label);
      await typecheckEntries(host, packed, env, label);
      const project = await createProject(root, host, packed, env, label);
      if (project) {
        await projectScripts(project, env, label);
        await projectDev(root, project, packed, env, label);
      }
    }
    if (measure) await sdkInstallSize(root, packed, env);
  } finally {
    if (flag("--keep")) console.log(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

async function main() {
  if (!flag("--skip-build")) {
    const built = await run("npm", ["run", "build"], { cwd: repo });
    if (!report(built.code === 0, "npm run build", built.output)) return;
  }
  const tarballs = mkdtempSync(join(tmpdir(), "platform-tarballs-"));
  try {
    const packed = await packAll(tarballs);
    if (failed === 0) {
      for (const [i, line] of LINES.entries()) await checkLine(line, packed, i === 0);
    }
  } finally {
    rmSync(tarballs, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  report(false, "the check itself", String(error?.stack ?? error));
}
console.log(`user-install: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
