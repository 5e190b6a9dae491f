import { GET_WEIGHTS_PATH } from "@platform/challenge-sdk";
import { createJobQueue } from "@platform/challenge-sdk/jobs";
import {
  createMinerKey,
  type MinerKey,
  runChallengeConformance,
  startTestChallenge,
  type TestChallenge,
  testBackends,
  waitFor,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { challenge } from "../src/challenge.js";
import { makeTask, nearestNeighbourTour, scoreTour } from "../src/task.js";

// Both backends when a PostgreSQL test server answers (TEST_DATABASE_URL), else the embedded one.
const backends = await testBackends();
// Here scoring runs when a test calls process-next, so each test decides when it happens.
const env = { WORKER_ENABLED: "false", TASK_SEED: "7", TASK_CITIES: "8" };
const task = makeTask(7, 8);
const inOrder = task.cities.map((_, index) => index);
const nearest = nearestNeighbourTour(task);

// The contract every challenge keeps: health, version, OpenAPI, get_weights auth, 422 shape, nonces.
runChallengeConformance(challenge.slug, () => ({ challenge, env }), { backends });

interface Status {
  id: number;
  hotkey: string;
  status: string;
  via: string;
  final_score: number | null;
  tour_length: number | null;
  error: string | null;
}

describe.each(backends)("%s: submissions, scoring, leaderboard and weights", (backend) => {
  let t: TestChallenge<unknown>;
  beforeAll(async () => {
    t = await startTestChallenge(challenge, { backend, env });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    await t.sql`delete from submissions`;
    await t.sql`delete from sdk_jobs`;
    await t.sql`delete from sdk_rate_limits`;
  });

  const submit = (tour: number[], miner?: MinerKey, taskId = task.task_id) =>
    t.signedFetch("/v1/submissions", {
      method: "POST",
      json: { task_id: taskId, tour },
      ...(miner ? { miner } : {}),
    });
  const bridge = (hotkey: string, body: unknown, extra: Record<string, string> = {}) =>
    t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...t.bridgeHeaders(hotkey, { filename: "tour.json" }),
        ...extra,
      },
      body: JSON.stringify(body),
    });
  const idOf = async (response: Response) => {
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: number }).id;
  };
  const processNext = async () =>
    (await (
      await t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: t.internalHeaders,
      })
    ).json()) as { processed: boolean; submission_id?: number; outcome?: string };
  const statusOf = async (id: number) =>
    (await (await t.fetch(`/v1/submissions/${id}`)).json()) as Status;
  const weights = async () =>
    (
      (await (await t.fetch(GET_WEIGHTS_PATH, { headers: t.internalHeaders })).json()) as {
        weights: Record<string, number>;
      }
    ).weights;
  const count = async () =>
    ((await t.sql`select count(*)::int as n from submissions`)[0] as { n: number }).n;

  it("serves the configured task", async () => {
    const response = await t.fetch("/v1/task");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(task);
  });

  it("stores a signed submission as pending under the signer's hotkey, tour kept private", async () => {
    const response = await submit(nearest);
    const body = await response.clone().json();
    const id = await idOf(response);
    expect(body).toEqual({ id, status: "pending", task_id: task.task_id });
    const record = await statusOf(id);
    expect(record).toMatchObject({ id, hotkey: t.miner.hotkey, status: "pending", via: "signed" });
    expect(record).not.toHaveProperty("tour");
    // Its scoring job is queued in the same transaction.
    expect(await createJobQueue(t.sql, { queue: "score" }).stats()).toMatchObject({ pending: 1 });
  });

  it("takes a bridged submission's hotkey from the master's verified headers, never X-Hotkey", async () => {
    const uploader = await createMinerKey();
    // The client also sends a valid signature of another key: the bridge must ignore it.
    const forged = t.sign("POST", "/internal/v1/bridge/submissions", {
      body: JSON.stringify({ task_id: task.task_id, tour: inOrder }),
    });
    const id = await idOf(
      await bridge(uploader.hotkey, { task_id: task.task_id, tour: inOrder }, forged),
    );
    expect(await statusOf(id)).toMatchObject({ hotkey: uploader.hotkey, via: "bridge" });
    const [row] = await t.sql`select filename, request_hash from submissions where id = ${id}`;
    expect(row).toMatchObject({
      filename: "tour.json",
      request_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it("refuses a wrong task or a bad tour with a clear 400, on both routes, and stores nothing", async () => {
    const cases: [number[], string, string][] = [
      [inOrder, "tsp-8-8", "unknown_task"],
      [[0, 1, 2], task.task_id, "invalid_tour"],
      [[0, 0, 1, 2, 3, 4, 5, 6], task.task_id, "invalid_tour"],
      [[0, 1, 2, 3, 4, 5, 6, 99], task.task_id, "invalid_tour"],
    ];
    for (const [tour, taskId, code] of cases) {
      const signed = await submit(tour, undefined, taskId);
      expect(signed.status).toBe(400);
      expect(await signed.json()).toMatchObject({ code });
      const bridged = await bridge(t.miner.hotkey, { task_id: taskId, tour });
      expect(bridged.status).toBe(400);
      expect(await bridged.json()).toMatchObject({ code });
    }
    const malformed = await bridge(t.miner.hotkey, { task_id: task.task_id, tour: "0,1,2" });
    expect(malformed.status).toBe(422);
    expect(await count()).toBe(0);
    expect(await createJobQueue(t.sql, { queue: "score" }).stats()).toMatchObject({ pending: 0 });
  });

  it("scores one pending submission per process-next call", async () => {
    const id = await idOf(await submit(nearest));
    expect(await processNext()).toEqual({
      processed: true,
      submission_id: id,
      outcome: "completed",
    });
    const expected = scoreTour(task, nearest);
    const record = await statusOf(id);
    expect(record).toMatchObject({ status: "completed", error: null });
    expect(record.final_score).toBeCloseTo(expected.score, 12);
    expect(record.tour_length).toBeCloseTo(expected.length, 9);
    expect(await processNext()).toEqual({ processed: false });
  });

  it("rejects, never scores, a stored tour that no longer answers the current task", async () => {
    const id = await idOf(await submit(nearest));
    await t.sql`update submissions set task_id = 'tsp-8-6' where id = ${id}`;
    expect(await processNext()).toMatchObject({ processed: true, outcome: "completed" });
    expect(await statusOf(id)).toMatchObject({
      status: "rejected",
      final_score: null,
      error: expect.stringContaining("tsp-8-6"),
    });
  });

  it("answers 404 for an unknown submission and 422 for an id that is not a number", async () => {
    const missing = await t.fetch("/v1/submissions/999999");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "submission_not_found" });
    expect((await t.fetch("/v1/submissions/abc")).status).toBe(422);
  });

  it("ranks each hotkey once by its best score, ties to the earliest", async () => {
    const rival = await createMinerKey();
    const first = await idOf(await submit(inOrder));
    const best = await idOf(await submit(nearest));
    const tie = await idOf(await submit(nearest, rival));
    for (let i = 0; i < 3; i++) await processNext();
    const response = await t.fetch("/v1/leaderboard");
    const board = (await response.json()) as {
      task_id: string;
      entries: Record<string, unknown>[];
    };
    expect(board.task_id).toBe(task.task_id);
    expect(
      board.entries.map((entry) => [entry["rank"], entry["hotkey"], entry["submission_id"]]),
    ).toEqual([
      [1, t.miner.hotkey, best],
      [2, rival.hotkey, tie],
    ]);
    expect(first).toBeLessThan(best);
    expect((await t.fetch("/v1/leaderboard?limit=0")).status).toBe(422);
  });

  it("weighs each hotkey's best completed score, normalised; pending ones count for nothing", async () => {
    const rival = await createMinerKey();
    await idOf(await submit(inOrder));
    await idOf(await submit(nearest, rival));
    expect(await weights()).toEqual({});
    await processNext();
    await processNext();
    await idOf(await submit(nearest)); // pending: not counted yet
    const nearestScore = scoreTour(task, nearest).score;
    const got = await weights();
    expect(Object.keys(got).sort()).toEqual([t.miner.hotkey, rival.hotkey].sort());
    expect(got[t.miner.hotkey]).toBeCloseTo(1 / (1 + nearestScore), 12);
    expect(got[rival.hotkey]).toBeCloseTo(nearestScore / (1 + nearestScore), 12);
  });

  it("shares one limit of accepted uploads between the signed and the bridge route; refused ones use none", async () => {
    // A typo is refused before the count: it costs the miner nothing.
    for (let i = 0; i < 3; i++)
      expect((await submit(inOrder, undefined, "tsp-8-8")).status).toBe(400);
    for (let i = 0; i < 20; i++) {
      expect((await bridge(t.miner.hotkey, { task_id: task.task_id, tour: inOrder })).status).toBe(
        201,
      );
    }
    const refused = await submit(inOrder);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "rate_limited" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await count()).toBe(20);
  });
});

describe("the background worker", () => {
  let t: TestChallenge<unknown>;
  beforeAll(async () => {
    t = await startTestChallenge(challenge, { env: { ...env, WORKER_ENABLED: "true" } });
  });
  afterAll(() => t?.close());

  it("scores a submission without anyone calling process-next", async () => {
    const response = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: { task_id: task.task_id, tour: nearest },
    });
    const { id } = (await response.json()) as { id: number };
    const record = await waitFor(
      async () => {
        const status = (await (await t.fetch(`/v1/submissions/${id}`)).json()) as Status;
        return status.status === "completed" ? status : null;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: `submission ${id} completed` },
    );
    expect(record?.final_score).toBeCloseTo(scoreTour(task, nearest).score, 12);
  });
});
