// A miner's helper: fetch the task and write a nearest-neighbour tour to submit.
//   npm run solve -- [challenge URL] [output file]
//   npm run solve -- http://127.0.0.1:8080/challenges/shortest-tour submission.json
import { writeFileSync } from "node:fs";
import { identity } from "../src/identity.js";
import { nearestNeighbourTour, scoreTour, type Task } from "../src/task.js";

const base = (process.argv[2] ?? `http://127.0.0.1:8080/challenges/${identity.slug}`).replace(
  /\/+$/,
  "",
);
const out = process.argv[3] ?? "submission.json";

const response = await fetch(`${base}/v1/task`).catch((error: Error) => {
  process.stderr.write(`cannot reach ${base}: ${error.message}\n`);
  process.exit(1);
});
if (!response.ok) {
  process.stderr.write(`GET ${base}/v1/task answered ${response.status}\n`);
  process.exit(1);
}
const task = (await response.json()) as Task;
const tour = nearestNeighbourTour(task);
writeFileSync(out, `${JSON.stringify({ task_id: task.task_id, tour })}\n`);
const { length, score } = scoreTour(task, tour);
process.stderr.write(
  `wrote ${out}: a tour of ${task.task_id} of length ${length.toFixed(1)} (expected score ${score.toFixed(4)})\n`,
);
