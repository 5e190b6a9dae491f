/**
 * Replay audits (rule 16). The population is the accepted, fully attested runs (the result and
 * the review that authorised it both verified). The sampler is deterministic: every run is
 * ranked by sha256("<seed>:<run id>") and the first round(rate x N) are selected, so any
 * validator with the seed gets the same list and a miner without it cannot predict it (the
 * default seed is derived from SECRET_KEY_FILE). A replay result is compared with the attested
 * score under the plan's own policy (the mean over every task of the plan), and stored once per
 * (run, audit id) with its delta and whether it exceeds the tolerance; it never changes a score,
 * a run or the weights.
 */
import { HttpError, type Sql } from "@platform/challenge-sdk";
import { canonicalDigest, deriveKey, KeyLabel, sha256Hex } from "../crypto/index.js";
import type { EvalPlan } from "./eval-plan.js";
import { type EvalResultCoreRecord, jobScore } from "./eval-result.js";
import { instanceSeed } from "./instance-seed.js";

/** A replay whose score differs from the attested one by more than this is flagged. */
export const REPLAY_TOLERANCE = 0.2;

export const REPLAY_AUDIT_ERROR_CODES = {
  /** 404: the run is not an accepted, fully attested run (or does not exist). */
  auditNotAvailable: "audit_not_available",
  /** 409: this audit id already recorded another replay of the run. */
  auditConflict: "audit_conflict",
  /** 422-like refusal of a replay that does not match the plan (unknown task, wrong k). */
  replayInvalid: "replay_invalid",
} as const;

interface PopulationRow {
  run_id: string;
  submission_id: string;
  plan: EvalPlan;
  plan_sha256: string;
  accepted_at: Date;
  result_core: EvalResultCoreRecord;
}

/** The sampler's rank of a run: sha256 hex of "<seed>:<run id>". */
export function samplerRank(seed: string, runId: string): string {
  return sha256Hex(`${seed}:${runId}`);
}

/** The runs `rate` selects from `runIds` under `seed` (deterministic, order-independent). */
export function sampleRuns(seed: string, rate: number, runIds: readonly string[]): string[] {
  const count = Math.round(rate * runIds.length);
  return [...runIds]
    .map((id) => ({ id, rank: samplerRank(seed, id) }))
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .slice(0, count)
    .map((entry) => entry.id);
}

/** The seed in use: REPLAY_AUDIT_SEED, else one derived from the master key. */
export function samplerSeed(configured: string | null, secretKey: Buffer): string {
  return configured ?? deriveKey(secretKey, KeyLabel.replayAuditSeed).toString("hex");
}

/** 404 audit_not_available: not an accepted, fully attested run (or none at all). */
function notAvailable(runId: string): HttpError {
  return new HttpError(
    404,
    REPLAY_AUDIT_ERROR_CODES.auditNotAvailable,
    `Eval run ${runId} is not an accepted, fully attested run.`,
  );
}

async function population(sql: Sql, runId?: string): Promise<PopulationRow[]> {
  return sql<PopulationRow[]>`
    select r.id as run_id, r.submission_id, r.plan, r.plan_sha256, r.accepted_at, e.result_core
    from eval_runs r join eval_results e on e.run_id = r.id
    where r.state = 'accepted'
      and e.verification ->> 'status' = 'verified'
      and (e.verification ->> 'fully_attested')::boolean
      and (${runId ?? null}::text is null or r.id = ${runId ?? null}::text)
    order by r.id`;
}

/**
 * One run as a validator replays it. The instance seed is here, and only here outside the
 * sealed release: the run is accepted, so its instances protect nothing any more, and without
 * them a replay could not draw the same inputs.
 */
function requestOf(row: PopulationRow, selected: boolean, secretKey: Buffer) {
  return {
    run_id: row.run_id,
    submission_id: Number(row.submission_id),
    selected,
    plan: row.plan,
    plan_digest: row.plan_sha256,
    agent_sha256: row.plan.agent_sha256,
    attested_score: row.result_core.score,
    attested_tasks: row.result_core.tasks,
    instance_seed: instanceSeed(secretKey, { runId: row.run_id, nonce: row.plan.nonce }).toString(
      "hex",
    ),
    accepted_at: row.accepted_at.toISOString(),
  };
}

/** GET /internal/v1/replay-audits/requests: the selected runs only. */
export async function listReplayAuditRequests(
  sql: Sql,
  sampler: { seed: string; rate: number },
  secretKey: Buffer,
) {
  const rows = await population(sql);
  const selected = new Set(
    sampleRuns(
      sampler.seed,
      sampler.rate,
      rows.map((row) => row.run_id),
    ),
  );
  return {
    rate: sampler.rate,
    population: rows.length,
    requests: rows
      .filter((row) => selected.has(row.run_id))
      .map((row) => requestOf(row, true, secretKey)),
  };
}

/** GET /internal/v1/replay-audits/{run}/request: one accepted, fully attested run. */
export async function replayAuditRequest(
  sql: Sql,
  runId: string,
  sampler: { seed: string; rate: number },
  secretKey: Buffer,
) {
  const rows = await population(sql);
  const row = rows.find((candidate) => candidate.run_id === runId);
  if (!row) throw notAvailable(runId);
  const selected = sampleRuns(
    sampler.seed,
    sampler.rate,
    rows.map((candidate) => candidate.run_id),
  ).includes(runId);
  return requestOf(row, selected, secretKey);
}

export interface ReplayTask {
  task_id: string;
  trial_scores: number[];
}

/** POST /internal/v1/replay-audits/{run}/result: compare, store once, change nothing else. */
export async function recordReplayResult(
  sql: Sql,
  input: { runId: string; auditId: string; tasks: ReplayTask[] },
) {
  const [row] = await population(sql, input.runId);
  if (!row) throw notAvailable(input.runId);
  const planned = new Set(row.plan.task_set.task_ids);
  const seen = new Set<string>();
  for (const task of input.tasks) {
    if (!planned.has(task.task_id) || seen.has(task.task_id)) {
      throw new HttpError(
        400,
        REPLAY_AUDIT_ERROR_CODES.replayInvalid,
        `Task ${task.task_id} is not in the run's plan, or repeated.`,
      );
    }
    seen.add(task.task_id);
    if (task.trial_scores.length !== row.plan.trials) {
      throw new HttpError(
        400,
        REPLAY_AUDIT_ERROR_CODES.replayInvalid,
        `Task ${task.task_id} has ${task.trial_scores.length} trials; the plan has ${row.plan.trials}.`,
      );
    }
  }
  const replayTasks = input.tasks.map((task) => ({ ...task, score: 0 }));
  const replayScore = jobScore(row.plan, replayTasks);
  const attested = row.result_core.score;
  const delta = Math.abs(attested - replayScore);
  const replaySha256 = canonicalDigest(input.tasks);
  const record = {
    run_id: input.runId,
    audit_id: input.auditId,
    attested_score: attested,
    replay_score: replayScore,
    delta,
    tolerance: REPLAY_TOLERANCE,
    exceeds_tolerance: delta > REPLAY_TOLERANCE,
  };
  return sql.begin(async (tx) => {
    const inserted = await tx<{ recorded_at: Date }[]>`
      insert into replay_audit_results (
        run_id, audit_id, replay, replay_sha256, attested_score, replay_score, delta, tolerance,
        exceeds_tolerance)
      values (
        ${input.runId}, ${input.auditId}, ${tx.json(input.tasks as never)}, ${replaySha256},
        ${attested}, ${replayScore}, ${delta}, ${REPLAY_TOLERANCE}, ${record.exceeds_tolerance})
      on conflict (run_id, audit_id) do nothing
      returning recorded_at`;
    if (inserted[0]) return { ...record, recorded_at: inserted[0].recorded_at.toISOString() };
    const [stored] = await tx<(typeof record & { replay_sha256: string; recorded_at: Date })[]>`
      select run_id, audit_id, attested_score, replay_score, delta, tolerance, exceeds_tolerance,
        replay_sha256, recorded_at
      from replay_audit_results where run_id = ${input.runId} and audit_id = ${input.auditId}`;
    if (!stored || stored.replay_sha256 !== replaySha256) {
      throw new HttpError(
        409,
        REPLAY_AUDIT_ERROR_CODES.auditConflict,
        `Audit ${input.auditId} already recorded another replay of run ${input.runId}.`,
      );
    }
    const { replay_sha256: _sha, recorded_at, ...same } = stored;
    return { ...same, recorded_at: recorded_at.toISOString() };
  }) as Promise<typeof record & { recorded_at: string }>;
}
