// Figure: the agent-eval challenge's task trials per minute with one eval worker at a time
// (baseline) and with two at once (candidate). The challenge runs with `challenge.start()` on its
// own embedded database (development verifier, a generated key); four fresh miners each take
// agents/good through submit, env, launch and the review (untimed) with the miner tool's own
// steps; then two of them are evaluated one after the other and the other two side by side, each
// evaluation a real reference eval worker process running 8 tasks x 2 trials in the agent image
// (platform/agent-eval-agent:local). Every run must end accepted with score 1, or the figure
// throws: a failing run would be faster for the wrong reason.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateMnemonic, initCrypto, keypairFromMnemonic } from "@platform/core";
import { challenge } from "../../examples/agent-eval-challenge/src/challenge.js";
import { DEFAULT_AGENT_IMAGE } from "../../examples/agent-eval-challenge/src/eval-worker/eval-worker-settings.js";
import { connect } from "../../examples/agent-eval-challenge/src/miner/challenge-client.js";
import {
  evaluate,
  launch,
  type Miner,
  review,
  setEnv,
  submitAgent,
} from "../../examples/agent-eval-challenge/src/miner/miner-flow.js";
import { type Figure, round } from "../_figure.js";

const GOOD_AGENT = fileURLToPath(
  new URL("../../examples/agent-eval-challenge/agents/good", import.meta.url),
);

async function evaluated(miner: Miner, id: number): Promise<number> {
  const result = await evaluate(miner, id, { agentImage: DEFAULT_AGENT_IMAGE });
  if (result.state !== "accepted" || result.score !== 1) {
    throw new Error(`an eval run ended ${result.state} with score ${result.score}`);
  }
  return 1;
}

export const agentEvalThroughputFigure: Figure = {
  name: "agent-eval-throughput",
  async run() {
    await initCrypto();
    const dataDir = mkdtempSync(join(tmpdir(), "bench-agent-eval-"));
    // The flow's step lines go to stderr: stdout carries the figure's one JSON line.
    const log = console.log;
    console.log = (...args: unknown[]) => console.error(...args);
    const running = await challenge.start({
      host: "127.0.0.1",
      port: 0,
      dataDir,
      env: {
        CHALLENGE_TOKEN: "bench-agent-eval-challenge-token-0123456789",
        LOG_LEVEL: "error",
        SECRET_KEY_GENERATE: "true",
        ATTESTATION_VERIFIER: "dev",
      },
    });
    try {
      const ready: { miner: Miner; id: number; trials: number }[] = [];
      for (let index = 0; index < 4; index++) {
        const pair = keypairFromMnemonic(generateMnemonic());
        const miner: Miner = { client: await connect(running.url, pair), pair };
        // The challenge refuses an artifact it already holds: one more file makes each distinct.
        const agent = join(dataDir, `agent-${index}`);
        cpSync(GOOD_AGENT, agent, { recursive: true });
        writeFileSync(join(agent, "NOTES.txt"), `bench copy ${index} ${Date.now()}\n`);
        const id = await submitAgent(miner, agent, `bench-${index}`);
        await setEnv(miner, id, {});
        await launch(miner, id);
        if ((await review(miner, id)) !== "allowed") throw new Error("the review did not allow");
        ready.push({ miner, id, trials: 0 });
      }
      const trialsPerRun = 8 * 2;
      const oneStart = performance.now();
      for (const entry of ready.slice(0, 2)) await evaluated(entry.miner, entry.id);
      const oneMinutes = (performance.now() - oneStart) / 60_000;
      const twoStart = performance.now();
      await Promise.all(ready.slice(2).map((entry) => evaluated(entry.miner, entry.id)));
      const twoMinutes = (performance.now() - twoStart) / 60_000;
      const oneWorker = (2 * trialsPerRun) / oneMinutes;
      const twoWorkers = (2 * trialsPerRun) / twoMinutes;
      return {
        baseline: "task trials per minute, one eval worker at a time (same challenge, same run)",
        ratio: round(twoWorkers / oneWorker, 2),
        trials_per_minute_1_worker: round(oneWorker, 1),
        trials_per_minute_2_workers: round(twoWorkers, 1),
        runs_per_round: 2,
        trials_per_run: trialsPerRun,
      };
    } finally {
      console.log = log;
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
