#!/usr/bin/env node
// Everything a publish does except the upload (docs/releasing.md): build, publint, `npm pack` of
// each publishable package, a look inside each tarball, and `npm publish --dry-run` of that very
// tarball.
//
//   npm run release:check [-- --skip-build] [-- --keep]
//
// Inside each tarball: package.json, README.md, CHANGELOG.md (after `changeset version`; a
// warning before), every file its `exports`, `bin` and `types` name, no test file, and
// @platform/* dependencies on exactly the versions being released (a range the sibling's
// version satisfies is not enough: the linked group is released together). Prints one line
// per check and `release-check: N passed, N failed` last; exit 1 if any failed.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const flag = (name) => process.argv.slice(2).includes(name);
const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));

let passed = 0;
let warned = 0;
/** The checks that failed, by what they checked; `scope` marks the registry-name checks. */
const failures = [];
let failed = 0;
function report(ok, what, detail = "", { scope = false } = {}) {
  if (ok) passed++;
  else {
    failed++;
    failures.push({ what, scope });
  }
  const body = detail && !ok ? `\n${detail.trimEnd().replace(/^/gm, "    ")}` : "";
  console.log(`${ok ? "ok" : "not ok"} - ${what}${body}`);
  return ok;
}
function warn(what) {
  warned++;
  console.log(`warn - ${what}`);
}

async function run(command, args, cwd = repo) {
  const child = spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const [code] = await once(child, "close");
  return { code, output };
}

/** The publishable workspaces (not private), in the root's (dependency) order. */
function publishable() {
  return readJson(join(repo, "package.json"))
    .workspaces.filter((pattern) => !pattern.includes("*"))
    .map((dir) => ({ dir, pkg: readJson(join(repo, dir, "package.json")) }))
    .filter(({ pkg }) => !pkg.private);
}

/** Every file a package.json promises: exports' targets (all conditions), bin, main, types. */
function promisedFiles(pkg) {
  const files = new Set();
  const visit = (value) => {
    if (typeof value === "string") files.add(value.replace(/^\.\//, ""));
    else if (value && typeof value === "object")
      for (const inner of Object.values(value)) visit(inner);
  };
  visit(pkg.exports);
  visit(pkg.bin);
  visit(pkg.main);
  visit(pkg.types);
  return [...files].filter((file) => !file.includes("*"));
}

/** The tarball's contents against its package.json and the versions being released. */
function inspect(name, dir, files, pkg, versions) {
  const has = (file) => files.includes(file);
  report(has("package.json") && has("README.md"), `${name}: package.json and README.md packed`);
  // Before the first `changeset version` there is none to pack; once a package has one, its
  // users must get it (npm packs it only when `files` lists it).
  if (existsSync(join(dir, "CHANGELOG.md")))
    report(has("CHANGELOG.md"), `${name}: CHANGELOG.md packed`);
  else warn(`${name}: no CHANGELOG.md yet (written by \`changeset version\`)`);
  const missing = promisedFiles(pkg).filter((file) => !has(file));
  report(
    missing.length === 0,
    `${name}: every file exports/bin/types name is packed`,
    missing.join("\n"),
  );
  // The template the CLI carries keeps its own tests: a created project runs them.
  const tests = files.filter(
    (file) =>
      /\.test\.[cm]?[jt]s$|(^|\/)__fixtures__\//.test(file) && !file.startsWith("dist/template/"),
  );
  report(tests.length === 0, `${name}: no test files packed`, tests.join("\n"));
  const wrong = Object.entries({ ...pkg.dependencies, ...pkg.peerDependencies })
    .filter(([dep]) => dep.startsWith("@platform/"))
    .filter(([dep, range]) => range !== versions.get(dep))
    .map(([dep, range]) => `${dep}@${range}, releasing ${versions.get(dep) ?? "nothing"}`);
  report(
    wrong.length === 0,
    `${name}: @platform dependencies are the versions released with it`,
    wrong.join("\n"),
  );
  const local = Object.entries({
    ...pkg.dependencies,
    ...pkg.peerDependencies,
    ...pkg.optionalDependencies,
  })
    .filter(([, range]) => /^(file|link|workspace|portal):/.test(range))
    .map(([dep, range]) => `${dep}: ${range}`);
  report(local.length === 0, `${name}: no file:/link:/workspace: dependency`, local.join("\n"));
}

/**
 * The name on the registry is free, or it is ours (the same repository). A name someone else
 * owns is the worst failure of all: a user following our docs would install their code.
 */
async function checkName(pkg) {
  const viewed = await run("npm", [
    "view",
    pkg.name,
    "name",
    "description",
    "repository.url",
    "versions",
    "--json",
  ]);
  if (viewed.code !== 0 && /E404/.test(viewed.output)) {
    return report(true, `${pkg.name}: the name is free on the registry`);
  }
  let info = {};
  try {
    info = JSON.parse(viewed.output);
  } catch {
    return report(false, `${pkg.name}: npm view answered`, viewed.output);
  }
  const ours = info["repository.url"] === pkg.repository?.url;
  const versions = [].concat(info.versions ?? []).join(", ");
  return report(
    ours,
    `${pkg.name}: the name on the registry is this project's`,
    `it belongs to another project: "${info.description ?? ""}" (${info["repository.url"] ?? "no repository"}), versions ${versions}`,
    { scope: true },
  );
}

async function checkPackage({ dir, pkg }, into, versions) {
  const name = `${pkg.name}@${pkg.version}`;
  const nameIsOurs = await checkName(pkg);
  const packed = await run("npm", ["pack", "--json", "--pack-destination", into], join(repo, dir));
  if (!report(packed.code === 0, `${name}: npm pack`, packed.output)) return;
  const [info] = JSON.parse(packed.output.slice(packed.output.indexOf("[")));
  const files = info.files.map((file) => file.path);
  console.log(
    `     ${info.filename}: ${info.size} bytes packed, ${info.unpackedSize} unpacked, ${files.length} files`,
  );
  inspect(name, join(repo, dir), files, pkg, versions);
  const tarball = join(into, info.filename);
  const published = await run("npm", ["publish", "--dry-run", "--ignore-scripts", tarball]);
  const ok = published.code === 0 && published.output.includes(`+ ${name}`);
  // Under a name another project owns, the registry's answer is about their versions (npm will
  // not tag ours `latest` below their highest): part of the scope problem, said as such.
  const theirs = !ok && !nameIsOurs && /previously published version/.test(published.output);
  report(
    ok,
    `${name}: npm publish --dry-run (tag ${pkg.publishConfig?.tag ?? "latest"}, access ${pkg.publishConfig?.access ?? "default"})${theirs ? ": refused because of the other project's versions under this name" : ""}`,
    theirs
      ? published.output
          .split("\n")
          .filter((line) => /npm error/.test(line))
          .join("\n")
      : published.output,
    { scope: theirs },
  );
  report(
    pkg.publishConfig?.access === "public",
    `${name}: publishConfig.access is public (a scoped package is private otherwise)`,
  );
}

async function main() {
  if (!flag("--skip-build")) {
    const built = await run("npm", ["run", "build"]);
    if (!report(built.code === 0, "npm run build", built.output)) return;
  }
  const linted = await run("npm", ["run", "publint"]);
  report(
    linted.code === 0 && !/^\s*(Warnings|Errors|Suggestions):/m.test(linted.output),
    "publint of every package (no error, warning or suggestion)",
    linted.output,
  );
  const packages = publishable();
  const versions = new Map(packages.map(({ pkg }) => [pkg.name, pkg.version]));
  const into = mkdtempSync(join(tmpdir(), "platform-release-"));
  try {
    for (const entry of packages) await checkPackage(entry, into, versions);
  } finally {
    if (flag("--keep")) console.log(`tarballs kept in ${into}`);
    else rmSync(into, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  report(false, "the check itself", String(error?.stack ?? error));
}
// Say at the end what blocks the release, so a long log does not hide it: the scope (a name on
// the registry that another project owns; docs/releasing.md) apart from everything else.
const scopeFailures = failures.filter((failure) => failure.scope);
const otherFailures = failures.filter((failure) => !failure.scope);
const names = new Set(
  scopeFailures.map((failure) => failure.what.split(":")[0].replace(/@\d.*$/, "")),
);
if (scopeFailures.length > 0) {
  console.log(
    `blocked by the scope: ${[...names].join(", ")} on the registry belong(s) to another project (${scopeFailures.length} checks failed for it); publishing needs a scope this project owns (docs/releasing.md)`,
  );
}
console.log(
  otherFailures.length === 0
    ? `every other check passed${scopeFailures.length > 0 ? " (the packages are otherwise ready to publish)" : ""}`
    : `other failures: ${otherFailures.map((failure) => failure.what).join("; ")}`,
);
console.log(
  `release-check: ${passed} passed, ${failed} failed${warned ? `, ${warned} warnings` : ""}`,
);
process.exit(failed === 0 ? 0 : 1);
