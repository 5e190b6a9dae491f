import { packageBuild } from "../../tsup.base.ts";

// A service, not a library: the process a container runs, and the miner's tool (run from this
// checkout, beside node_modules), no declarations. The migrations stay beside dist/, found from
// the bundle as `../migrations/`.
const service = packageBuild({
  entry: { main: "src/main.ts", miner: "src/miner.ts" },
  dts: false,
  // The builds run at once: this one's clean must leave the workers' output alone.
  clean: ["!review-worker.*", "!eval-worker.*"],
});

// The reference review worker runs in its own image, which has no node_modules: one file with
// every dependency inside (the SDK, yauzl). yauzl is CommonJS and requires node builtins, which
// an ES module bundle can only do through a real `require`, hence the banner. `clean` stays off
// so the two builds do not delete each other's output. The workspace packages are bundled from
// their sources (the `@platform/source` condition), so the worker does not depend on their dist/
// being built first.
const reviewWorker = packageBuild({
  entry: { "review-worker": "src/review-worker.ts" },
  dts: false,
  clean: false,
  noExternal: [/.*/],
  esbuildOptions(options) {
    options.conditions = ["@platform/source"];
  },
  banner: {
    js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
  },
});

// The reference eval worker, bundled the same way for its own image (eval-worker-image/): the
// SDK's task runner (dockerode and its CommonJS dependencies) goes inside too. Its task set is
// read from ../tasks/ at run time, beside dist/ here and in the image.
const evalWorker = packageBuild({
  entry: { "eval-worker": "src/eval-worker.ts" },
  dts: false,
  clean: false,
  // Everything inside but ssh2's native binding, left to its try/catch `require` (below).
  noExternal: [/^(?!.*sshcrypto\.node$)/],
  external: [/sshcrypto\.node$/],
  esbuildOptions(options) {
    options.conditions = ["@platform/source"];
  },
  // ssh2 (under dockerode) tries two optional native speed-ups in a try/catch and runs without
  // them: both stay out of the bundle. Their install scripts do not run (allowScripts, see
  // docs/decisions.md "A quiet install"), so sshcrypto.node is not even built; when it is, the
  // image would not take it anyway (it takes the one .js file).
  esbuildPlugins: [
    {
      name: "no-cpu-features",
      setup(build) {
        build.onResolve({ filter: /^cpu-features$/ }, (args) => ({
          path: args.path,
          external: true,
        }));
      },
    },
  ],
  // ssh2 also reads __dirname, which an ES module has not: tsup defines it.
  shims: true,
  banner: {
    js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
  },
});

export default [service, reviewWorker, evalWorker];
