/**
 * POST /evaluation/v1/runs/{id}/instance-seed: the release of the run's instance seed (and the
 * operator's family files) to the measured evaluator, and to no one else. The run token alone is
 * not enough: the miner holds it. The request carries an X25519 public key and a quote whose
 * report_data binds that key to this run's plan (digest and nonce); the quote is verified exactly
 * as a result's is (verifier, event log, measurement), and the answer is sealed to the key, so
 * only the TD that made the quote can read the seed. With the development verifier anyone can
 * make such a quote: development is not confidential, as for scores.
 *
 * Released only before the run's result, and only ever for a plan that already fixes the agent's
 * sha256, so no agent can have been written knowing its instances.
 */
import { HttpError, type Logger, type Sql, type Static } from "@platform/challenge-sdk";
import {
  instanceSeedReportData,
  type QuoteVerifier,
  verifierUnavailable,
  verifyAttestation,
} from "../attestation/index.js";
import { canonicalJson, sealToKey } from "../crypto/index.js";
import { reviewTransaction } from "../review/index.js";
import { PRE_RESULT_EVAL_RUN_STATES } from "../state/index.js";
import type { FamilySet } from "./families/index.js";
import { instanceSeed } from "./instance-seed.js";
import type { InstanceSeedRequest, InstanceSeedResponse } from "./instance-seed-schemas.js";
import { lockRun } from "./run-bearer.js";
import { runNotRunning } from "./telemetry-session.js";

/** The label (HKDF info and associated data) of the sealed release. */
export const INSTANCE_SEED_SEAL_LABEL = "platform/agent-eval/instance-seed-release/v1";

export const INSTANCE_SEED_ERROR_CODES = {
  /** 403: report_data is not the binding of this run, plan and public key. */
  reportDataBindingMismatch: "report_data_binding_mismatch",
  /** 403: the quote, its event log or its measurement did not verify (the reason in `reason`). */
  attestationRejected: "attestation_rejected",
  /** 503: the quote verifier could not be reached; nothing released (ask again). */
  verifierUnavailable: "verifier_unavailable",
} as const;

/** What the sealed box holds: the seed (hex) and the operator's family files. */
export interface InstanceRelease {
  seed: string;
  operator_families: { file: string; source: string }[];
}

export async function releaseInstanceSeed(
  sql: Sql,
  input: {
    runId: string;
    request: Static<typeof InstanceSeedRequest>;
    secretKey: Buffer;
    verifier: QuoteVerifier;
    families: FamilySet;
    log: Logger;
  },
): Promise<Static<typeof InstanceSeedResponse>> {
  const run = await reviewTransaction(sql, undefined, async (tx) => {
    const locked = await lockRun(tx, input.runId);
    if (!(PRE_RESULT_EVAL_RUN_STATES as readonly string[]).includes(locked.state)) {
      throw runNotRunning(locked, "its instances are released only before its result.");
    }
    return locked;
  });
  const expected = instanceSeedReportData({
    planDigest: run.plan_sha256,
    runId: run.id,
    nonce: run.plan.nonce,
    publicKey: input.request.public_key,
  });
  if (input.request.report_data_hex !== expected.toString("hex")) {
    throw new HttpError(
      403,
      INSTANCE_SEED_ERROR_CODES.reportDataBindingMismatch,
      "report_data is not the binding of this run's plan and this public key.",
    );
  }
  const verdict = await verifyAttestation(input.verifier, input.request.attestation, expected);
  if (verdict.status === "unavailable") {
    input.log.warn("instance seed not released: the quote verifier is unavailable", {
      run_id: run.id,
    });
    throw verifierUnavailable("nothing was released. Ask again later.");
  }
  if (verdict.status === "rejected") {
    throw new HttpError(
      403,
      INSTANCE_SEED_ERROR_CODES.attestationRejected,
      `The attestation did not verify: ${verdict.message.slice(0, 256)}`,
      { extra: { reason: verdict.code } },
    );
  }
  // Plan and families cannot drift apart: the plan names the family set the service runs.
  if (run.plan.task_set.revision_id !== input.families.revision_id) {
    throw new Error(`eval run ${run.id} plans a family set this service no longer has`);
  }
  const release: InstanceRelease = {
    seed: instanceSeed(input.secretKey, { runId: run.id, nonce: run.plan.nonce }).toString("hex"),
    operator_families: input.families.operatorSources.map(({ file, source }) => ({
      file,
      source,
    })),
  };
  return {
    run_id: run.id,
    sealed: sealToKey(
      input.request.public_key,
      Buffer.from(canonicalJson(release as never), "utf8"),
      INSTANCE_SEED_SEAL_LABEL,
    ),
  };
}
