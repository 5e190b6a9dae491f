import { packageBuild } from "../../tsup.base.ts";

// The validator's entry, and the local subtensor (`@platform/chain/local`) apart from it, so a
// validator never loads a node it does not run.
export default packageBuild({
  entry: { index: "src/index.ts", "local/index": "src/local-subtensor/index.ts" },
});
