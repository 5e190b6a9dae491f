import { packageBuild } from "../../tsup.base.ts";

export default packageBuild({ entry: ["src/index.ts", "src/cli.ts"] });
