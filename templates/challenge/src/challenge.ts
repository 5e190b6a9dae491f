// The whole challenge: its settings, its routes, how a submission is scored, and its weights.
// Miners fetch the task, submit a tour (signed, or through the master's upload route: one
// route declaration takes both), a worker scores it in the background, and each hotkey's best
// score becomes its weight.
import {
  acceptWithinLimit,
  type ConfigOf,
  defineChallenge,
  HttpError,
  json,
  type Logger,
  type Sql,
  type Static,
  Type,
  weightsFromScores,
} from "@platform/challenge-sdk";
import {
  createJobQueue,
  JobError,
  type JobHandler,
  type JobQueue,
  LeaseLostError,
  processNext,
  runWorker,
  type WorkerEvent,
} from "@platform/challenge-sdk/jobs";
import { identity } from "./identity.js";
import { makeTask, scoreTour, type Task, tourProblem } from "./task.js";

/** This challenge's own environment variables (the SDK reads PORT, DATABASE_URL, CHALLENGE_TOKEN…). */
export const Settings = Type.Object({
  TASK_SEED: Type.Integer({
    minimum: 0,
    maximum: 2_147_483_647,
    default: 2024,
    description: "Which instance miners solve; changing it starts a new competition",
  }),
  TASK_CITIES: Type.Integer({ minimum: 4, maximum: 500, default: 12 }),
  WORKER_ENABLED: Type.Boolean({
    default: true,
    description:
      "Score in the background; false leaves it to POST /internal/v1/worker/process-next",
  }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 32, default: 2 }),
});
type Settings = ConfigOf<typeof Settings>;

/** What a miner submits, signed or through the master. */
export const SubmissionCreate = Type.Object(
  {
    task_id: Type.String({ minLength: 1, maxLength: 64 }),
    tour: Type.Array(Type.Integer(), { maxItems: 500 }),
  },
  { additionalProperties: false },
);
export type SubmissionCreate = Static<typeof SubmissionCreate>;

const Accepted = Type.Object({
  id: Type.Integer(),
  status: Type.Literal("pending"),
  task_id: Type.String(),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** GET /v1/submissions/:id: what the master's submission read (and `platform status`) shows. */
export const SubmissionStatus = Type.Object({
  id: Type.Integer(),
  hotkey: Type.String(),
  task_id: Type.String(),
  via: Type.Union([Type.Literal("signed"), Type.Literal("bridge")]),
  status: Type.Union([
    Type.Literal("pending"),
    Type.Literal("running"),
    Type.Literal("completed"),
    Type.Literal("rejected"),
    Type.Literal("failed"),
  ]),
  final_score: Nullable(Type.Number()),
  tour_length: Nullable(Type.Number()),
  error: Nullable(Type.String()),
  created_at: Type.String({ format: "date-time" }),
  scored_at: Nullable(Type.String({ format: "date-time" })),
});

const LeaderboardEntry = Type.Object({
  rank: Type.Integer(),
  hotkey: Type.String(),
  submission_id: Type.Integer(),
  final_score: Type.Number(),
  tour_length: Type.Number(),
  created_at: Type.String({ format: "date-time" }),
});

/** The job a submission becomes. */
interface ScoreJob {
  submissionId: number;
}

/** What a finished job records. */
interface ScoreResult {
  status: "completed" | "rejected";
  final_score: number | null;
}

/** What `setup` keeps for every handler (`ctx.state`): one instance's own objects, no globals. */
interface State {
  /** The scoring queue: a name over the SDK's sdk_jobs table, bound to this instance's database. */
  queue: JobQueue<ScoreJob, ScoreResult>;
}

const taskOf = (config: Settings): Task => makeTask(config.TASK_SEED, config.TASK_CITIES);

/**
 * Score one submission. A job can run twice (a worker died after scoring, before recording), so
 * this only ever sets the same values again; the final write happens under the job's fence, so
 * a worker that lost its lease writes nothing.
 */
function scorer(sql: Sql, config: Settings): JobHandler<ScoreJob, ScoreResult> {
  return async (job, { fence }) => {
    const id = job.payload?.submissionId;
    if (!Number.isSafeInteger(id))
      throw new JobError("job has no submissionId", { retryable: false });
    const [row] = await sql<{ task_id: string; tour: unknown }[]>`
      select task_id, tour from submissions where id = ${id}`;
    if (!row) throw new JobError(`submission ${id} does not exist`, { retryable: false });
    await sql`update submissions set status = 'running' where id = ${id} and status = 'pending'`;

    const task = taskOf(config);
    const tour = Array.isArray(row.tour) ? (row.tour as number[]) : [];
    const problem =
      row.task_id === task.task_id
        ? tourProblem(task, tour)
        : `the challenge now scores ${task.task_id}, not ${row.task_id}`;
    const scored = problem === null ? scoreTour(task, tour) : null;

    await sql.begin(async (tx) => {
      if (!(await fence(tx))) throw new LeaseLostError(`lost the lease on submission ${id}`);
      if (scored) {
        await tx`update submissions set status = 'completed', final_score = ${scored.score},
          tour_length = ${scored.length}, error = null, scored_at = now() where id = ${id}`;
      } else {
        await tx`update submissions set status = 'rejected', error = ${problem},
          scored_at = now() where id = ${id}`;
      }
    });
    return scored
      ? { status: "completed", final_score: scored.score }
      : { status: "rejected", final_score: null };
  };
}

/** A job out of attempts leaves its submission `failed`, never `running` forever. */
function onWorkerEvent(sql: Sql, log: Logger) {
  return (event: WorkerEvent<ScoreJob, ScoreResult>) => {
    if (event.type === "error") log.warn("scoring worker error", { error: event.error });
    if (event.type !== "failed" || event.status !== "dead") return;
    const id = event.job.payload?.submissionId;
    log.error("scoring failed for good", { submission: id, error: event.error });
    if (!Number.isSafeInteger(id)) return;
    // The public record gets a fixed sentence; the cause stays in the logs.
    sql`update submissions set status = 'failed', error = 'scoring failed; the operator has the details',
        scored_at = now() where id = ${id} and status in ('pending', 'running')`.catch(
      (error: unknown) =>
        log.error("could not mark a submission failed", { submission: id, error }),
    );
  };
}

/** The challenge: `src/main.ts` runs it, `platform dev` and the tests start it. */
export const challenge = defineChallenge({
  slug: identity.slug,
  name: identity.name,
  version: identity.version,
  ...(identity.description ? { description: identity.description } : {}),
  config: Settings,
  migrations: new URL("../migrations/", import.meta.url),

  // Runs once per start, after the migrations. What it returns is `ctx.state` in every handler;
  // what it starts, `onClose` stops (before the database closes).
  setup: ({ sql, config, log, onClose }): State => {
    const queue = createJobQueue<ScoreJob, ScoreResult>(sql, { queue: "score" });
    if (config.WORKER_ENABLED) {
      const stop = new AbortController();
      const done = runWorker(queue, scorer(sql, config), {
        concurrency: config.WORKER_CONCURRENCY,
        signal: stop.signal,
        onEvent: onWorkerEvent(sql, log),
      }).catch((error: unknown) => log.error("scoring worker stopped", { error }));
      onClose(async () => {
        stop.abort();
        await done;
      });
    }
    return { queue };
  },

  routes: (router) => {
    router.public({
      method: "GET",
      path: "/v1/task",
      summary: "The instance to solve: cities to visit, each exactly once",
      handler: ({ config }) => taskOf(config),
    });

    // One declaration, two ways in: a miner signs POST /v1/submissions, or uploads through the
    // master (`platform submit`), which verifies it and posts it to the bridge path. One handler,
    // and one count of accepted submissions, so uploading through the master cannot double a
    // miner's quota.
    router.submission({
      path: "/v1/submissions",
      bridgePath: "/internal/v1/bridge/submissions",
      summary: "Submit a tour, signed with your hotkey (or with `platform submit`)",
      body: SubmissionCreate,
      bodyLimit: 64 * 1024,
      responses: {
        201: { description: "Stored; scored shortly", schema: Accepted },
        429: { description: "20 accepted in the last hour (Retry-After says when the next is)" },
      },
      handler: async ({ body, miner, filename, sql, config, state, log }) => {
        const task = taskOf(config);
        // Cheap checks answer now, so a miner learns about a typo at once (and keeps its slot:
        // only an accepted submission counts).
        if (body.task_id !== task.task_id) {
          throw new HttpError(
            400,
            "unknown_task",
            `This challenge scores ${task.task_id}: GET /v1/task`,
          );
        }
        const problem = tourProblem(task, body.tour);
        if (problem) throw new HttpError(400, "invalid_tour", problem);
        // The count, the submission and its scoring job in one transaction: none exists without
        // the others, and two racing submissions of one hotkey queue on its count. On the
        // embedded database a transaction holds the only connection: use `tx`.
        const id = await sql.begin(async (tx) => {
          await acceptWithinLimit(tx, {
            bucket: "submissions",
            key: miner.hotkey,
            limit: 20,
            windowSeconds: 3600,
          });
          const [row] = await tx<{ id: number }[]>`
            insert into submissions (hotkey, task_id, tour, via, request_hash, filename)
            values (${miner.hotkey}, ${body.task_id}, ${tx.json(body.tour)}, ${miner.via},
                    ${miner.requestHash}, ${filename})
            returning id`;
          await state.queue.enqueue({ submissionId: row!.id }, { key: `score:${row!.id}`, tx });
          return row!.id;
        });
        log.info("submission accepted", { id, hotkey: miner.hotkey, via: miner.via });
        return json({ id, status: "pending", task_id: task.task_id }, { status: 201 });
      },
    });

    router.public({
      method: "GET",
      path: "/v1/submissions/:id",
      summary: "A submission's status and score (the master's submission read lands here)",
      params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
      responses: { 200: { description: "The submission", schema: SubmissionStatus } },
      handler: async ({ sql, params }) => {
        const [row] = await sql`
          select id, hotkey, task_id, via, status, final_score, tour_length, error, created_at, scored_at
          from submissions where id = ${params.id}`;
        if (!row) throw new HttpError(404, "submission_not_found", `No submission ${params.id}`);
        return row;
      },
    });

    router.public({
      method: "GET",
      path: "/v1/leaderboard",
      summary: "Each hotkey's best tour of the current task; ties go to the earliest",
      query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) }),
      responses: {
        200: {
          description: "Ranked entries",
          schema: Type.Object({ task_id: Type.String(), entries: Type.Array(LeaderboardEntry) }),
        },
      },
      handler: async ({ sql, config, query }) => {
        const task = taskOf(config);
        const entries = await sql`
          select (row_number() over (order by final_score desc, created_at, id))::int as rank,
                 hotkey, id as submission_id, final_score, tour_length, created_at
          from (select distinct on (hotkey) id, hotkey, final_score, tour_length, created_at
                from submissions
                where status = 'completed' and task_id = ${task.task_id}
                order by hotkey, final_score desc, created_at, id) best
          order by rank
          limit ${query.limit}`;
        return { task_id: task.task_id, entries };
      },
    });

    router.internal({
      method: "POST",
      path: "/internal/v1/worker/process-next",
      summary: "Score one pending submission now (a cron, a test, or WORKER_ENABLED=false)",
      handler: async ({ sql, config, log, state }) => {
        const done = await processNext(state.queue, scorer(sql, config), {
          onEvent: onWorkerEvent(sql, log),
        });
        if (!done) return { processed: false };
        return {
          processed: true,
          submission_id: done.job.payload.submissionId,
          outcome: done.outcome,
        };
      },
    });
  },

  // Each hotkey's best completed score on the current task, normalised by the SDK.
  weights: async ({ sql, config }) => {
    const rows = await sql<{ hotkey: string; score: number; at: Date; id: string }[]>`
      select hotkey, final_score as score, created_at as at, id::text as id
      from submissions where status = 'completed' and task_id = ${taskOf(config).task_id}`;
    return { epoch: null, weights: weightsFromScores(rows) };
  },
});
