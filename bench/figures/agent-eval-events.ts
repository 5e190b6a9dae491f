// Figure: log lines per second through the agent-eval challenge's attempt events route (HTTP,
// the attempt's bearer, NDJSON parsing, redaction with the miner's env values, caps, one insert
// per request), against the storage floor measured in the same run: the same number of rows
// written straight into the same table with one multi-row insert per batch (no HTTP, no parsing,
// no redaction). The challenge runs with `challenge.start()` on its own embedded database; one
// miner takes agents/good through submit, env (two secret values), launch and the review with
// the miner tool's steps, then eval/prepare, a telemetry session and one attempt. Lines are
// realistic agent output, one in ten carrying a secret (a key shape or an env value); the figure
// checks that the stored rows hold none of them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateMnemonic, initCrypto, keypairFromMnemonic } from "@platform/core";
import { challenge } from "../../examples/agent-eval-challenge/src/challenge.js";
import { signTelemetryGrant } from "../../examples/agent-eval-challenge/src/eval/telemetry-grant.js";
import { connect } from "../../examples/agent-eval-challenge/src/miner/challenge-client.js";
import {
  launch,
  type Miner,
  review,
  setEnv,
  submitAgent,
} from "../../examples/agent-eval-challenge/src/miner/miner-flow.js";
import { type Figure, round } from "../_figure.js";

const GOOD_AGENT = fileURLToPath(
  new URL("../../examples/agent-eval-challenge/agents/good", import.meta.url),
);
const ENV = { MODEL_API_KEY: "mk-live-7f3a9c21e4b8d6f0", SERVICE_PASSWORD: "hunter2-but-longer" };
const LINES_PER_REQUEST = 512;
const REQUESTS = 12;

/** Agent output as it looks: progress, tracebacks, JSON, and now and then a secret. */
function logLines(seed: number): string[] {
  return Array.from({ length: LINES_PER_REQUEST }, (_, index) => {
    const n = seed * LINES_PER_REQUEST + index;
    const message =
      n % 10 === 0
        ? `calling the model with key=${ENV.MODEL_API_KEY} and sk-proj${"x".repeat(24)}${n}`
        : n % 10 === 5
          ? `{"step": ${n}, "tokens": ${n * 7}, "authorization": "Bearer abc.def.${n}"}`
          : `step ${n}: read 4096 bytes from /tmp/input, wrote ${n % 97} lines, elapsed 0.${n % 1000}s`;
    return JSON.stringify({ stream: n % 3 === 0 ? "stderr" : "stdout", message });
  });
}

export const agentEvalEventsFigure: Figure = {
  name: "agent-eval-events",
  async run() {
    await initCrypto();
    const dataDir = mkdtempSync(join(tmpdir(), "bench-agent-eval-events-"));
    const log = console.log;
    console.log = (...args: unknown[]) => console.error(...args);
    const running = await challenge.start({
      host: "127.0.0.1",
      port: 0,
      dataDir,
      env: {
        CHALLENGE_TOKEN: "bench-agent-eval-challenge-token-0123456789",
        LOG_LEVEL: "error",
        SECRET_KEY_GENERATE: "true",
        ATTESTATION_VERIFIER: "dev",
      },
    });
    try {
      const pair = keypairFromMnemonic(generateMnemonic());
      const miner: Miner = { client: await connect(running.url, pair), pair };
      const id = await submitAgent(miner, GOOD_AGENT, "bench-events");
      await setEnv(miner, id, ENV);
      await launch(miner, id);
      if ((await review(miner, id)) !== "allowed") throw new Error("the review did not allow");
      const prepared = await miner.client.signed<{
        run_id: string;
        plan_digest: string;
        plan: { task_set: { task_ids: string[] } };
        secret_delivery: { token: string };
      }>("POST", `/submissions/${id}/eval/prepare`);
      const runBase = `${running.url}/evaluation/v1/runs/${prepared.run_id}`;
      const bearer = { authorization: `Bearer ${prepared.secret_delivery.token}` };
      const json = { ...bearer, "content-type": "application/json" };
      const grant = signTelemetryGrant(pair, {
        runId: prepared.run_id,
        planSha256: prepared.plan_digest,
      });
      const session = (await (
        await fetch(`${runBase}/telemetry-session`, {
          method: "POST",
          headers: json,
          body: JSON.stringify(grant),
        })
      ).json()) as { session_id: string };
      const attempt = (await (
        await fetch(`${runBase}/attempts`, {
          method: "POST",
          headers: { ...json, "x-telemetry-session": session.session_id },
          body: JSON.stringify({ task_id: prepared.plan.task_set.task_ids[0], trial: 1 }),
        })
      ).json()) as {
        attempt_id: string;
        token: string;
        events_path: string;
        challenge_slug: string;
      };
      const bodies = Array.from(
        { length: REQUESTS + 1 },
        (_, seed) => `${logLines(seed).join("\n")}\n`,
      );

      const post = async (body: string) => {
        const response = await fetch(`${running.url}${attempt.events_path}`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${attempt.token}`,
            "x-core-challenge-slug": attempt.challenge_slug,
            "content-type": "application/x-ndjson",
          },
          body,
        });
        const receipt = (await response.json()) as { recorded?: number };
        if (response.status !== 202 || receipt.recorded !== LINES_PER_REQUEST) {
          throw new Error(
            `the events route answered ${response.status} ${JSON.stringify(receipt)}`,
          );
        }
      };
      await post(bodies[REQUESTS]!); // warm-up, untimed
      const routeStart = performance.now();
      for (const body of bodies.slice(0, REQUESTS)) await post(body);
      const routeSeconds = (performance.now() - routeStart) / 1000;

      const sql = running.instance.sql;
      const [leaks] = await sql<{ n: number }[]>`
        select count(*)::int as n from eval_task_events
        where attempt_id = ${attempt.attempt_id}
          and (payload->>'message' like ${`%${ENV.MODEL_API_KEY}%`} or payload->>'message' like '%sk-proj%')`;
      if (leaks!.n !== 0) throw new Error(`the route stored secrets: ${leaks!.n} rows hold one`);

      // The storage floor: the same rows, one multi-row insert per batch, in the same database.
      const [run] = await sql<{ submission_id: string }[]>`
        select submission_id from eval_runs where id = ${prepared.run_id}`;
      const floorStart = performance.now();
      for (const body of bodies.slice(0, REQUESTS)) {
        const rows = body
          .trimEnd()
          .split("\n")
          .map((line) => {
            const payload = { trial: 1, ...(JSON.parse(line) as object) };
            return {
              submission_id: run!.submission_id,
              run_id: prepared.run_id,
              task_id: prepared.plan.task_set.task_ids[0]!,
              attempt_id: attempt.attempt_id,
              kind: "task.log",
              payload: sql.json(payload as never),
              bytes: Buffer.byteLength(JSON.stringify(payload)),
            };
          });
        await sql`insert into eval_task_events ${sql(rows as never)}`;
      }
      const floorSeconds = (performance.now() - floorStart) / 1000;

      const lines = REQUESTS * LINES_PER_REQUEST;
      return {
        baseline:
          "rows/s of one multi-row insert per batch into the same table (no HTTP, no redaction)",
        ratio: round(lines / routeSeconds / (lines / floorSeconds), 2),
        route_lines_per_second: round(lines / routeSeconds),
        floor_rows_per_second: round(lines / floorSeconds),
        lines_per_request: LINES_PER_REQUEST,
        requests: REQUESTS,
      };
    } finally {
      console.log = log;
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
