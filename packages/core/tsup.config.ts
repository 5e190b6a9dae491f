import { packageBuild } from "../../tsup.base.ts";

// The runtime entry and the test helpers (`@platform/core/testing`), built once each.
export default packageBuild({
  entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts" },
  external: [/^@platform\/core(\/.*)?$/],
});
