/**
 * A job worker in its own process, for the multi-process tests:
 *   node --conditions=@platform/source --import tsx test/jobs/worker-child.ts <url> <queue> [json options]
 * Prints one JSON line per worker event ({"event","id","worker"}) and "ready" once it polls.
 * Payload `{ ms }` works that long; `{ hangOn: "<worker id>" }` hangs in that worker only
 * (until its signal aborts), so a test can kill or pause the worker holding it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { openDatabase } from "@platform/core";
import { createJobQueue, runWorker } from "../../src/jobs/index.js";

interface Payload {
  ms?: number;
  hangOn?: string;
}

const [url, queueName, raw] = process.argv.slice(2);
if (!url || !queueName) {
  console.error("usage: worker-child.ts <url> <queue> [json options]");
  process.exit(2);
}
const options = JSON.parse(raw ?? "{}") as {
  workerId?: string;
  concurrency?: number;
  leaseSeconds?: number;
  heartbeatSeconds?: number;
};
const workerId = options.workerId ?? `child-${process.pid}`;
const print = (line: Record<string, unknown>) =>
  process.stdout.write(`${JSON.stringify({ worker: workerId, ...line })}\n`);

const db = await openDatabase({ url, max: 4 });
const queue = createJobQueue<Payload, { worker: string }>(db.sql, { queue: queueName });
const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());

print({ event: "ready" });
await runWorker(
  queue,
  async (job, { signal }) => {
    if (job.payload.hangOn === workerId) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    } else {
      await sleep(job.payload.ms ?? 0, undefined, { signal }).catch(() => {});
    }
    return { worker: workerId };
  },
  {
    workerId,
    signal: stop.signal,
    pollIntervalMs: 25,
    concurrency: options.concurrency ?? 1,
    leaseSeconds: options.leaseSeconds ?? 30,
    ...(options.heartbeatSeconds ? { heartbeatSeconds: options.heartbeatSeconds } : {}),
    onEvent: (event) => {
      if (event.type === "stopping" || event.type === "stopped") print({ event: event.type });
      else if (event.type === "error")
        print({ event: "error", message: String((event.error as Error)?.message ?? event.error) });
      else
        print({
          event: event.type,
          id: event.job.id,
          attempts: event.job.attempts,
          token: event.job.leaseToken,
        });
    },
  },
);
await db.close();
