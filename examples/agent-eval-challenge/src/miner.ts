/**
 * The miner's tool for the agent-eval challenge: `node dist/miner.js run --agent agents/good`
 * takes an agent from upload to a score (and, through a master, a weight), printing each step;
 * each step is also its own command (`--help`). The mnemonic never leaves this process: the
 * workers get a run token and a signed grant.
 */
import { basename, resolve } from "node:path";
import { generateMnemonic, initCrypto, keypairFromMnemonic } from "@platform/challenge-sdk/signing";
import { connect, MinerError } from "./miner/challenge-client.js";
import {
  evalStatus,
  evaluate,
  launch,
  type Miner,
  review,
  runAll,
  setEnv,
  submitAgent,
} from "./miner/miner-flow.js";
import { minerKeypair } from "./miner/miner-identity.js";
import { type MinerOptions, parseMinerOptions, USAGE } from "./miner/miner-options.js";

const scoreText = (score: number) => String(Number(score.toFixed(6)));

async function execute(options: MinerOptions): Promise<void> {
  let pair: Awaited<ReturnType<typeof minerKeypair>>;
  if (options.newKey) {
    await initCrypto();
    pair = keypairFromMnemonic(generateMnemonic());
    console.log(`miner: a fresh throwaway hotkey ${pair.address} (not saved)`);
  } else {
    pair = await minerKeypair({ keyFile: options.keyFile, env: process.env });
  }
  const client = await connect(options.url, pair);
  console.log(
    `miner: agent-eval at ${client.base}${client.master ? ` (through the master ${client.master})` : ""}, hotkey ${pair.address}`,
  );
  const miner: Miner = { client, pair };
  const id = options.submission!;
  const agentPath = options.agent === undefined ? "" : resolve(options.agent);
  const name = options.name ?? basename(agentPath).replace(/\.zip$/i, "");
  switch (options.command) {
    case "run": {
      const score = await runAll(miner, {
        agentPath,
        name,
        env: options.env,
        agentImage: options.agentImage,
        waitWeightSeconds: options.waitWeightSeconds,
      });
      console.log(`final score: ${scoreText(score)}`);
      return;
    }
    case "submit":
      await submitAgent(miner, agentPath, name);
      return;
    case "env":
      return setEnv(miner, id, options.env);
    case "launch":
      return launch(miner, id);
    case "review":
      await review(miner, id);
      return;
    case "eval": {
      const result = await evaluate(miner, id, { agentImage: options.agentImage });
      console.log(
        `final score: ${scoreText(result.state === "accepted" ? (result.score ?? 0) : 0)}`,
      );
      return;
    }
    case "status": {
      const status = await evalStatus(miner, id);
      if (status.items.length === 0) console.log("miner: no eval run yet");
      for (const item of status.items) {
        const score = item.score === null ? "" : ` score ${scoreText(item.score)}`;
        const failure = item.failure_code ? ` (${item.failure_code})` : "";
        console.log(`miner: run ${item.run_id}: ${item.state}${score}${failure}`);
      }
      return;
    }
  }
}

async function main(): Promise<number> {
  try {
    const options = parseMinerOptions(process.argv.slice(2), process.env);
    if (options === null) {
      console.log(USAGE);
      return 0;
    }
    await execute(options);
    return 0;
  } catch (error) {
    if (!(error instanceof MinerError)) throw error;
    console.error(`miner: error: ${error.message}`);
    return 1;
  }
}

process.exitCode = await main();
