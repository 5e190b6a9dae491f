import { defineCommand } from "citty";

/** `platform chain`: a local subtensor for development, tests and demos. */
export default defineCommand({
  meta: {
    name: "chain",
    description: "Chain tools: run a local subtensor that validators and @polkadot/api connect to",
  },
  subCommands: {
    local: () => import("./chain-local.js").then((module) => module.default),
  },
});
