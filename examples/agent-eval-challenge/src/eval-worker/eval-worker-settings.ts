/**
 * The reference eval worker's settings, from its environment: the run token, the telemetry
 * grant the miner signed (never a mnemonic), where the challenge is, the image agents run in and
 * the trial deadline. Read once and checked whole, so a bad variable stops the worker before it
 * touches the network; no value is ever echoed (the token and the grant are secrets).
 */
import { fileURLToPath } from "node:url";
import { readCapabilityToken } from "@platform/challenge-sdk/tokens";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { TelemetrySessionRequest } from "../eval/eval-vm-schemas.js";
import type { TelemetryGrant } from "../eval/telemetry-grant.js";
import { httpUrl, ownDigest } from "../worker-environment.js";

/** The evaluator named in every result (and measured into RTMR3). */
export const EVALUATOR = Object.freeze({
  name: "agent-eval-reference-evaluator",
  version: "1.0.0",
});

/** The image agents run in (agent-image/build.sh tags it). */
export const DEFAULT_AGENT_IMAGE = "platform/agent-eval-agent:local";
/** A trial's wall-clock deadline unless EVAL_TRIAL_TIMEOUT_SECONDS says otherwise. */
export const DEFAULT_TRIAL_TIMEOUT_SECONDS = 60;
const MAX_TRIAL_TIMEOUT_SECONDS = 3600;

export type EvalWorkerSettings = ReturnType<typeof loadEvalWorkerSettings>;

export class EvalWorkerSettingsError extends Error {
  override readonly name = "EvalWorkerSettingsError";
}

const IMAGE_PATTERN = /^[a-z0-9][a-z0-9._/:@-]{0,254}$/;

/** Read and check the environment; every problem is listed, no value is ever echoed. */
export function loadEvalWorkerSettings(
  env: NodeJS.ProcessEnv = process.env,
  ownFile: string = fileURLToPath(import.meta.url),
) {
  const problems: string[] = [];
  const token = env.EVAL_RUN_TOKEN?.trim() ?? "";
  const parsed = token === "" ? null : readCapabilityToken(token);
  if (token === "") problems.push("EVAL_RUN_TOKEN is required");
  else if (parsed === null) problems.push("EVAL_RUN_TOKEN is not a run token");

  const grant = telemetryGrant(env.TELEMETRY_GRANT, problems);
  const challengeUrl = httpUrl(env.CHALLENGE_URL, "CHALLENGE_URL", problems, true);
  const challengeInternalUrl = env.CHALLENGE_INTERNAL_URL?.trim()
    ? httpUrl(env.CHALLENGE_INTERNAL_URL, "CHALLENGE_INTERNAL_URL", problems, true)
    : challengeUrl;

  const agentImage = env.AGENT_IMAGE?.trim() || DEFAULT_AGENT_IMAGE;
  if (!IMAGE_PATTERN.test(agentImage)) problems.push("AGENT_IMAGE is not an image reference");

  const timeoutText = env.EVAL_TRIAL_TIMEOUT_SECONDS?.trim() || "";
  const trialTimeoutSeconds =
    timeoutText === "" ? DEFAULT_TRIAL_TIMEOUT_SECONDS : Number(timeoutText);
  if (
    !/^\d{1,5}$/.test(timeoutText || "0") ||
    trialTimeoutSeconds < 1 ||
    trialTimeoutSeconds > MAX_TRIAL_TIMEOUT_SECONDS
  ) {
    problems.push(
      `EVAL_TRIAL_TIMEOUT_SECONDS must be whole seconds, 1 to ${MAX_TRIAL_TIMEOUT_SECONDS}`,
    );
  }

  const imageDigest = env.EVAL_VM_IMAGE_DIGEST?.trim() || ownDigest(ownFile);
  if (!/^sha256:[0-9a-f]{64}$/.test(imageDigest)) {
    problems.push("EVAL_VM_IMAGE_DIGEST must be sha256:<64 lowercase hex>");
  }
  if (problems.length > 0) throw new EvalWorkerSettingsError(problems.join("; "));
  return {
    token,
    runId: parsed!.id,
    grant: grant!,
    // The challenge's base URL (a master's `<master>/challenges/agent-eval` works too).
    challengeUrl: challengeUrl!,
    // Where the challenge's /internal routes answer (the attempt events route): the master's
    // proxy never forwards /internal, so through a master this is the challenge's own address.
    challengeInternalUrl: challengeInternalUrl!,
    devAttestationKeyFile: env.DEV_ATTESTATION_KEY_FILE?.trim() || undefined,
    agentImage,
    trialTimeoutSeconds,
    // `sha256:<hex>` of the image the worker runs in, for the result's vm_config.
    imageDigest,
  };
}

// The grant's shape as the telemetry-session route takes it; the service verifies the
// signature, the hotkey and the window.
const GRANT_SHAPE = TypeCompiler.Compile(TelemetrySessionRequest);

function telemetryGrant(value: string | undefined, problems: string[]): TelemetryGrant | null {
  const text = value?.trim() ?? "";
  if (text === "") {
    problems.push("TELEMETRY_GRANT is required (JSON {hotkey_ss58, signature, nonce, timestamp})");
    return null;
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    problems.push("TELEMETRY_GRANT is not JSON");
    return null;
  }
  if (!GRANT_SHAPE.Check(document)) {
    problems.push(
      "TELEMETRY_GRANT must be {hotkey_ss58, signature, nonce, timestamp} (strings; timestamp in unix seconds)",
    );
    return null;
  }
  return document;
}
