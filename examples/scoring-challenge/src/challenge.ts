// The scoring challenge (spec/scoring-challenge.md): miners submit a ZIP of two PyTorch scripts,
// a worker takes it through duplicate checks, static gates, an LLM review and a forced-init
// scored run in a container, and the score is prequential bits per byte computed here from what
// the harness measured. Settings: src/settings.ts; state and worker: src/scoring-state.ts;
// the pipeline: src/pipeline/process-submission.ts; routes: src/routes/.
import { databaseNow, defineChallenge } from "@platform/challenge-sdk";
import { epochIdAt } from "./epochs.js";
import { epochWeights } from "./leaderboard.js";
import { internalRoutes } from "./routes/internal-routes.js";
import { publicRoutes } from "./routes/public-routes.js";
import { submissionRoutes } from "./routes/submission-routes.js";
import { createScoringState } from "./scoring-state.js";
import { Settings } from "./settings.js";

/** The challenge: `src/main.ts` runs it; `platform dev` and the tests start it. */
export const challenge = defineChallenge({
  slug: "scoring",
  name: "Scoring challenge",
  description:
    "PyTorch bundles (architecture.py + training.py) gated and scored by prequential bits per byte.",
  version: "0.1.0",
  apiVersion: "1.0",
  capabilities: ["submissions", "bundle_zip", "leaderboard", "epochs", "llm_gate", "gpu_leases"],
  config: Settings,
  migrations: new URL("../migrations/", import.meta.url),
  setup: createScoringState,
  routes: (router) => {
    submissionRoutes(router);
    publicRoutes(router);
    internalRoutes(router);
  },
  // Each hotkey's best final_score in the current epoch, normalised by the SDK (a dry run: the
  // master aggregates, nothing is written on-chain); nothing scored -> {} (burn).
  weights: async ({ sql, state }) =>
    epochWeights(sql, epochIdAt(await databaseNow(sql), state.options.epochSeconds)),
});
