/**
 * The miner env routes and launch (miner-signed, the submission's own hotkey only). The work is
 * in miner-env.ts; the rules of what an env may hold in env-rules.ts.
 */
import type { ChallengeRouter } from "@platform/challenge-sdk";
import type { AgentEvalState } from "../agent-eval-state.js";
import { OWNER_ERRORS, ownerRequest, submissionRoute } from "../route-params.js";
import type { Settings } from "../settings.js";
import {
  MinerEnvLaunchResponse,
  MinerEnvMetadataResponse,
  MinerEnvUpdateRequest,
} from "./env-schemas.js";
import {
  confirmEmptyMinerEnv,
  launchEvaluation,
  readMinerEnv,
  replaceMinerEnv,
} from "./miner-env.js";

const LOCKED = { 409: { description: "env_locked: launch locked the env for good" } };

/** Register the env routes and launch. */
export function minerEnvRoutes(router: ChallengeRouter<Settings, AgentEvalState>): void {
  router.signed({
    method: "GET",
    path: "/submissions/:submission_id/env",
    summary: "The env's metadata: names, sizes and sha256 of the values, never a value",
    ...submissionRoute("env"),
    responses: {
      200: { description: "The metadata", schema: MinerEnvMetadataResponse },
      ...OWNER_ERRORS,
    },
    handler: ({ sql, params, miner }) => readMinerEnv(sql, ownerRequest(params, miner)),
  });

  router.signed({
    method: "PUT",
    path: "/submissions/:submission_id/env",
    summary: "Replace the whole env (sealed at rest; locked once launched)",
    description:
      "At most 64 keys matching ^[A-Za-z_][A-Za-z0-9_]{0,127}$, 16 KiB a value, 128 KiB in all " +
      "(bytes of UTF-8). Keys naming a location (..._URL, ..._HOST, ..._PROXY, ...) and " +
      "URL-shaped values are refused: the evaluator gives the agent its model endpoint.",
    ...submissionRoute("env"),
    body: MinerEnvUpdateRequest,
    responses: {
      200: { description: "The new metadata", schema: MinerEnvMetadataResponse },
      400: { description: "env_url_not_allowed, env_value_too_large, env_too_large" },
      ...OWNER_ERRORS,
      ...LOCKED,
    },
    handler: ({ sql, state, params, miner, body }) =>
      replaceMinerEnv(sql, {
        ...ownerRequest(params, miner),
        env: body.env,
        secretKey: state.secretKey,
      }),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/env/confirm-empty",
    summary: "Record an explicit empty env (what launch needs when there is nothing to set)",
    ...submissionRoute("env"),
    responses: {
      200: { description: "The metadata (status empty)", schema: MinerEnvMetadataResponse },
      ...OWNER_ERRORS,
      ...LOCKED,
    },
    handler: ({ sql, params, miner }) => confirmEmptyMinerEnv(sql, ownerRequest(params, miner)),
  });

  router.signed({
    method: "POST",
    path: "/submissions/:submission_id/launch",
    summary: "The miner's go-ahead for evaluation: recorded once, locks the env",
    description:
      "412 env_not_confirmed until the env is set or confirmed empty. It may come before the " +
      "review allows; eval/prepare needs both a launch and a verified allow. A repeat answers " +
      "the recorded launch.",
    ...submissionRoute("env"),
    responses: {
      200: { description: "The launch", schema: MinerEnvLaunchResponse },
      ...OWNER_ERRORS,
      412: { description: "env_not_confirmed: set the env or confirm it empty first" },
    },
    handler: ({ sql, params, miner }) => launchEvaluation(sql, ownerRequest(params, miner)),
  });
}
