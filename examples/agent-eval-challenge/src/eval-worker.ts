/**
 * The reference eval worker: the process an Eval VM runs (its image is eval-worker-image/). It
 * reads the run token, the miner's signed telemetry grant and the challenge's URL from the
 * environment, has the run's instance seed released to its attested key, runs every task family
 * of the run's plan k times against the agent, each trial on its own instance in its own
 * sandboxed container of the agent image, and posts an attested result. Exit 0 when the
 * result was receipted, whatever the score; 1 otherwise. Never prints a token.
 */
import {
  EvalWorkerSettingsError,
  loadEvalWorkerSettings,
} from "./eval-worker/eval-worker-settings.js";
import { runEval } from "./eval-worker/run-eval.js";

async function main(): Promise<number> {
  let settings: ReturnType<typeof loadEvalWorkerSettings>;
  try {
    settings = loadEvalWorkerSettings();
  } catch (error) {
    if (!(error instanceof EvalWorkerSettingsError)) throw error;
    console.log(`eval-worker: bad environment: ${error.message}`);
    return 1;
  }
  const result = await runEval(settings);
  if (result.receipted) {
    console.log(`eval-worker: done: score ${result.score}, run ${result.state}`);
    return 0;
  }
  console.log(`eval-worker: no result receipted (${result.reason})`);
  return 1;
}

process.exitCode = await main();
