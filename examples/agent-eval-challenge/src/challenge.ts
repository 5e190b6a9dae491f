// The agent-eval challenge (spec/agent-eval-challenge.md, interface 1.0.1): miners submit an
// agent as a ZIP; a confidential VM reviews it under an attested, immutable assignment; after a
// verified allow an external Eval run scores it; weights follow the accepted scores.
// Settings: src/settings.ts; state: src/agent-eval-state.ts; records: each feature's *-schemas.ts
// beside its routes (what they share: src/schema-primitives.ts); the state machines: src/state/;
// attestation: src/attestation/; crypto: src/crypto/.
import { defineChallenge } from "@platform/challenge-sdk";
import { createAgentEvalState } from "./agent-eval-state.js";
import { minerEnvRoutes } from "./env/env-routes.js";
import { MINER_ENV_RECORDS } from "./env/env-schemas.js";
import { EVAL_RESULT_RECORDS } from "./eval/eval-result-schemas.js";
import { evalRoutes } from "./eval/eval-routes.js";
import { EVAL_RECORDS, EvalRevalidateResponse } from "./eval/eval-schemas.js";
import { evalVmRoutes } from "./eval/eval-vm-routes.js";
import { EVAL_VM_RECORDS } from "./eval/eval-vm-schemas.js";
import { INSTANCE_SEED_RECORDS } from "./eval/instance-seed-schemas.js";
import { replayAuditRoutes } from "./eval/replay-audit-routes.js";
import { REPLAY_AUDIT_RECORDS } from "./eval/replay-audit-schemas.js";
import { liveRoutes } from "./live/live-routes.js";
import { REVIEW_AUDIT_RECORDS } from "./review/audit-schemas.js";
import { reviewRoutes } from "./review/index.js";
import { REVIEW_ENVELOPE_RECORDS } from "./review/review-envelope-schemas.js";
import { REVIEW_RECORDS } from "./review/review-schemas.js";
import { REVIEW_VM_RECORDS } from "./review/vm-schemas.js";
import { Settings } from "./settings.js";
import { submissionRoutes } from "./submissions/submission-routes.js";
import { SUBMISSION_RECORDS } from "./submissions/submission-schemas.js";
import { agentEvalWeights } from "./weights/agent-weights.js";

/** The interface version this service implements (GET /version `api_version`). */
export const INTERFACE_VERSION = "1.0.1";

/** The challenge: `src/main.ts` runs it; `platform dev` and the tests start it. */
export const challenge = defineChallenge({
  slug: "agent-eval",
  name: "Agent evaluation challenge",
  description:
    "Agents reviewed in an attested confidential VM, then evaluated; weights follow accepted scores.",
  version: "0.1.0",
  apiVersion: INTERFACE_VERSION,
  capabilities: ["submissions", "bundle_zip"],
  // The interface: internal routes answer 503 when no token is configured, never serve open.
  internalWithoutToken: "unavailable",
  schemas: {
    ...SUBMISSION_RECORDS,
    ...REVIEW_RECORDS,
    ...REVIEW_VM_RECORDS,
    ...REVIEW_ENVELOPE_RECORDS,
    ...REVIEW_AUDIT_RECORDS,
    ...MINER_ENV_RECORDS,
    ...EVAL_RECORDS,
    ...EVAL_RESULT_RECORDS,
    ...REPLAY_AUDIT_RECORDS,
    EvalRevalidateResponse,
    ...EVAL_VM_RECORDS,
    ...INSTANCE_SEED_RECORDS,
  },
  config: Settings,
  migrations: new URL("../migrations/", import.meta.url),
  setup: createAgentEvalState,
  routes: (router) => {
    submissionRoutes(router);
    reviewRoutes(router);
    minerEnvRoutes(router);
    evalRoutes(router);
    evalVmRoutes(router);
    replayAuditRoutes(router);
    liveRoutes(router);
  },
  // Rebuilt from the immutable eval results on every call (src/weights/agent-weights.ts).
  weights: ({ sql, state }) => agentEvalWeights(sql, state.options.weightsMode),
});
