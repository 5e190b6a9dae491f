#!/usr/bin/env node
// `npm run test:slowest`: the slowest test files of the last `npm test`, from the JSON report
// vitest writes beside its console output (.platform/test-report.json). `-- --run` runs the
// suite first; `-- --top N` prints N files (default 15); `-- --record` writes the files'
// durations to scripts/test-durations.json, the order the next runs start files in (longest
// first: scripts/duration-sequencer.ts). docs/decisions.md, "Where the suite's time goes",
// records these figures before and after each change to the suite.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const report = `${root}.platform/test-report.json`;
const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt >= 0 ? Number(args[topAt + 1]) : 15;
if (!(Number.isInteger(top) && top > 0)) {
  console.error("--top takes a positive whole number of files");
  process.exit(2);
}

if (args.includes("--run")) {
  const run = spawnSync("npx", ["vitest", "run"], { cwd: root, stdio: "inherit" });
  if (run.status !== 0)
    console.error(`npm test exited ${run.status}; timings below are still read`);
}
if (!existsSync(report)) {
  console.error(
    `no report at ${report}: run \`npm test\` first (or \`npm run test:slowest -- --run\`)`,
  );
  process.exit(1);
}

const { testResults, startTime, numTotalTests, numPassedTests, numFailedTests } = JSON.parse(
  readFileSync(report, "utf8"),
);
const files = testResults
  .map((file) => ({
    seconds: (file.endTime - file.startTime) / 1000,
    tests: file.assertionResults.length,
    name: file.name.startsWith(root) ? file.name.slice(root.length) : file.name,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const wall = (Math.max(...testResults.map((f) => f.endTime)) - startTime) / 1000;
const sum = files.reduce((total, file) => total + file.seconds, 0);

console.log(
  `last run ${new Date(startTime).toISOString()}: ${files.length} files, ${numTotalTests} tests ` +
    `(${numPassedTests} passed, ${numFailedTests} failed), ${wall.toFixed(0)} s wall, ` +
    `${sum.toFixed(0)} s summed over files`,
);
console.log(`the ${Math.min(top, files.length)} slowest files:`);
for (const file of files.slice(0, top)) {
  console.log(
    `${file.seconds.toFixed(1).padStart(8)} s  ${String(file.tests).padStart(4)} tests  ${file.name}`,
  );
}

if (args.includes("--record")) {
  // Merged into the record: a partial run (one project, one file) updates what it ran.
  const path = `${root}scripts/test-durations.json`;
  const recorded = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  for (const file of files) recorded[file.name] = Math.round(file.seconds * 10) / 10;
  const sorted = Object.fromEntries(
    Object.entries(recorded).sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(path, `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`recorded ${files.length} files' durations in scripts/test-durations.json`);
}
