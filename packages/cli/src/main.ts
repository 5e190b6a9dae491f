import { defineCommand } from "citty";
import { CLI_VERSION } from "./version.js";

/** The root `platform` command; subcommands load lazily so `--help` stays fast. */
export const main = defineCommand({
  meta: {
    name: "platform",
    version: CLI_VERSION,
    description: "Run a subnet master, author challenges, and submit work as a miner.",
  },
  subCommands: {
    master: () => import("./commands/master.js").then((module) => module.default),
    challenge: () => import("./commands/challenge.js").then((module) => module.default),
    keys: () => import("./commands/keys.js").then((module) => module.default),
    submit: () => import("./commands/submit.js").then((module) => module.default),
    status: () => import("./commands/status.js").then((module) => module.default),
    dev: () => import("./commands/dev.js").then((module) => module.default),
    chain: () => import("./commands/chain.js").then((module) => module.default),
    validator: () => import("./commands/validator.js").then((module) => module.default),
  },
});
