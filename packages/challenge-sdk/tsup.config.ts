import { packageBuild } from "../../tsup.base.ts";

// One entry per public subpath. The entries import each other by the package's own name, so
// each is built once (one copy of the SDK, and its migrations found from dist/).
const SUBPATHS = [
  "jobs",
  "tasks",
  "sandbox",
  "proxy-contract",
  "signing",
  "zip",
  "tokens",
  "client",
  "testing",
] as const;

export default packageBuild({
  entry: {
    index: "src/index.ts",
    ...Object.fromEntries(SUBPATHS.map((name) => [`${name}/index`, `src/${name}/index.ts`])),
  },
  external: [/^@platform\/challenge-sdk(\/.*)?$/, "vitest"],
});
