/**
 * The reference review worker: the process a review VM runs (its image is worker-image/). It
 * reads its assignment token and the challenge's URL from the environment, reviews the agent
 * ZIP of that assignment and posts an attested report. Exit 0 when a report was receipted,
 * whatever the verdict; 1 otherwise. Never prints the token.
 */
import { runReview } from "./review-worker/run-review.js";
import { loadWorkerSettings, WorkerSettingsError } from "./review-worker/worker-settings.js";

async function main(): Promise<number> {
  let settings: ReturnType<typeof loadWorkerSettings>;
  try {
    settings = loadWorkerSettings();
  } catch (error) {
    if (!(error instanceof WorkerSettingsError)) throw error;
    console.log(`review-worker: bad environment: ${error.message}`);
    return 1;
  }
  const result = await runReview(settings);
  if (result.receipted) {
    console.log(`review-worker: done: verdict ${result.verdict}, assignment ${result.state}`);
    return 0;
  }
  console.log(`review-worker: no report receipted (${result.reason})`);
  return 1;
}

process.exitCode = await main();
