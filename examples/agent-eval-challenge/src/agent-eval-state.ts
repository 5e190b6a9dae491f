/**
 * What `setup` builds for one instance: the settings resolved, the master key loaded (every
 * token, cursor and sealed value derives from it) and the quote verifier chosen. Nothing here
 * lives in module scope, so two instances in one process share nothing.
 */
import type { SetupContext } from "@platform/challenge-sdk";
import {
  cachedPccsSource,
  dcapVerifier,
  devVerifier,
  fetchCollateral,
  intelCollateralVerifier,
  loadDevAttestationKey,
  type QuoteVerifier,
  type TcbStatus,
} from "./attestation/index.js";
import { loadSecretKey } from "./crypto/index.js";
import { type FamilySet, loadFamilySet, readOperatorFamilies } from "./eval/families/index.js";
import { loadRulesBundle, type RulesBundle } from "./review/index.js";
import { type AgentEvalOptions, resolveSettings, type Settings } from "./settings.js";

/** `ctx.state` of every handler. */
export interface AgentEvalState {
  options: AgentEvalOptions;
  /** The 32-byte master key; use `deriveKey(secretKey, KeyLabel.x)`, never the key itself. */
  secretKey: Buffer;
  verifier: QuoteVerifier;
  /** The review rules bundle v1, loaded once at start (the example's `rules/` folder). */
  rulesBundle: RulesBundle;
  /** The task families runs are scored on: the reference ones and TASK_FAMILIES_DIR's. */
  families: FamilySet;
}

// Beside `src/` and `dist/` alike (both one level below the package), like the migrations.
const RULES_DIRECTORY = new URL("../rules/", import.meta.url);

/** Build the state of one instance. */
export async function createAgentEvalState(ctx: SetupContext<Settings>): Promise<AgentEvalState> {
  const { log, settings } = ctx;
  const production = settings.challengeToken !== null;
  const options = resolveSettings(ctx.config, { tokenConfigured: production });
  const secretKey = await loadSecretKey({
    path: options.secretKeyFile ?? undefined,
    dataDir: settings.dataDir ?? ".platform",
    // resolveSettings refused a production start without a key file unless asked to generate.
    production: production && !options.generateSecretKey,
  });
  if (options.secretKeyFile === null) {
    log.warn("no SECRET_KEY_FILE: using a development key generated in the data directory");
  }

  let verifier: QuoteVerifier;
  if (options.attestation.verifier === "dev") {
    const key = loadDevAttestationKey(options.attestation.devKeyFile ?? undefined);
    verifier = devVerifier({
      publicKey: key.publicKey,
      measurements: options.attestation.measurements,
    });
    log.warn(
      "ATTESTATION_VERIFIER=dev: review and eval quotes are DEVELOPMENT quotes, NOT confidential" +
        (options.attestation.devKeyFile === null
          ? " (the example's public development key: anyone can forge one)"
          : ""),
    );
  } else {
    verifier = dcapVerifier({
      measurements: options.attestation.measurements,
      collateral: dcapCollateral(ctx, options.attestation),
    });
    if (options.attestation.measurements.length === 0) {
      log.error("MEASUREMENT_ALLOWLIST is empty: no review VM measurement will be accepted");
    }
  }
  const rulesBundle = await loadRulesBundle(RULES_DIRECTORY);
  const families = await loadFamilySet(
    options.taskFamiliesDir === null ? [] : await readOperatorFamilies(options.taskFamiliesDir),
  );
  log.info("agent-eval challenge ready", {
    attestation: verifier.kind,
    confidential: verifier.confidential,
    owner: options.ownerHotkey,
    submission_window_seconds: options.submissionWindowSeconds,
    rules_revision_id: rulesBundle.revision_id,
    task_set_revision_id: families.revision_id,
    task_families: families.families.map((family) => family.id),
  });
  return { options, secretKey, verifier, rulesBundle, families };
}

/** Platforms whose collateral the database keeps (real fleets span a handful of FMSPCs). */
const MAX_CACHED_PLATFORMS = 256;

/**
 * Intel's chain of trust from a PCCS through the database cache; without DCAP_COLLATERAL_URL,
 * the default that answers "unavailable" (nothing verifies, loudly logged).
 */
function dcapCollateral(ctx: SetupContext<Settings>, attestation: AgentEvalOptions["attestation"]) {
  const { collateralUrl: baseUrl } = attestation;
  if (baseUrl === null) {
    ctx.log.error("DCAP_COLLATERAL_URL is not set: no TDX quote can be verified (all park as 503)");
    return undefined;
  }
  return intelCollateralVerifier({
    acceptedStatuses: attestation.acceptedTcbStatuses as readonly TcbStatus[],
    source: cachedPccsSource({
      sql: ctx.sql,
      fetch: (request) =>
        fetchCollateral({ baseUrl, timeoutMs: attestation.collateralTimeoutMs }, request),
      refreshSeconds: attestation.collateralRefreshSeconds,
      maxRows: MAX_CACHED_PLATFORMS,
      onFetchError: (request, error) =>
        ctx.log.warn("DCAP collateral refresh failed", {
          fmspc: request.fmspc,
          ca: request.ca,
          reason: error instanceof Error ? error.message : "unknown",
        }),
    }),
  });
}
