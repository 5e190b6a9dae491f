// Helpers of the eval tests: a submission taken through the real routes to a prepared run
// (review allowed with a development quote, env confirmed empty, launched, eval/prepare), and
// results built the way the reference eval worker builds them, posted as canonical bytes.
import { expect } from "vitest";
import {
  DEV_MEASUREMENT,
  type EventLogEntry,
  loadDevAttestationKey,
  measuredEvent,
  replayEventLog,
  signDevQuote,
} from "../../src/attestation/index.js";
import { canonicalJson, type JsonValue } from "../../src/crypto/index.js";
import type { EvalPlan } from "../../src/eval/eval-plan.js";
import { buildEvalResult, type EvalResult } from "../../src/eval/eval-result.js";
import { signTelemetryGrant, type TelemetryGrant } from "../../src/eval/telemetry-grant.js";
import type { AgentEvalTest } from "../agent-eval-kit.js";
import {
  envelopeFor,
  postReport,
  type ReadyAssignment,
  readyForReport,
} from "../review/report-kit.js";

export interface PreparedRun extends ReadyAssignment {
  runId: string;
  runToken: string;
  plan: EvalPlan;
  planDigest: string;
}

/**
 * A fresh miner's submission (of `zip`, else a small test agent) with an issued eval run, its env
 * confirmed empty, or `env`.
 */
export async function preparedRun(
  t: AgentEvalTest,
  options: { env?: Record<string, string>; zip?: Buffer } = {},
): Promise<PreparedRun> {
  const ready = await readyForReport(t, { zip: options.zip });
  expect((await postReport(t, ready, await envelopeFor(ready))).status).toBe(202);
  const base = `/submissions/${ready.submissionId}`;
  const env = options.env
    ? await t.signedFetch(`${base}/env`, {
        method: "PUT",
        miner: ready.miner,
        json: { env: options.env },
      })
    : await t.signedFetch(`${base}/env/confirm-empty`, { method: "POST", miner: ready.miner });
  expect(env.status).toBe(200);
  expect(
    (await t.signedFetch(`${base}/launch`, { method: "POST", miner: ready.miner })).status,
  ).toBe(200);
  const prepared = await t.signedFetch(`${base}/eval/prepare`, {
    method: "POST",
    miner: ready.miner,
  });
  expect(prepared.status).toBe(200);
  const body = (await prepared.json()) as {
    run_id: string;
    plan: EvalPlan;
    plan_digest: string;
    secret_delivery: { token: string };
  };
  return {
    ...ready,
    runId: body.run_id,
    runToken: body.secret_delivery.token,
    plan: body.plan,
    planDigest: body.plan_digest,
  };
}

/**
 * The next run of `run`'s submission, from the answer of the eval/prepare (after a revalidate)
 * or eval/retry that issued it with its token: same miner and submission, new run.
 */
export async function issuedRun(run: PreparedRun, answer: Response): Promise<PreparedRun> {
  const text = await answer.text();
  expect(answer.status, text).toBe(200);
  const body = JSON.parse(text) as {
    run_id: string;
    plan: EvalPlan;
    plan_digest: string;
    secret_delivery?: { token: string };
  };
  expect(body.secret_delivery, "the answer that issued the run delivers its token").toBeDefined();
  return {
    ...run,
    runId: body.run_id,
    runToken: body.secret_delivery!.token,
    plan: body.plan,
    planDigest: body.plan_digest,
  };
}

const devKey = loadDevAttestationKey();

export interface ResultOptions {
  /** Trial scores by task id (default: every plan task, every trial 1). */
  trials?: Record<string, number[]>;
  completedAt?: string;
  eventLog?: EventLogEntry[];
  quoteReportData?: Buffer;
  quoteRtmrs?: [string, string, string, string];
  /** The MRTD inside the quote (default: the development measurement). */
  quoteMeasurement?: string;
  /** The measurement the result claims (default: the quote's). */
  claimedMeasurement?: string;
  /**
   * The plan nonce the result binds in report_data_hex and its quote (default: the run's). A
   * result built for another nonce is one whose quote agrees with it, but not with this run.
   */
  bindNonce?: string;
}

/** The result of `run`, honest unless told otherwise. */
export function resultFor(run: PreparedRun, options: ResultOptions = {}): Promise<EvalResult> {
  const trials =
    options.trials ??
    Object.fromEntries(
      run.plan.task_set.task_ids.map((id) => [id, Array(run.plan.trials).fill(1)]),
    );
  const eventLog = options.eventLog ?? [measuredEvent(3, "evaluator", "test-evaluator 1")];
  return buildEvalResult({
    plan: options.bindNonce === undefined ? run.plan : { ...run.plan, nonce: options.bindNonce },
    planDigest: run.planDigest,
    trials: Object.entries(trials).map(([task_id, trial_scores]) => ({ task_id, trial_scores })),
    evaluator: { name: "test-evaluator", version: "1" },
    completedAt: options.completedAt ?? new Date().toISOString(),
    eventLog,
    measurement: options.claimedMeasurement ?? options.quoteMeasurement ?? DEV_MEASUREMENT,
    vmConfig: { vcpus: 2, memory_mib: 2048, image_digest: `sha256:${"e".repeat(64)}` },
    quote: (reportData) =>
      signDevQuote({
        privateKeyPem: devKey.privateKeyPem,
        reportData: options.quoteReportData ?? reportData,
        mrtd: options.quoteMeasurement ?? DEV_MEASUREMENT,
        rtmrs: options.quoteRtmrs ?? replayEventLog(eventLog),
      }),
  });
}

/** POST the result as canonical bytes (or exactly `raw`) with the run token. */
export function postResult(
  t: AgentEvalTest,
  run: PreparedRun,
  result: EvalResult | null,
  options: { raw?: string; token?: string | null } = {},
) {
  const token = options.token === undefined ? run.runToken : options.token;
  return t.fetch(`/evaluation/v1/runs/${run.runId}/result`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: options.raw ?? canonicalJson(result as unknown as JsonValue),
  });
}

/** A telemetry grant for `run` signed by its miner (fresh nonce, now, unless told otherwise). */
export function grantFor(
  run: PreparedRun,
  options: { nonce?: string; timestamp?: number } = {},
): TelemetryGrant {
  return signTelemetryGrant(run.miner, { runId: run.runId, planSha256: run.planDigest }, options);
}

/** POST telemetry-session with the run token (or `token`) and `grant`. */
export function postTelemetrySession(
  t: AgentEvalTest,
  run: PreparedRun,
  grant: unknown,
  options: { token?: string } = {},
) {
  return t.fetch(`/evaluation/v1/runs/${run.runId}/telemetry-session`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${options.token ?? run.runToken}`,
    },
    body: JSON.stringify(grant),
  });
}

/** A telemetry session of `run` opened with its miner's grant (the run is then running). */
export async function openTelemetry(t: AgentEvalTest, run: PreparedRun): Promise<string> {
  const response = await postTelemetrySession(t, run, grantFor(run));
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return (JSON.parse(text) as { session_id: string }).session_id;
}

/** POST one progress event of `run` under `session` (headers overridable for attacks). */
export function postProgress(
  t: AgentEvalTest,
  run: PreparedRun,
  session: string | null,
  event: unknown,
  options: { token?: string } = {},
) {
  return t.fetch(`/evaluation/v1/runs/${run.runId}/progress`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${options.token ?? run.runToken}`,
      ...(session === null ? {} : { "x-telemetry-session": session }),
    },
    body: JSON.stringify(event),
  });
}
