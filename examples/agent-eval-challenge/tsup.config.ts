import { packageBuild } from "../../tsup.base.ts";

// A service, not a library: one entry (the process a container runs), no declarations. The
// migrations stay beside dist/, found from the bundle as `../migrations/`.
const service = packageBuild({
  entry: { main: "src/main.ts" },
  dts: false,
  // Both builds run at once: this one's clean must leave the worker's output alone.
  clean: ["!review-worker.*"],
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

export default [service, reviewWorker];
