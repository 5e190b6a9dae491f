// A miner's helper: fetch the task and write a nearest-neighbour tour to submit.
//   npm run solve -- [challenge URL] [output file]
//   npm run solve -- http://127.0.0.1:8080/challenges/shortest-tour submission.json
import { writeFileSync } from "node:fs";
import { createWorkerClient } from "@platform/challenge-sdk/client";
import { identity } from "../src/identity.js";
import { nearestNeighbourTour, scoreTour, type Task } from "../src/task.js";

const base = (process.argv[2] ?? `http://127.0.0.1:8080/challenges/${identity.slug}`).replace(
  /\/+$/,
  "",
);
const out = process.argv[3] ?? "submission.json";

// The SDK's client for tools and workers: readable errors, a timeout, a size cap on the answer.
const challenge = createWorkerClient({ baseUrl: base, timeoutMs: 15_000 });
const task = await challenge.sendJson<Task>("GET", "/v1/task").catch((error: Error) => {
  process.stderr.write(`${base}: ${error.message}\n`);
  process.exit(1);
});
const tour = nearestNeighbourTour(task);
writeFileSync(out, `${JSON.stringify({ task_id: task.task_id, tour })}\n`);
const { length, score } = scoreTour(task, tour);
process.stderr.write(
  `wrote ${out}: a tour of ${task.task_id} of length ${length.toFixed(1)} (expected score ${score.toFixed(4)})\n`,
);
