// The reference eval worker end to end: the service started on a real database and socket, a
// reference agent submitted, reviewed, launched and prepared by its miner, then the worker run as
// the Eval VM would run it (`node dist/eval-worker.js`) with only the run token, the miner's
// signed telemetry grant and the challenge URL. Every trial runs in a real container of the
// agent image; the score comes out of the service's own checks of the attested result.
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dockerTaskRunner } from "@platform/challenge-sdk/tasks";
import { createMinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalPlan } from "../../src/eval/eval-plan.js";
import { signTelemetryGrant, type TelemetryGrant } from "../../src/eval/telemetry-grant.js";
import { replayRun } from "../../src/eval-worker/replay-run.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { grantFor, type PreparedRun, preparedRun } from "../eval/eval-kit.js";
import {
  AGENT_IMAGE,
  type AgentName,
  agentArchive,
  agentFiles,
  preparedRunOf,
  WORKER,
} from "./eval-worker-kit.js";

const EVAL_WORKER_IMAGE = "platform/agent-eval-eval-worker:local";

interface WorkerRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], env: Record<string, string>): Promise<WorkerRun> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, timeout: 300_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const [backend] = await testBackends();

describe(`the reference eval worker (on ${backend})`, () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    if (!existsSync(WORKER)) {
      throw new Error(
        `${WORKER} is missing: build it first (npm run build -w @platform/agent-eval-challenge; CI builds before testing)`,
      );
    }
    const inspected = await run("docker", ["image", "inspect", AGENT_IMAGE], {});
    if (inspected.code !== 0) {
      throw new Error(
        `the image ${AGENT_IMAGE} is missing: build it with ` +
          "`bash examples/agent-eval-challenge/agent-image/build.sh` (CI builds it)",
      );
    }
    // One miner may submit several agents here: the submission window is not under test.
    t = await startAgentEval(backend!, { SUBMISSION_WINDOW_SECONDS: "0" });
  }, 60_000);
  afterAll(() => t?.close());

  const runWorker = (
    prepared: PreparedRun,
    grant: TelemetryGrant = grantFor(prepared),
    options: { worker?: string; env?: Record<string, string> } = {},
  ) =>
    run(process.execPath, [options.worker ?? WORKER], {
      EVAL_RUN_TOKEN: prepared.runToken,
      TELEMETRY_GRANT: JSON.stringify(grant),
      CHALLENGE_URL: t.url,
      EVAL_TRIAL_TIMEOUT_SECONDS: "30",
      ...options.env,
    });

  const runRow = async (prepared: PreparedRun) => {
    const [row] = await t.sql<{ state: string; score: number | null }[]>`
      select state, score from eval_runs where id = ${prepared.runId}`;
    return row!;
  };

  /** The worker printed every step under its prefix, and never a token or the grant. */
  function expectClean(prepared: PreparedRun, result: WorkerRun, grant: TelemetryGrant) {
    const lines = result.stdout.split("\n").filter(Boolean);
    expect(
      lines.every((line) => line.startsWith("eval-worker: ")),
      result.stdout,
    ).toBe(true);
    for (const secret of [prepared.runToken, grant.signature, grant.nonce]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  }

  /**
   * agents/<name> submitted, prepared and run by the worker, once per file: the replay test reads
   * the same accepted run of agents/half that its evaluation test checked (each test still runs
   * alone: the first to ask runs it).
   */
  const evaluations = new Map<
    AgentName,
    Promise<{ zip: Buffer; prepared: PreparedRun; grant: TelemetryGrant; result: WorkerRun }>
  >();
  const evaluated = (name: AgentName) => {
    let evaluation = evaluations.get(name);
    if (!evaluation) {
      evaluation = (async () => {
        const zip = agentArchive(agentFiles(name));
        const prepared = await preparedRunOf(t, zip);
        const grant = grantFor(prepared);
        return { zip, prepared, grant, result: await runWorker(prepared, grant) };
      })();
      evaluations.set(name, evaluation);
    }
    return evaluation;
  };

  it.each<[AgentName, number]>([
    ["good", 1],
    ["half", 0.5],
    ["escape", 0],
  ])(
    "evaluates agents/%s: the result is receipted with score %s",
    async (name, score) => {
      const { prepared, grant, result } = await evaluated(name);
      expect(prepared.plan.trials).toBeGreaterThan(0);
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain("eval-worker: result receipted (HTTP 202)");
      expect(result.stdout).toContain(`eval-worker: done: score ${score}`);
      expectClean(prepared, result, grant);
      // Telemetry is best effort in the worker; here every event and attempt must land.
      expect(result.stdout).not.toMatch(/refused|no answer/);
      const row = await runRow(prepared);
      expect(row.score).toBe(score);
      if (score > 0) expect(row.state).toBe("accepted");

      // Every trial had its attempt, and the container's lines reached its events.
      const tasks = prepared.plan.task_set.task_ids.length;
      const [attempts] = await t.sql<{ count: number }[]>`
        select count(*)::int as count from eval_attempts where run_id = ${prepared.runId}`;
      expect(attempts!.count).toBe(tasks * prepared.plan.trials);
      const events = await t.sql<
        { kind: string; task_id: string; seq: number | null; payload: unknown }[]
      >`
        select kind, task_id, seq, payload from eval_task_events
        where run_id = ${prepared.runId} order by id`;
      // Per task: running and progress for each trial, then finished, seq 1, 2, 3...
      for (const taskId of prepared.plan.task_set.task_ids) {
        const seqs = events
          .filter((event) => event.task_id === taskId && event.kind !== "task.log")
          .map((event) => event.seq);
        expect(seqs).toEqual(
          Array.from({ length: 2 * prepared.plan.trials + 1 }, (_, index) => index + 1),
        );
      }
      const statuses = events.filter((event) => event.kind === "task.status");
      expect(
        statuses.filter((event) => JSON.stringify(event.payload).includes('"finished"')),
      ).toHaveLength(tasks);
      const logs = JSON.stringify(events.filter((event) => event.kind === "task.log"));
      if (name === "good") expect(logs).toContain("solving uppercase");
      // The telemetry never carried the token, and never a score.
      expect(JSON.stringify(events)).not.toContain(prepared.runToken);
    },
    240_000,
  );

  it("scores an agent with no agent.py 0 without running it, and still posts the result", async () => {
    // eval-kit's submission is an empty ZIP: nothing can run.
    const prepared = await preparedRun(t);
    const result = await runWorker(prepared);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain("cannot run (no_entry_point): every trial scores 0");
    expect(result.stdout).toContain("eval-worker: done: score 0");
    expect((await runRow(prepared)).score).toBe(0);
  }, 120_000);

  it("exits 1 with a grant another key signed: no session, nothing run, no result", async () => {
    const prepared = await preparedRunOf(t, agentArchive(agentFiles("good")));
    const stranger = await createMinerKey();
    const forged = signTelemetryGrant(stranger, {
      runId: prepared.runId,
      planSha256: prepared.planDigest,
    });
    const result = await runWorker(prepared, forged);
    expect(result.code, result.stdout).toBe(1);
    expect(result.stdout).toContain("failed (telemetry_refused)");
    expect(result.stdout).not.toContain("task uppercase trial");
    expect(await runRow(prepared)).toEqual({ state: "prepared", score: null });
  }, 120_000);

  it("exits 1 before running anything when its task families are not the plan's", async () => {
    const prepared = await preparedRunOf(t, agentArchive(agentFiles("good")));
    // The same bundle with one reference family's instructions changed: another revision.
    const copy = mkdtempSync(join(tmpdir(), "eval-worker-copy-"));
    try {
      const bundle = readFileSync(WORKER, "utf8");
      const instructions = "Write the lines of the input in reverse order, one per line.";
      expect(bundle).toContain(instructions);
      mkdirSync(join(copy, "dist"));
      writeFileSync(
        join(copy, "dist", "eval-worker.js"),
        bundle.replace(instructions, "Write the lines backwards."),
      );
      cpSync(join(WORKER, "../../dev-keys"), join(copy, "dev-keys"), { recursive: true });
      const result = await runWorker(prepared, grantFor(prepared), {
        worker: join(copy, "dist", "eval-worker.js"),
      });
      expect(result.code, result.stdout).toBe(1);
      expect(result.stdout).toContain("failed (task_set_mismatch)");
      expect(result.stdout).not.toMatch(/task \S+ trial/);
      expect(await runRow(prepared)).toEqual({ state: "prepared", score: null });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);

  it("replays an accepted run: the same instances, the same checks, the same score", async () => {
    const { zip, prepared, result } = await evaluated("half");
    expect(result.code, result.stdout).toBe(0);
    expect(await runRow(prepared)).toEqual({ state: "accepted", score: 0.5 });
    const printed = [
      ...result.stdout.matchAll(/task (\S+) trial (\d+): .*, input ([0-9a-f]{16}),/g),
    ];
    expect(printed).toHaveLength(prepared.plan.task_set.task_ids.length * prepared.plan.trials);

    const request = await t.fetch(`/internal/v1/replay-audits/${prepared.runId}/request`, {
      headers: t.internalHeaders,
    });
    expect(request.status).toBe(200);
    const runner = dockerTaskRunner({ pull: false });
    try {
      const replayed = await replayRun({
        request: (await request.json()) as { plan: EvalPlan; instance_seed: string },
        agentZip: zip,
        runner,
        image: AGENT_IMAGE,
        timeoutSeconds: 30,
      });
      // Every trial drew the input the evaluator drew (its printed sha256 prefix).
      for (const [, task, trial, input] of printed) {
        expect(replayed.inputs[`${task}/${trial}`]?.slice(0, 16)).toBe(input);
      }
      const posted = await t.fetch(`/internal/v1/replay-audits/${prepared.runId}/result`, {
        method: "POST",
        headers: { ...t.internalHeaders, "content-type": "application/json" },
        body: JSON.stringify({ audit_id: "replay-test-audit-0001", tasks: replayed.tasks }),
      });
      const text = await posted.text();
      expect(posted.status, text).toBe(200);
      expect(JSON.parse(text)).toMatchObject({
        attested_score: 0.5,
        replay_score: 0.5,
        delta: 0,
        exceeds_tolerance: false,
      });
    } finally {
      await runner.close();
    }
  }, 240_000);

  it("runs from its image (docker run --network host, the engine's socket), as an Eval VM would", async () => {
    const inspected = await run("docker", ["image", "inspect", EVAL_WORKER_IMAGE], {});
    if (inspected.code !== 0) {
      throw new Error(
        `the image ${EVAL_WORKER_IMAGE} is missing: build it with ` +
          "`npm run build -w @platform/agent-eval-challenge && bash examples/agent-eval-challenge/eval-worker-image/build.sh` (CI builds it)",
      );
    }
    const prepared = await preparedRunOf(t, agentArchive(agentFiles("good")));
    const grant = grantFor(prepared);
    const socket = "/var/run/docker.sock";
    const result = await run(
      "docker",
      [
        "run",
        "--rm",
        "--network",
        "host",
        // The worker's user reaches the engine through the socket's group, nothing more.
        "-v",
        `${socket}:${socket}`,
        "--group-add",
        String(statSync(socket).gid),
        "-e",
        "EVAL_RUN_TOKEN",
        "-e",
        "TELEMETRY_GRANT",
        "-e",
        "CHALLENGE_URL",
        EVAL_WORKER_IMAGE,
      ],
      {
        EVAL_RUN_TOKEN: prepared.runToken,
        TELEMETRY_GRANT: JSON.stringify(grant),
        CHALLENGE_URL: t.url,
      },
    );
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain("eval-worker: done: score 1");
    expectClean(prepared, result, grant);
    expect(await runRow(prepared)).toEqual({ state: "accepted", score: 1 });
  }, 240_000);

  it("exits 1 with a bad environment, naming the variable and never its value", async () => {
    const result = await run(process.execPath, [WORKER], {
      EVAL_RUN_TOKEN: "not-a-token.secret-part",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("EVAL_RUN_TOKEN is not a run token");
    expect(result.stdout).toContain("TELEMETRY_GRANT is required");
    expect(result.stdout).not.toContain("secret-part");
  });
});
