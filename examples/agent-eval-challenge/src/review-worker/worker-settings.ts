/**
 * The reference review worker's settings, from its environment: the assignment token (its only
 * secret), where the challenge is, and the optional OpenAI-compatible model. Read once and
 * checked whole, so a bad variable stops the worker before it touches the network.
 */
import { fileURLToPath } from "node:url";
import { readCapabilityToken } from "@platform/challenge-sdk/tokens";
import { httpUrl, ownDigest } from "../worker-environment.js";

/** The reviewer named in every report (and measured into RTMR3). */
export const REVIEWER = Object.freeze({ name: "agent-eval-reference-reviewer", version: "1.0.0" });

/** An OpenAI-compatible chat-completions endpoint. */
export interface ModelSettings {
  /** e.g. https://api.example.com/v1 (no trailing slash). */
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** The host the one connection goes to (bound by model-call-started). */
  endpointHost: string;
}

export type WorkerSettings = ReturnType<typeof loadWorkerSettings>;

export class WorkerSettingsError extends Error {
  override readonly name = "WorkerSettingsError";
}

const MODEL_NAME_PATTERN = /^[A-Za-z0-9._:/@+-]{1,128}$/;
const HOST_PATTERN =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Read and check the environment; every problem is listed, no value is ever echoed. */
export function loadWorkerSettings(
  env: NodeJS.ProcessEnv = process.env,
  ownFile: string = fileURLToPath(import.meta.url),
) {
  const problems: string[] = [];
  const token = env.REVIEW_SESSION_TOKEN?.trim() ?? "";
  const parsed = token === "" ? null : readCapabilityToken(token);
  if (token === "") problems.push("REVIEW_SESSION_TOKEN is required");
  else if (parsed === null) problems.push("REVIEW_SESSION_TOKEN is not an assignment token");

  const challengeUrl = httpUrl(env.CHALLENGE_URL, "CHALLENGE_URL", problems, true);
  const model = modelSettings(env, problems);

  const imageDigest = env.REVIEW_VM_IMAGE_DIGEST?.trim() || ownDigest(ownFile);
  if (!/^sha256:[0-9a-f]{64}$/.test(imageDigest)) {
    problems.push("REVIEW_VM_IMAGE_DIGEST must be sha256:<64 lowercase hex>");
  }
  if (problems.length > 0) throw new WorkerSettingsError(problems.join("; "));
  return {
    token,
    assignmentId: parsed!.id,
    // The challenge's base URL (a master's `<master>/challenges/agent-eval` works too).
    challengeUrl: challengeUrl!,
    model,
    devAttestationKeyFile: env.DEV_ATTESTATION_KEY_FILE?.trim() || undefined,
    // `sha256:<hex>` of the image the worker runs in, for the report's vm_config.
    imageDigest,
  };
}

function modelSettings(env: NodeJS.ProcessEnv, problems: string[]): ModelSettings | null {
  const baseUrl = httpUrl(env.MODEL_BASE_URL, "MODEL_BASE_URL", problems, false);
  if (baseUrl === null) return null;
  const model = env.MODEL_NAME?.trim() ?? "";
  if (!MODEL_NAME_PATTERN.test(model)) {
    problems.push("MODEL_NAME is required with MODEL_BASE_URL (letters, digits, ._:/@+-)");
  }
  const endpointHost = new URL(baseUrl).hostname;
  if (!HOST_PATTERN.test(endpointHost)) {
    problems.push("MODEL_BASE_URL's host must be a DNS name or an IPv4 address");
  }
  return { baseUrl, apiKey: env.MODEL_API_KEY?.trim() || undefined, model, endpointHost };
}
