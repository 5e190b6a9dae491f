// The whole challenge: its settings, its routes, how a submission is scored, and its weights.
// Miners fetch the task, submit a tour (signed, or through the master's upload route), a worker
// scores it in the background, and each hotkey's best score becomes its weight.
import {
  type ChallengeContext,
  type ConfigOf,
  createJobQueue,
  defineChallenge,
  HttpError,
  JobError,
  type JobHandler,
  json,
  LeaseLostError,
  type Logger,
  processNext,
  runWorker,
  type Sql,
  type Static,
  Type,
  type WorkerEvent,
  weightsFromScores,
} from "@platform/challenge-sdk";
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

// One count for both ways in, so uploading through the master cannot double a miner's quota.
const UPLOADS = { limit: 20, windowSeconds: 3600, bucket: "submissions" };

/** The job a submission becomes. */
interface ScoreJob {
  submissionId: number;
}

/** What a finished job records. */
interface ScoreResult {
  status: "completed" | "rejected";
  final_score: number | null;
}

const taskOf = (config: Settings): Task => makeTask(config.TASK_SEED, config.TASK_CITIES);

// A queue is a name over the SDK's sdk_jobs table: cheap to make, bound to one database.
const queueOf = (sql: Sql) => createJobQueue<ScoreJob, ScoreResult>(sql, { queue: "score" });

/** Store a submission and its scoring job in one transaction: neither exists without the other. */
async function accept(
  ctx: ChallengeContext<Settings>,
  body: SubmissionCreate,
  from: {
    hotkey: string;
    via: "signed" | "bridge";
    requestHash: string | null;
    filename: string | null;
  },
): Promise<Response> {
  const task = taskOf(ctx.config);
  // Cheap checks answer now, so a miner learns about a typo at once (and keeps its rate-limit slot).
  if (body.task_id !== task.task_id) {
    throw new HttpError(400, "unknown_task", `This challenge scores ${task.task_id}: GET /v1/task`);
  }
  const problem = tourProblem(task, body.tour);
  if (problem) throw new HttpError(400, "invalid_tour", problem);
  const queue = queueOf(ctx.sql);
  // On the embedded database a transaction holds the only connection: use `tx`, never `ctx.sql`.
  const id = await ctx.sql.begin(async (tx) => {
    const [row] = await tx<{ id: number }[]>`
      insert into submissions (hotkey, task_id, tour, via, request_hash, filename)
      values (${from.hotkey}, ${body.task_id}, ${tx.json(body.tour)}, ${from.via},
              ${from.requestHash}, ${from.filename})
      returning id`;
    await queue.enqueue({ submissionId: row!.id }, { key: `score:${row!.id}`, tx });
    return row!.id;
  });
  ctx.log.info("submission accepted", { id, hotkey: from.hotkey, via: from.via });
  return json({ id, status: "pending", task_id: task.task_id }, { status: 201 });
}

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

// The background worker of each running instance, keyed by its database (tests run several).
const workers = new Map<Sql, { stop: AbortController; done: Promise<void> }>();

/** The challenge: `src/main.ts` runs it, `platform dev` and the tests start it. */
export const challenge = defineChallenge({
  slug: identity.slug,
  name: identity.name,
  version: identity.version,
  ...(identity.description ? { description: identity.description } : {}),
  config: Settings,
  migrations: new URL("../migrations/", import.meta.url),

  setup: ({ sql, config, log }) => {
    if (!config.WORKER_ENABLED) return;
    const stop = new AbortController();
    const done = runWorker(queueOf(sql), scorer(sql, config), {
      concurrency: config.WORKER_CONCURRENCY,
      signal: stop.signal,
      onEvent: onWorkerEvent(sql, log),
    }).catch((error: unknown) => log.error("scoring worker stopped", { error }));
    workers.set(sql, { stop, done });
  },

  teardown: async ({ sql }) => {
    const worker = workers.get(sql);
    if (!worker) return;
    workers.delete(sql);
    worker.stop.abort();
    await worker.done;
  },

  routes: (router) => {
    router.public({
      method: "GET",
      path: "/v1/task",
      summary: "The instance to solve: cities to visit, each exactly once",
      handler: ({ config }) => taskOf(config),
    });

    router.signed({
      method: "POST",
      path: "/v1/submissions",
      summary: "Submit a tour, signed with your hotkey",
      body: SubmissionCreate,
      bodyLimit: 64 * 1024,
      rateLimit: UPLOADS,
      responses: { 201: { description: "Stored; scored shortly", schema: Accepted } },
      handler: (ctx) =>
        accept(ctx, ctx.body, {
          hotkey: ctx.miner.hotkey,
          via: "signed",
          requestHash: ctx.miner.requestHash,
          filename: null,
        }),
    });

    router.bridge({
      method: "POST",
      path: "/internal/v1/bridge/submissions",
      summary: "A tour the master verified and forwarded (`platform submit`)",
      body: SubmissionCreate,
      bodyLimit: 64 * 1024,
      rateLimit: UPLOADS,
      responses: { 201: { description: "Stored; scored shortly", schema: Accepted } },
      handler: (ctx) =>
        accept(ctx, ctx.body, {
          hotkey: ctx.miner.hotkey,
          via: "bridge",
          requestHash: ctx.miner.requestHash,
          filename: ctx.filename,
        }),
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
      handler: async ({ sql, config, log }) => {
        const done = await processNext(queueOf(sql), scorer(sql, config), {
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
