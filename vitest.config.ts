import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { DurationSequencer } from "./scripts/duration-sequencer.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run against the TypeScript sources of every workspace package, never a stale dist/.
const alias = [
  { find: /^@platform\/core$/, replacement: here("packages/core/src/index.ts") },
  { find: /^@platform\/core\/([a-z-]+)$/, replacement: here("packages/core/src/$1/index.ts") },
  { find: /^@platform\/challenge-sdk$/, replacement: here("packages/challenge-sdk/src/index.ts") },
  {
    find: /^@platform\/challenge-sdk\/([a-z-]+)$/,
    replacement: here("packages/challenge-sdk/src/$1/index.ts"),
  },
  { find: /^@platform\/master$/, replacement: here("packages/master/src/index.ts") },
];

const project = (name: string, root: string, timeout = 30_000) => ({
  resolve: { alias },
  test: {
    name,
    root: here(root),
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: timeout,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    // Most suites wait on child processes, containers and databases rather than compute: one
    // worker more than the 2 cores keeps both busy (docs/decisions.md, "Three test workers").
    maxWorkers: 3,
    // Longest files first, by the last recorded full run, so no long file starts last.
    sequence: { sequencer: DurationSequencer },
    projects: [
      project("core", "packages/core"),
      project("master", "packages/master"),
      project("challenge-sdk", "packages/challenge-sdk", 60_000),
      project("cli", "packages/cli", 90_000),
      project("scoring-challenge", "examples/scoring-challenge", 120_000),
      project("agent-eval-challenge", "examples/agent-eval-challenge", 60_000),
    ],
    // The JSON report is what `npm run test:slowest` reads (docs/decisions.md, "Where the
    // suite's time goes").
    reporters: ["default", ["json", { outputFile: here(".platform/test-report.json") }]],
  },
});
