import { defineCommand } from "citty";

/** The root `platform` command; subcommands load lazily so `--help` stays fast. */
export const main = defineCommand({
  meta: {
    name: "platform",
    description: "Run a subnet master, author challenges, and submit work as a miner.",
  },
  subCommands: {},
});
