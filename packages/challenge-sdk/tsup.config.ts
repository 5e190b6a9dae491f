import { packageBuild } from "../../tsup.base.ts";

// Two entries: the runtime SDK and the testing kit. The kit imports the SDK by its own name, so
// it is not bundled into dist/testing (one copy of the SDK, and its migrations found from dist/).
export default packageBuild({
  entry: { index: "src/index.ts", "testing/index": "src/testing/index.ts" },
  external: ["@platform/challenge-sdk", "vitest"],
});
