/**
 * The agent-eval challenge's own environment (the SDK reads PORT, DATABASE_URL or DATA_DIR,
 * CHALLENGE_TOKEN, PLATFORM_MASTER_URL, BROKER_TOKEN...). `Settings` is what TypeBox checks one
 * variable at a time; `resolveSettings` adds the rules that span several and turns the lot into
 * the options the service runs with.
 *
 * Why production refuses to start without SECRET_KEY_FILE: every capability token, cursor and
 * sealed value is derived from that one key. A key generated at start would silently invalidate
 * every token already delivered to a review VM on the next restart, and a key in DATA_DIR of a
 * container is a key on an ephemeral disk. Development (no CHALLENGE_TOKEN) generates one inside
 * DATA_DIR instead, and so does SECRET_KEY_GENERATE=true (what `platform dev` sets, since dev gives
 * every challenge a CHALLENGE_TOKEN), so development needs no setup.
 */
import { ConfigError, type ConfigOf, type Static, Type } from "@platform/challenge-sdk";
import { DEFAULT_TRUSTED_PROXIES, trustedProxies } from "@platform/challenge-sdk/proxy-contract";
import { parseAcceptedTcbStatuses } from "./attestation/index.js";
import { Literals } from "./schema-primitives.js";
import { WEIGHTS_MODES } from "./weights/agent-weights.js";

/** Every variable this challenge reads beyond the SDK's own. */
export const Settings = Type.Object({
  SECRET_KEY_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "A file holding one 32-byte key (raw, hex or base64); every HMAC and encryption key is derived from it",
    }),
  ),
  SECRET_KEY_GENERATE: Type.Boolean({
    default: false,
    description:
      "Development only: without SECRET_KEY_FILE, generate the key inside DATA_DIR (platform dev sets it)",
  }),
  OWNER_HOTKEY: Type.Optional(
    Type.String({
      pattern: "^[1-9A-HJ-NP-Za-km-z]{46,48}$",
      description: "The ss58 address allowed on /owner/*",
    }),
  ),
  ATTESTATION_VERIFIER: Type.Union([Type.Literal("dcap"), Type.Literal("dev")], {
    default: "dcap",
    description:
      "dcap: Intel TDX quotes through a collateral verifier; dev: development quotes (NOT confidential)",
  }),
  DEV_ATTESTATION_KEY_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      description: "The development attestation key (PEM); the example's public key by default",
    }),
  ),
  DCAP_COLLATERAL_URL: Type.Optional(
    Type.String({
      pattern: "^https?://[^\\s]+$",
      description:
        "dcap: a PCCS (or Intel's PCS, https://api.trustedservices.intel.com) speaking the PCS v4 API; without it nothing verifies",
    }),
  ),
  DCAP_COLLATERAL_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 10_000,
    description: "dcap: the deadline of each PCCS request",
  }),
  DCAP_COLLATERAL_REFRESH_SECONDS: Type.Integer({
    minimum: 60,
    maximum: 7 * 24 * 3600,
    default: 3600,
    description:
      "dcap: cached collateral older than this is fetched again (kept while valid if the PCCS is down)",
  }),
  ACCEPTED_TCB_STATUSES: Type.Optional(
    Type.String({
      pattern: "^\\s*[A-Za-z]+(\\s*,\\s*[A-Za-z]+)*\\s*$",
      description:
        "dcap: Intel TCB statuses accepted, comma-separated (default UpToDate,SWHardeningNeeded; Revoked never)",
    }),
  ),
  MEASUREMENT_ALLOWLIST: Type.Optional(
    Type.String({
      pattern: "^\\s*[0-9a-fA-F]{96}(\\s*,\\s*[0-9a-fA-F]{96})*\\s*$",
      description: "Accepted VM measurements (MRTD, 48 bytes hex), comma-separated",
    }),
  ),
  SUBMISSION_WINDOW_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 7 * 24 * 3600,
    default: 3 * 3600,
    description: "One accepted submission per hotkey per window (0: no limit)",
  }),
  REPLAY_AUDIT_RATE: Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.02,
    description: "Share of accepted, fully attested runs the replay-audit sampler selects",
  }),
  REPLAY_AUDIT_SEED: Type.Optional(
    Type.String({
      minLength: 8,
      maxLength: 128,
      description:
        "The sampler's seed (default: derived from SECRET_KEY_FILE, so miners cannot predict it)",
    }),
  ),
  TRUSTED_PROXIES: Type.String({
    default: DEFAULT_TRUSTED_PROXIES,
    maxLength: 4096,
    description:
      "Peers whose X-Forwarded-For names the client (the master's proxy): addresses, CIDR ranges, loopback, private, or none",
  }),
  TASK_FAMILIES_DIR: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "A directory of the operator's own task families (<id>.mjs), mounted at deploy time; scored beside the reference families",
    }),
  ),
  WEIGHTS_MODE: Literals(WEIGHTS_MODES, {
    default: "winner_take_all",
    description:
      "winner_take_all: the best complete result takes the weight; best_per_hotkey: each hotkey's best score, normalised",
  }),
});
export type Settings = ConfigOf<typeof Settings>;

/** What the service runs with. */
export type AgentEvalOptions = ReturnType<typeof resolveSettings>;

/** The options of `config`, or a ConfigError naming every problem. */
export function resolveSettings(
  config: Static<typeof Settings>,
  settings: { tokenConfigured: boolean },
) {
  const issues: { variable: string; message: string }[] = [];
  if (
    settings.tokenConfigured &&
    config.SECRET_KEY_FILE === undefined &&
    !config.SECRET_KEY_GENERATE
  ) {
    issues.push({
      variable: "SECRET_KEY_FILE",
      message:
        "required when CHALLENGE_TOKEN is set: every token and sealed value is derived from it (a 32-byte key file; SECRET_KEY_GENERATE=true generates one in DATA_DIR, for development only)",
    });
  }
  if (config.DEV_ATTESTATION_KEY_FILE !== undefined && config.ATTESTATION_VERIFIER !== "dev") {
    issues.push({
      variable: "DEV_ATTESTATION_KEY_FILE",
      message: "only read with ATTESTATION_VERIFIER=dev",
    });
  }
  try {
    trustedProxies(config.TRUSTED_PROXIES);
  } catch (error) {
    issues.push({ variable: "TRUSTED_PROXIES", message: (error as Error).message });
  }
  let acceptedTcbStatuses: readonly string[] = [];
  try {
    acceptedTcbStatuses = parseAcceptedTcbStatuses(config.ACCEPTED_TCB_STATUSES);
  } catch (error) {
    issues.push({ variable: "ACCEPTED_TCB_STATUSES", message: (error as Error).message });
  }
  if (config.DCAP_COLLATERAL_URL !== undefined && config.ATTESTATION_VERIFIER !== "dcap") {
    issues.push({
      variable: "DCAP_COLLATERAL_URL",
      message: "only read with ATTESTATION_VERIFIER=dcap",
    });
  }
  if (issues.length > 0) throw new ConfigError(issues, "agent-eval challenge configuration");
  const measurements = (config.MEASUREMENT_ALLOWLIST ?? "")
    .split(",")
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value.length > 0);
  return {
    secretKeyFile: config.SECRET_KEY_FILE ?? null,
    // No key file: the key is generated in (and reused from) DATA_DIR. Development only.
    generateSecretKey: config.SECRET_KEY_FILE === undefined,
    ownerHotkey: config.OWNER_HOTKEY ?? null,
    attestation: {
      verifier: config.ATTESTATION_VERIFIER,
      devKeyFile: config.DEV_ATTESTATION_KEY_FILE ?? null,
      // Lower-case hex MRTDs; empty: the verifier's default (dev: the reference worker's).
      measurements: [...new Set(measurements)],
      // dcap: where Intel's collateral comes from (null: nothing can verify) and the policy.
      collateralUrl: config.DCAP_COLLATERAL_URL ?? null,
      collateralTimeoutMs: config.DCAP_COLLATERAL_TIMEOUT_MS,
      collateralRefreshSeconds: config.DCAP_COLLATERAL_REFRESH_SECONDS,
      acceptedTcbStatuses,
    },
    submissionWindowSeconds: config.SUBMISSION_WINDOW_SECONDS,
    weightsMode: config.WEIGHTS_MODE,
    taskFamiliesDir: config.TASK_FAMILIES_DIR ?? null,
    replayAudit: { rate: config.REPLAY_AUDIT_RATE, seed: config.REPLAY_AUDIT_SEED ?? null },
    // As set: who may name the client of a live feed (the SDK's trustedProxies).
    trustedProxies: config.TRUSTED_PROXIES,
  };
}
