import { defineCommand } from "citty";

/** `platform validator`: set the master's weights on chain with your own validator hotkey. */
export default defineCommand({
  meta: {
    name: "validator",
    description:
      "Run a validator: read a master's weights, map them to uids with your own read of the chain, check the subnet's rules, set them on chain and confirm them",
  },
  subCommands: {
    run: () => import("./validator-run.js").then((module) => module.default),
    status: () => import("./validator-status.js").then((module) => module.default),
  },
});
