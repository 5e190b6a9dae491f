import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";
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
  { find: /^@platform\/chain$/, replacement: here("packages/chain/src/index.ts") },
  {
    find: /^@platform\/chain\/local$/,
    replacement: here("packages/chain/src/local-subtensor/index.ts"),
  },
  { find: /^@platform\/master$/, replacement: here("packages/master/src/index.ts") },
];

// Files that need a module graph and a process of their own: they set process-wide state that
// the next file would inherit (OpenTelemetry's global providers, the sr25519 WASM's readiness,
// the verify pool's workers) or assert what a fresh process does. Every other file shares its
// worker's modules with the files before it in that worker (`isolate: false`): importing the
// packages once per worker instead of once per file took the master's files from 215 to 133
// CPU-seconds (docs/decisions.md, "Where the suite's time goes"). A file that fails only after
// another one in the same worker belongs here, with the reason.
const ISOLATED: Record<string, string[]> = {
  core: [
    "src/ops/tracing.test.ts", // installs the global tracer provider
    "src/ops/tracing-off.test.ts", // asserts there is no global tracer provider
    "src/signing/_wasm.test.ts", // asserts what happens before initCrypto
    "src/signing/verify-pool.test.ts", // kills the pool's workers
  ],
  chain: [
    "src/polkadot-console.test.ts", // asserts what @polkadot's console shim does when first installed
  ],
  master: [
    "test/operations/upload-trace.test.ts", // installs the global tracer provider
    "test/operations/proxy-head-sampling.test.ts", // installs the global tracer provider
    "test/operations/explicit-trace-context.test.ts", // installs the global tracer provider
  ],
};

const TEST_FILES = ["src/**/*.test.ts", "test/**/*.test.ts"];

/**
 * A package's tests: the shared-module project, and its isolated files as a project apart.
 * `shared: false` keeps every file isolated: the CLI's files spend their time in the processes
 * they start, and sharing modules saved them nothing (170 CPU-s either way).
 */
const project = (name: string, root: string, timeout = 30_000, shared = true) => {
  const isolated = ISOLATED[name] ?? [];
  const settings = (test: Record<string, unknown>) => ({
    resolve: { alias },
    test: { root: here(root), testTimeout: timeout, hookTimeout: 60_000, ...test },
  });
  return [
    settings({
      name,
      include: TEST_FILES,
      exclude: [...configDefaults.exclude, ...isolated],
      isolate: !shared,
    }),
    ...(isolated.length > 0 ? [settings({ name: `${name}:isolated`, include: isolated })] : []),
  ];
};

export default defineConfig({
  test: {
    // Most suites wait on child processes, containers and databases rather than compute: one
    // worker more than the 2 cores keeps both busy (docs/decisions.md, "Three test workers").
    maxWorkers: 3,
    // Longest files first, by the last recorded full run, so no long file starts last.
    sequence: { sequencer: DurationSequencer },
    projects: [
      ...project("core", "packages/core"),
      ...project("chain", "packages/chain"),
      ...project("master", "packages/master"),
      ...project("challenge-sdk", "packages/challenge-sdk", 60_000),
      ...project("cli", "packages/cli", 90_000, false),
      ...project("scoring-challenge", "examples/scoring-challenge", 120_000),
      ...project("agent-eval-challenge", "examples/agent-eval-challenge", 60_000),
      // The deployment to copy, brought up with docker-compose and as a Swarm stack: files whose
      // steps wait on containers (deploy/test/compose.test.ts sets its own timeouts). Not in
      // `npm test` (`--project '!deploy'`): it tests the deployment's images, not the code, and
      // runs as `npm run test:deploy`, a step of .ci/run after those images are built
      // (docs/decisions.md, "Where the suite's time goes").
      ...project("deploy", "deploy", 300_000),
    ],
    // The JSON report is what `npm run test:slowest` reads (docs/decisions.md, "Where the
    // suite's time goes").
    reporters: ["default", ["json", { outputFile: here(".platform/test-report.json") }]],
  },
});
