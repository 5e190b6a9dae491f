/**
 * The replay-audit routes (rule 16), for validators behind the challenge token. The work is in
 * replay-audit.ts.
 */
import type { ChallengeRouter } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { RunIdParams } from "../route-params.js";
import type { Settings } from "../settings.js";
import {
  listReplayAuditRequests,
  recordReplayResult,
  replayAuditRequest,
  samplerSeed,
} from "./replay-audit.js";
import {
  ReplayAuditRequestListResponse,
  ReplayAuditRequestResponse,
  ReplayAuditResultRequest,
  ReplayAuditResultResponse,
} from "./replay-audit-schemas.js";

const NOT_AVAILABLE = {
  404: { description: "audit_not_available: not an accepted, fully attested run" },
};

/** Register the replay-audit routes. */
export function replayAuditRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  const sampler = (state: AgentEvalState) => ({
    seed: samplerSeed(state.options.replayAudit.seed, state.secretKey),
    rate: state.options.replayAudit.rate,
  });

  router.internal({
    method: "GET",
    path: "/internal/v1/replay-audits/requests",
    summary: "The runs the deterministic sampler selects for replay (rule 16)",
    description:
      "Accepted, fully attested runs ranked by sha256(seed:run id); the first " +
      "round(REPLAY_AUDIT_RATE x N) are listed.",
    tags: ["replay-audit"],
    responses: {
      200: { description: "The selected runs", schema: ReplayAuditRequestListResponse },
    },
    handler: ({ sql, state }) => listReplayAuditRequests(sql, sampler(state), state.secretKey),
  });

  router.internal({
    method: "GET",
    path: "/internal/v1/replay-audits/:eval_run_id/request",
    summary: "One accepted, fully attested run, with what a replay needs",
    tags: ["replay-audit"],
    params: RunIdParams,
    responses: {
      200: { description: "The run", schema: ReplayAuditRequestResponse },
      ...NOT_AVAILABLE,
    },
    handler: ({ sql, state, params }) =>
      replayAuditRequest(sql, params.eval_run_id, sampler(state), state.secretKey),
  });

  router.internal({
    method: "POST",
    path: "/internal/v1/replay-audits/:eval_run_id/result",
    summary: "Compare a replay with the attested score; store it once; change nothing else",
    description:
      "The replay's score is recomputed with the plan's policy; delta and whether it exceeds " +
      "the tolerance (0.2) are stored once per (run, audit id): the same replay again answers " +
      "the stored record, another one 409 audit_conflict. Accepted scores and weights never move.",
    tags: ["replay-audit"],
    params: RunIdParams,
    body: ReplayAuditResultRequest,
    responses: {
      200: { description: "The stored comparison", schema: ReplayAuditResultResponse },
      400: { description: "replay_invalid: a task outside the plan, or the wrong trial count" },
      ...NOT_AVAILABLE,
      409: { description: "audit_conflict" },
    },
    handler: ({ sql, params, body }) =>
      recordReplayResult(sql, {
        runId: params.eval_run_id,
        auditId: body.audit_id,
        tasks: body.tasks,
      }),
  });
}
