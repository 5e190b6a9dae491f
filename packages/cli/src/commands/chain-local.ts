import { defineCommand } from "citty";
import { epochModelOf, runtimeFlag, runtimeOf } from "./_runtime-flag.js";
import { CliError, runCommand, untilSignal } from "./_shared.js";

/** `platform chain local`: run the local subtensor until Ctrl-C or SIGTERM. */
export default defineCommand({
  meta: {
    name: "local",
    description:
      "Run a local subtensor: finney's runtime metadata over JSON-RPC on a websocket, blocks every --block-ms, set_weights and commit_timelocked_weights checked with the chain's own rules and errors. It is its own drand beacon (its public key is printed at start): commits are revealed at their reveal epoch with its pulses. Its dev_ methods (on the same websocket) register neurons, set hyperparameters, skip drand rounds and inject faults: see docs/chain.md.",
  },
  args: {
    port: {
      type: "string",
      description: "Port of the websocket (default 9944; 0 picks a free one)",
      default: "9944",
      valueHint: "port",
    },
    host: {
      type: "string",
      description: "Address to bind (default 127.0.0.1)",
      default: "127.0.0.1",
      valueHint: "addr",
    },
    "block-ms": {
      type: "string",
      description: "Milliseconds between blocks (default 12000, as on finney; tests use 250)",
      default: "12000",
      valueHint: "ms",
    },
    "commit-reveal": {
      type: "boolean",
      description:
        "Subnets start with CommitRevealWeightsEnabled on, as on finney: weights go in as timelocked commits to this chain's drand key, revealed an epoch later (default off here: set_weights is accepted)",
      default: false,
    },
    ...runtimeFlag,
    "rate-limit": {
      type: "string",
      description: "WeightsSetRateLimit of new subnets, in blocks (default 100, as on finney)",
      default: "100",
      valueHint: "blocks",
    },
  },
  run: ({ args }) =>
    runCommand(async () => {
      const port = integer(args.port, "--port", 0, 65_535);
      const blockMs = integer(args["block-ms"], "--block-ms", 10, 600_000);
      const rateLimit = integer(args["rate-limit"], "--rate-limit", 0, 1_000_000);
      const runtime = runtimeOf(args.runtime);
      const { startLocalSubtensor } = await import("@platform/chain/local");
      const chain = await startLocalSubtensor({
        runtime,
        port,
        host: args.host,
        blockMs,
        subnetDefaults: {
          CommitRevealWeightsEnabled: args["commit-reveal"],
          WeightsSetRateLimit: rateLimit,
        },
      });
      process.stdout.write(
        `local subtensor: ${chain.url}\n` +
          `genesis: ${chain.genesisHash} (not finney's: validators know they are on a local chain)\n` +
          `finney ${runtime} runtime (${epochModelOf(runtime)}), blocks every ${blockMs} ms, finalized 2 behind; commit-reveal ${args["commit-reveal"] ? "on" : "off"}, weights rate limit ${rateLimit} blocks\n` +
          `drand public key: ${chain.drandInfo().public_key}\n` +
          `  (this chain's own beacon: a round every 3 s of chain time, which advances 12 s a block; dev_drandInfo answers {public_key, genesis_time, period})\n` +
          `register a neuron: {"jsonrpc":"2.0","id":1,"method":"dev_registerNeuron","params":[1,"<hotkey ss58>",true]}\n`,
      );
      const signal = await untilSignal();
      process.stdout.write(`received ${signal}, shutting down\n`);
      await chain.close();
    }),
});

function integer(text: string, flag: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new CliError(
      `${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
  return value;
}
