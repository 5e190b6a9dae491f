import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Database } from "@platform/core";
import { createTestDatabase, testBackends } from "@platform/core/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createJobQueue, migrateJobQueue } from "../../src/jobs/index.js";

/** One line a child worker printed. */
interface Line {
  worker: string;
  event: string;
  id?: string;
  attempts?: number;
  token?: number;
  message?: string;
}

interface Child {
  proc: ChildProcess;
  lines: Line[];
  exited: Promise<number | null>;
}

const packageRoot = fileURLToPath(new URL("../../", import.meta.url));
const script = fileURLToPath(new URL("./worker-child.ts", import.meta.url));
const children: Child[] = [];

function startWorker(url: string, queue: string, options: Record<string, unknown>): Child {
  const proc = spawn(
    process.execPath,
    [
      "--conditions=@platform/source",
      "--import",
      "tsx",
      script,
      url,
      queue,
      JSON.stringify(options),
    ],
    { cwd: packageRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: Line[] = [];
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    try {
      lines.push(JSON.parse(line) as Line);
    } catch {
      // Not one of ours (a stray log line); the assertions only read worker events.
    }
  });
  let stderr = "";
  proc.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once("exit", (code) => {
      if (code !== 0 && code !== null && stderr) console.error(stderr);
      resolve(code);
    }),
  );
  const child = { proc, lines, exited };
  children.push(child);
  return child;
}

async function until(
  check: () => boolean | Promise<boolean>,
  ms = 30_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${ms} ms`);
    await sleep(25);
  }
}

const backends = await testBackends();
// Processes can only share a real server: the embedded database lives inside one process.
// testBackends() has already warned loudly (or thrown under CI=true) when the server is missing.
describe.skipIf(!backends.includes("postgres"))("workers in several processes on postgres", () => {
  let db: Database;
  let counter = 0;
  const queueName = () => `mp${process.pid}-${++counter}`;

  beforeAll(async () => {
    db = await createTestDatabase({ backend: "postgres" });
    await migrateJobQueue(db.sql);
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null)
        child.proc.kill("SIGKILL");
      await child.exited;
    }
  });
  afterAll(() => db?.close());

  it("three worker processes complete every one of N jobs exactly once", async () => {
    const name = queueName();
    const queue = createJobQueue(db.sql, { queue: name });
    const workers = [0, 1, 2].map((i) =>
      startWorker(db.url, name, { workerId: `p${i}`, concurrency: 2 }),
    );
    await until(
      () => workers.every((w) => w.lines.some((l) => l.event === "ready")),
      30_000,
      "workers ready",
    );

    const N = 90;
    const ids = new Set<string>();
    for (let i = 0; i < N; i++) ids.add((await queue.enqueue({ ms: 10 + (i % 4) * 10 })).id);
    await until(async () => (await queue.stats()).completed === N, 60_000, "all jobs completed");

    for (const worker of workers) worker.proc.kill("SIGTERM");
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0, 0]);

    const completions = workers.flatMap((w) => w.lines.filter((l) => l.event === "completed"));
    expect(completions).toHaveLength(N);
    expect(new Set(completions.map((l) => l.id))).toEqual(ids);
    // Each process took part, and no job was claimed twice (nothing expired, nothing failed).
    for (const worker of workers)
      expect(worker.lines.some((l) => l.event === "completed")).toBe(true);
    expect(workers.flatMap((w) => w.lines.filter((l) => l.event === "claimed"))).toHaveLength(N);
    const rows = await db.sql<{ attempts: number; owner: string; worker: string }[]>`
      select attempts, lease_owner as owner, result->>'worker' as worker from sdk_jobs where queue = ${name}`;
    expect(rows.every((row) => row.attempts === 1 && row.owner === row.worker)).toBe(true);
  });

  it("a worker SIGKILLed mid-job loses nothing: the job is claimed again after its lease and completed once", async () => {
    const name = queueName();
    const queue = createJobQueue<{ hangOn?: string }, { worker: string }>(db.sql, { queue: name });
    const { id } = await queue.enqueue({ hangOn: "doomed" });
    const doomed = startWorker(db.url, name, {
      workerId: "doomed",
      leaseSeconds: 2,
      heartbeatSeconds: 0.5,
    });
    await until(
      () => doomed.lines.some((l) => l.event === "claimed" && l.id === id),
      30_000,
      "doomed claims",
    );

    doomed.proc.kill("SIGKILL");
    await doomed.exited;
    // Until the lease runs out the job stays with the dead worker: nobody else may take it.
    const orphaned = await queue.get(id);
    expect(orphaned).toMatchObject({ status: "running", leaseOwner: "doomed", attempts: 1 });

    const rescuer = startWorker(db.url, name, { workerId: "rescuer", leaseSeconds: 2 });
    await until(async () => (await queue.get(id))?.status === "completed", 30_000, "job completed");
    const claimed = rescuer.lines.find((l) => l.event === "claimed" && l.id === id)!;
    expect(claimed).toMatchObject({ attempts: 2, token: 2 });
    // Claimed again only once the dead worker's lease had run out (both times are the database's).
    const done = (await queue.get(id))!;
    expect(done.startedAt!.getTime()).toBeGreaterThanOrEqual(orphaned!.leaseExpiresAt!.getTime());

    expect(await queue.get(id)).toMatchObject({
      status: "completed",
      attempts: 2,
      leaseOwner: "rescuer",
      result: { worker: "rescuer" },
    });
    expect(doomed.lines.filter((l) => l.event === "completed")).toHaveLength(0);
    expect(rescuer.lines.filter((l) => l.event === "completed" && l.id === id)).toHaveLength(1);
    rescuer.proc.kill("SIGTERM");
    expect(await rescuer.exited).toBe(0);
  });

  it("a paused (stale) worker that wakes after losing its lease never completes the job", async () => {
    const name = queueName();
    const queue = createJobQueue<{ ms?: number }, { worker: string }>(db.sql, { queue: name });
    const { id } = await queue.enqueue({ ms: 3_000 });
    const sleeper = startWorker(db.url, name, {
      workerId: "sleeper",
      leaseSeconds: 2,
      heartbeatSeconds: 0.5,
    });
    await until(
      () => sleeper.lines.some((l) => l.event === "claimed" && l.id === id),
      30_000,
      "sleeper claims",
    );

    // A long GC pause, a frozen VM: the process stops without dying.
    sleeper.proc.kill("SIGSTOP");
    const other = startWorker(db.url, name, { workerId: "other", leaseSeconds: 10 });
    await until(
      async () => (await queue.get(id))?.status === "completed",
      40_000,
      "other completes",
    );
    sleeper.proc.kill("SIGCONT");

    // The sleeper notices (heartbeat refused or outcome refused) and records nothing.
    await until(
      () => sleeper.lines.some((l) => l.event === "lease_lost" && l.id === id),
      15_000,
      "sleeper notices",
    );
    await sleep(300);
    expect(sleeper.lines.filter((l) => l.event === "completed")).toHaveLength(0);
    expect(await queue.get(id)).toMatchObject({
      status: "completed",
      leaseOwner: "other",
      result: { worker: "other" },
      attempts: 2,
    });

    for (const child of [sleeper, other]) child.proc.kill("SIGTERM");
    expect(await Promise.all([sleeper.exited, other.exited])).toEqual([0, 0]);
  });
});
