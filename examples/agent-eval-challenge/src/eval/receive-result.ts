/**
 * POST /evaluation/v1/runs/{id}/result (rules 13, 14): the only path to a score. The body is the
 * eval result v1 as byte-exact canonical JSON (400 not_canonical_json otherwise), scoped to the
 * run token, and "from the canonical Eval confidential VM" is checked, not assumed: its quote
 * must bind the result's digest, the run and the plan's nonce, under the same verifier as
 * reviews. Two transactions around the verifier, as for review reports: the first stores the
 * exact bytes (the run `verifying`) or rejects at once on a local check; the quote is verified
 * outside; the second accepts with the score or rejects. A verifier outage decides nothing (503;
 * the run waits in verifying, never expiring, without credit). First receipt 202, identical
 * replay 200, a different body 409 result_conflict.
 */
import {
  HttpError,
  type Logger,
  type Sql,
  type Static,
  type TransactionSql,
} from "@platform/challenge-sdk";
import {
  decidedVerification,
  type QuoteVerifier,
  rejected,
  verifierUnavailable,
  verifyAttestation,
} from "../attestation/index.js";
import { CanonicalJsonError, parseCanonical, sha256Hex } from "../crypto/index.js";
import { reviewTransaction } from "../review/index.js";
import { type EvalRunState, transitionEvalRun } from "../state/index.js";
import { checkResultLocally, type EvalResult } from "./eval-result.js";
import type { EvalReceiptResponse } from "./eval-result-schemas.js";
import { lockRun } from "./run-bearer.js";

/** The result route's body limit. */
export const MAX_EVAL_RESULT_BYTES = 256 * 1024;

export const RESULT_ERROR_CODES = {
  /** 400: the body is not byte-exact canonical JSON (RFC 8785). */
  notCanonicalJson: "not_canonical_json",
  /** 409: the run already received another result (it is write-once). */
  resultConflict: "result_conflict",
  /** 503: the quote verifier could not be reached; nothing decided (post the same bytes again). */
  verifierUnavailable: "verifier_unavailable",
} as const;

/** The receipt the route answers (EvalReceiptResponse). */
export type ResultReceipt = Static<typeof EvalReceiptResponse>;
/** The decided outcome of a result, stored with it. */
export type ResultVerification = ResultReceipt["verification"];

interface ResultRow {
  result_sha256: string;
  body: string;
  received_at: Date;
  verification: ResultVerification | null;
}

interface Pending {
  runId: string;
  firstReceipt: boolean;
  result: EvalResult;
  expectedReportData: Buffer;
  complete: boolean;
}

/** The exact bytes, parsed only if they are canonical JSON (the schema was checked before). */
export function canonicalResultBody(bytes: Uint8Array): void {
  try {
    parseCanonical(bytes);
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    throw new HttpError(400, RESULT_ERROR_CODES.notCanonicalJson, error.message);
  }
}

export async function receiveResult(
  sql: Sql,
  input: {
    runId: string;
    result: EvalResult;
    bytes: Uint8Array;
    verifier: QuoteVerifier;
    log: Logger;
  },
): Promise<{ status: 200 | 202; receipt: ResultReceipt }> {
  const resultSha256 = sha256Hex(input.bytes);
  type Answer = { status: 200 | 202; receipt: ResultReceipt };
  const first = await reviewTransaction(sql, undefined, async (tx): Promise<Answer | Pending> => {
    const run = await lockRun(tx, input.runId);
    const [stored] = await tx<ResultRow[]>`
      select result_sha256, body, received_at, verification from eval_results
      where run_id = ${run.id}`;
    if (stored && stored.result_sha256 !== resultSha256) {
      throw new HttpError(
        409,
        RESULT_ERROR_CODES.resultConflict,
        `Eval run ${run.id} already received another result.`,
        { extra: { result_sha256: stored.result_sha256 } },
      );
    }
    if (stored?.verification) return { status: 200 as const, receipt: await receiptOf(tx, run.id) };
    const checked = checkResultLocally(
      input.result,
      { id: run.id, plan: run.plan, planDigest: run.plan_sha256 },
      stored ? new Date(stored.received_at) : new Date(),
    );
    if (stored) {
      // Received, never decided (the verifier was unavailable): verify the stored result again.
      if (!checked.ok) throw new Error(`stored result of ${run.id} no longer passes its checks`);
    } else {
      // The state module refuses a result on a run that already has one (409 invalid_transition).
      await transitionEvalRun(tx, {
        runId: run.id,
        event: "receive_result",
        actor: "eval_vm",
        records: { resultSha256 },
      });
      await tx`
        insert into eval_results (run_id, submission_id, body, result_sha256, result_core)
        values (${run.id}, ${run.submission_id}, ${Buffer.from(input.bytes).toString("utf8")},
          ${resultSha256}, ${tx.json(input.result.result_core as never)})`;
      if (!checked.ok) {
        await decide(
          tx,
          run.id,
          {
            ...decidedVerification(input.verifier, rejected(checked.code, checked.message)),
            fully_attested: false,
          },
          null,
          false,
        );
        return { status: 202 as const, receipt: await receiptOf(tx, run.id) };
      }
    }
    return {
      runId: run.id,
      firstReceipt: !stored,
      result: input.result,
      expectedReportData: checked.expectedReportData,
      complete: checked.complete,
    };
  });
  if ("receipt" in first) return first;

  const verdict = await verifyAttestation(
    input.verifier,
    first.result.attestation,
    first.expectedReportData,
  );
  if (verdict.status === "unavailable") {
    input.log.warn("eval result parked: the quote verifier is unavailable", {
      run_id: first.runId,
    });
    throw verifierUnavailable("the result is kept. Post the same bytes again later.");
  }
  const receipt = await reviewTransaction(sql, undefined, async (tx) => {
    const [row] = await tx<{ verification: ResultVerification | null }[]>`
      select verification from eval_results where run_id = ${first.runId} for update`;
    if (row?.verification) return receiptOf(tx, first.runId); // a concurrent post decided
    const reviewVerified = await reviewWasVerified(tx, first.runId);
    const verification: ResultVerification = {
      ...decidedVerification(input.verifier, verdict),
      fully_attested: verdict.status === "verified" && reviewVerified,
    };
    await decide(
      tx,
      first.runId,
      verification,
      verdict.status === "verified" ? first.result.result_core.score : null,
      verdict.status === "verified" && first.complete,
    );
    return receiptOf(tx, first.runId);
  });
  return { status: first.firstReceipt ? 202 : 200, receipt };
}

/** Accept with the score, or reject; the verification and coverage stored with the result. */
async function decide(
  tx: TransactionSql,
  runId: string,
  verification: ResultVerification,
  score: number | null,
  complete: boolean,
): Promise<void> {
  if (verification.status === "verified" && score !== null) {
    await transitionEvalRun(tx, {
      runId,
      event: "accept",
      actor: "system",
      records: { score },
    });
  } else {
    await transitionEvalRun(tx, {
      runId,
      event: "reject",
      actor: "system",
      reasonCode: verification.code,
    });
  }
  await tx`
    update eval_results
    set verification = ${tx.json(verification as never)}, verified_at = now(), complete = ${complete}
    where run_id = ${runId}`;
}

async function reviewWasVerified(tx: TransactionSql, runId: string): Promise<boolean> {
  const [row] = await tx<{ status: string | null }[]>`
    select a.verification ->> 'status' as status
    from eval_runs r join review_assignments a on a.id = r.review_assignment_id
    where r.id = ${runId}`;
  return row?.status === "verified";
}

async function receiptOf(tx: TransactionSql, runId: string): Promise<ResultReceipt> {
  const [row] = await tx<
    {
      state: EvalRunState;
      score: number | null;
      result_sha256: string;
      received_at: Date;
      verification: ResultVerification;
    }[]
  >`
    select r.state, r.score, e.result_sha256, e.received_at, e.verification
    from eval_runs r join eval_results e on e.run_id = r.id
    where r.id = ${runId}`;
  if (!row) throw new Error(`eval run ${runId} has no result inside its transaction`);
  return {
    run_id: runId,
    state: row.state,
    result_sha256: row.result_sha256,
    received_at: row.received_at.toISOString(),
    score: row.score,
    verification: row.verification,
  };
}
