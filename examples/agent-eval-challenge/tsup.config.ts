import { packageBuild } from "../../tsup.base.ts";

// A service, not a library: one entry (the process a container runs), no declarations. The
// migrations stay beside dist/, found from the bundle as `../migrations/`.
export default packageBuild({
  entry: { main: "src/main.ts" },
  dts: false,
});
