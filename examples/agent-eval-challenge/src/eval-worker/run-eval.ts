/**
 * One eval run, plan to result: the run's plan (its digest checked), the agent ZIP (re-hashed
 * against the plan), the miner's env, the run's instance seed and families released to this
 * worker's attested key (checked against the plan's commitments), a telemetry session opened
 * with the miner's signed grant, then every plan family's k trials, each on its own instance
 * drawn from the seed, each announced
 * (task.status running), given an attempt whose token carries the container's output lines, run
 * in its own sandboxed container and judged by the checker here, outside the container. Last the
 * result: the trial scores, the event log, a development quote over both, posted as canonical
 * JSON (sent again, identically, while the verifier is away).
 *
 * Telemetry is best effort (a refused progress event or attempt is printed, and the trials go
 * on); the plan, the artifact, the session and the result are not.
 */
import { dockerTaskRunner, TaskError, type TaskRunner } from "@platform/challenge-sdk/tasks";
import { workloadEvents } from "../attestation/index.js";
import { canonicalDigest, canonicalJson } from "../crypto/index.js";
import type { EvalPlan } from "../eval/eval-plan.js";
import { buildEvalResult } from "../eval/eval-result.js";
import type { ProgressEventRecord } from "../eval/progress.js";
import type { OpenedAttempt } from "../live/open-attempt.js";
import { devAttestation } from "../worker/dev-attestation.js";
import { WorkerFailure } from "../worker/worker-failure.js";
import { checkedArtifact, deliverDocument } from "../worker/worker-steps.js";
import { agentTaskFiles } from "./agent-files.js";
import { type AttemptEventLine, type EvalVmClient, evalVmClient } from "./eval-client.js";
import { EVALUATOR, type EvalWorkerSettings } from "./eval-worker-settings.js";
import { runInstanceTrial } from "./instance-trial.js";
import { releasedInstances } from "./run-instances.js";
import { passesToAgent, TRIAL_RUN_MARGIN_MS } from "./run-trial.js";

/** How long the result is sent again while the verifier is away (no answer, 429, 5xx). */
export const RESULT_RETRY_BUDGET_MS = 120_000;
/** Time kept before the run's expiry to build and post the result. */
const RESULT_RESERVE_MS = 60_000;

export type EvalFailureReason =
  | "run_unavailable"
  | "plan_invalid"
  | "task_set_mismatch"
  | "instances_unavailable"
  | "artifact_mismatch"
  | "env_unavailable"
  | "telemetry_refused"
  | "runner_unavailable"
  | "result_refused"
  | "worker_error";

export interface EvalRunOptions {
  /** Where each step's line goes (default: stdout). */
  log?: (line: string) => void;
  /** The task runner (default: the local Docker engine, images never pulled). */
  runner?: TaskRunner;
  /** How long the result is sent again while the verifier is away, in milliseconds. */
  resultRetryBudgetMs?: number;
}

export type EvalRunResult =
  | { receipted: true; score: number; state: string }
  | { receipted: false; reason: EvalFailureReason; message: string };

const EvalFailure = WorkerFailure<EvalFailureReason>;

const brief = (body: unknown) => JSON.stringify(body)?.slice(0, 300) ?? "";

/** Run the eval of `settings.runId`; never throws. */
export async function runEval(
  settings: EvalWorkerSettings,
  options: EvalRunOptions = {},
): Promise<EvalRunResult> {
  const say = (line: string) => (options.log ?? console.log)(`eval-worker: ${line}`);
  const client = evalVmClient(
    settings.challengeUrl,
    settings.runId,
    settings.token,
    settings.challengeInternalUrl,
  );
  const runner = options.runner ?? dockerTaskRunner({ pull: false });
  say(`run ${settings.runId} at ${settings.challengeUrl}`);
  try {
    return await evaluate(settings, client, runner, say, options);
  } catch (error) {
    const failure = WorkerFailure.of<EvalFailureReason>(error);
    say(`failed (${failure.reason}): ${failure.message}`);
    return { receipted: false, reason: failure.reason, message: failure.message };
  } finally {
    if (options.runner === undefined) await runner.close();
  }
}

async function evaluate(
  settings: EvalWorkerSettings,
  client: EvalVmClient,
  runner: TaskRunner,
  say: (line: string) => void,
  options: EvalRunOptions,
): Promise<EvalRunResult> {
  // --- the plan.
  const answer = await client.run();
  const body = answer.body as { plan?: EvalPlan; plan_sha256?: string; state?: string } | null;
  if (answer.status !== 200 || !body?.plan || typeof body.plan_sha256 !== "string") {
    throw new EvalFailure("run_unavailable", `the run answered HTTP ${answer.status}`);
  }
  const { plan, plan_sha256: planDigest } = body;
  if (canonicalDigest(plan) !== planDigest) {
    throw new EvalFailure("plan_invalid", "the plan's digest is not the digest of the plan");
  }
  if (plan.run_id !== settings.runId) {
    throw new EvalFailure("plan_invalid", "the plan is not the plan of this run");
  }
  if (!Number.isInteger(plan.trials) || plan.trials < 1) {
    throw new EvalFailure("plan_invalid", "the plan names a trial count this worker lacks");
  }
  say(
    `run state ${body.state}: ${plan.task_set.task_ids.length} task families x ${plan.trials} trials, task set ${plan.task_set.revision_id}`,
  );

  // --- the agent, re-hashed; an unreadable one still gets a result (every trial 0).
  const { bytes: zip, sha256: agentSha256 } = await checkedArtifact(client.artifact(), {
    sha256: plan.agent_sha256,
    by: "the plan's",
  });
  const agent = await agentTaskFiles(zip);
  say(
    agent.ok
      ? `agent ${agentSha256}: ${agent.count} files, ${agent.bytes} bytes`
      : `agent ${agentSha256} cannot run (${agent.code}): every trial scores 0`,
  );

  const envAnswer = await client.env();
  const minerEnv = envAnswer.body?.env;
  if (envAnswer.status !== 200 || typeof minerEnv !== "object" || minerEnv === null) {
    throw new EvalFailure("env_unavailable", `the env route answered HTTP ${envAnswer.status}`);
  }
  // Names only are printed: the values are the miner's secrets.
  const env = Object.fromEntries(
    Object.entries(minerEnv).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string" && passesToAgent(entry[0]),
    ),
  );
  const withheld = Object.keys(minerEnv).filter((name) => !(name in env));
  say(
    `miner env: ${Object.keys(env).length} values (${Object.keys(env).join(", ") || "none"})` +
      (withheld.length > 0 ? `; withheld (reserved or malformed): ${withheld.join(", ")}` : ""),
  );

  // What RTMR3 measures before any quote, in this order: a verifier replays it to the quote, so
  // the seed's release and the result both say which evaluator judged which agent on which
  // families (the plan's digest binds the run, the agent, the families, the seed's sha256 and
  // the trials), in which image the agents ran.
  const eventLog = workloadEvents([
    ["evaluator-version", `${EVALUATOR.name}@${EVALUATOR.version}`],
    ["eval-plan-digest", planDigest],
    ["task-set-revision", plan.task_set.revision_id],
    ["agent-sha256", agentSha256],
    ["agent-image", settings.agentImage],
  ]);
  const attestation = devAttestation(settings, eventLog);
  const { seed, families, familySet } = await releasedInstances(
    client,
    plan,
    planDigest,
    attestation,
  );
  say(
    `instances: seed released to this worker's key; ${families.length} families (${familySet.operatorSources.length} the operator's)`,
  );

  const opened = await client.telemetrySession(settings.grant);
  const session = opened.body?.session_id;
  if (opened.status !== 200 || typeof session !== "string") {
    throw new EvalFailure(
      "telemetry_refused",
      `the telemetry session answered HTTP ${opened.status} ${brief(opened.body)}`,
    );
  }
  say(`telemetry session open until ${opened.body?.expires_at}`);

  // --- the trials.
  const telemetry = telemetryOf(client, session, say);
  const trials: { task_id: string; trial_scores: number[] }[] = [];
  // A trial that could end after this would leave no time to post the result before the run
  // expires: it is not started (it scores 0), and the result still goes out.
  const lastTrialEnd = Date.parse(plan.expires_at) - RESULT_RESERVE_MS;
  const trialWorstMs = settings.trialTimeoutSeconds * 1000 + TRIAL_RUN_MARGIN_MS;
  for (const family of families) {
    const task = { id: family.id };
    const scores: number[] = [];
    for (let trial = 1; trial <= plan.trials; trial += 1) {
      await telemetry.progress(task.id, { type: "task.status", status: "running", trial });
      const attempt = await telemetry.attempt(task.id, trial);
      let lines: AttemptEventLine[];
      let score: 0 | 1 = 0;
      let run: Awaited<ReturnType<typeof runInstanceTrial>>["run"];
      const inTime = Date.now() + trialWorstMs <= lastTrialEnd;
      if (agent.ok && inTime) {
        let inputSha256: string;
        try {
          ({ run, score, inputSha256 } = await runInstanceTrial({
            runner,
            image: settings.agentImage,
            jobId: `eval-${settings.runId}-${task.id}-${trial}`.slice(0, 128),
            family,
            seed,
            trial,
            agentFiles: agent.files,
            minerEnv: env,
            timeoutSeconds: settings.trialTimeoutSeconds,
          }));
        } catch (error) {
          // The runner could not run it at all: the worker's problem, not the agent's.
          if (error instanceof TaskError) {
            throw new EvalFailure("runner_unavailable", `${error.code}: ${error.message}`);
          }
          throw error;
        }
        const summary = `trial ${trial}: exit ${run.agentExitCode ?? "none"}, output ${run.outputStatus}, ${(run.durationMs / 1000).toFixed(1)} s`;
        lines = [...run.lines, { stream: "agent", message: summary }];
        say(`task ${task.id} ${summary}, input ${inputSha256.slice(0, 16)}, checker ${score}`);
      } else {
        const why = agent.ok
          ? "the run expires before it could end"
          : `the agent cannot run (${agent.code})`;
        lines = [{ stream: "agent", message: `trial ${trial}: not run: ${why}` }];
        say(`task ${task.id} trial ${trial}: not run (${why}), checker 0`);
      }
      await telemetry.events(attempt, lines);
      scores.push(score);
      await telemetry.progress(task.id, {
        type: "task.progress",
        completed_trials: trial,
        total_trials: plan.trials,
      });
    }
    await telemetry.progress(task.id, { type: "task.status", status: "finished" });
    trials.push({ task_id: task.id, trial_scores: scores });
  }

  // --- the result, under the same event log as the seed's release.
  const result = await buildEvalResult({
    plan,
    planDigest,
    trials,
    evaluator: { ...EVALUATOR },
    completedAt: new Date().toISOString(),
    ...attestation,
  });
  say(
    `result built: score ${result.result_core.score}, result digest ${result.result_digest} (development quote)`,
  );
  const state = await deliverDocument(
    (delivery) => client.result(canonicalJson(result), delivery),
    { name: "result", again: "the same bytes", holder: "run", refused: "result_refused" },
    say,
    options.resultRetryBudgetMs ?? RESULT_RETRY_BUDGET_MS,
  );
  return { receipted: true, score: result.result_core.score, state };
}

type ProgressBody =
  | { type: "task.status"; status: "running" | "finished" | "failed"; trial?: number }
  | { type: "task.progress"; completed_trials: number; total_trials: number };

/** The run's telemetry: per-task increasing seq, attempts, output lines; refusals printed. */
function telemetryOf(client: EvalVmClient, session: string, say: (line: string) => void) {
  const seqs = new Map<string, number>();
  /** The answer's body when `accepted`; else null, the refusal or the silence printed. */
  async function bestEffort<T>(
    what: string,
    send: () => Promise<{ status: number; body: T | null }>,
    accepted: (answer: { status: number; body: T | null }) => boolean,
  ): Promise<T | null> {
    try {
      const answer = await send();
      if (accepted(answer)) return answer.body;
      say(`${what} refused: HTTP ${answer.status} ${brief(answer.body)}`);
    } catch (error) {
      say(`${what}: no answer (${(error as Error).message})`);
    }
    return null;
  }
  return {
    async progress(taskId: string, event: ProgressBody) {
      const seq = (seqs.get(taskId) ?? 0) + 1;
      seqs.set(taskId, seq);
      const body = { ...event, task_id: taskId, seq } as ProgressEventRecord;
      await bestEffort(
        `progress ${taskId}#${seq}`,
        () => client.progress(session, body),
        (answer) => answer.status === 200,
      );
    },
    attempt: (taskId: string, trial: number): Promise<OpenedAttempt | null> =>
      bestEffort(
        `attempt ${taskId}/${trial}`,
        () => client.attempt(session, taskId, trial),
        (answer) =>
          (answer.status === 200 || answer.status === 201) &&
          typeof answer.body?.token === "string",
      ),
    async events(grant: OpenedAttempt | null, lines: readonly AttemptEventLine[]) {
      if (grant === null || lines.length === 0) return;
      await bestEffort(
        `events of attempt ${grant.attempt_id}`,
        () => client.events(grant, lines),
        (answer) => answer.status === 202,
      );
    },
  };
}
