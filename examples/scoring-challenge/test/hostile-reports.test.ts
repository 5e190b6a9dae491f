// No bundle can make the service loop (issue 31, item 4). A bundle's text reaches the database
// through the run's report (an exception's message, above all): a NUL or a lone surrogate in it
// made PostgreSQL refuse the outcome's write, the job was retried as an internal error up to
// 1000 times, each a full container run, and the submission never settled.
//
// Here the report parser and the outcome writer take hostile output, on both databases, through
// the real process-next route, the real job queue and the real pipeline. Only the container is
// scripted: its stdout BYTES are what a hostile run controls, so the runner below turns bytes
// into the task's result with the SDK's own OutputCapture (Docker's framing, UTF-8 decoding, the
// 1 MiB cap), as both real runners do. Each hostile report settles the submission in one attempt.
// The platform's own failures are retried a handful of times, counted in the health entry.
import { OutputCapture } from "@platform/challenge-sdk/sandbox";
import {
  type Task,
  type TaskResult,
  type TaskRunner,
  TaskUnavailableError,
} from "@platform/challenge-sdk/tasks";
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRunReport, RunReport } from "../src/harness-report.js";
import type { RunJson } from "../src/harness-task.js";
import { MAX_PLATFORM_FAILURES } from "../src/pipeline/pipeline-context.js";
import { MAX_ERROR_CHARS } from "../src/pipeline/record-outcome.js";
import {
  bundleZip,
  DRAIN_TRAINING,
  flatArchitecture,
  type ScoringTest,
  startScoring,
  submitBody,
  uniformArchitecture,
} from "./scoring-test-kit.js";

const OUTPUT_CAP = 1024 * 1024;

/** A report as run.py writes it for a run that stopped in `train`, echoing `run`. */
function failedReport(run: RunJson, message: unknown): Record<string, unknown> {
  return {
    ok: false,
    error: { stage: "train", message },
    harness_version: "2",
    stream_sha256: run.stream_sha256,
    vocab_size: run.vocab_size,
    sequence_length: run.sequence_length,
    batch_size: run.batch_size,
    batches: 0,
    tokens: 0,
    covered_bytes: 0,
    nll_nats: null,
    first_batch_loss: null,
    nonfinite_batches: 0,
    param_count: 1,
    steps: 0,
    causality: { ok: true, max_delta: 0, checked_positions: 0, checked_rows: 0 },
    holdout: { covered_bytes: 0, nll_nats: null },
    device: "cpu",
    seconds: 0.5,
  };
}

/**
 * A report line's bytes: `HARNESS-REPORT <nonce> <json>`, the JSON as python's json.dumps writes
 * it (ASCII); `extra` is JSON text spliced in as one more field (too deep for JSON.stringify).
 */
function reportLine(nonce: string, report: object, extra?: string): Buffer {
  let json = JSON.stringify(report);
  if (extra !== undefined) json = `${json.slice(0, -1)},"extra":${extra}}`;
  json = json.replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return Buffer.from(`HARNESS-REPORT ${nonce} ${json}\n`, "latin1");
}

/** One hostile run: its stdout bytes, given run.json and the nonce. */
interface HostileRun {
  name: string;
  stdout: (run: RunJson, nonce: string) => Buffer;
  /** The status it settles with, and what its error says. */
  status: "failed" | "completed";
  error: RegExp | null;
}

/** JSON text nested `depth` objects (and as many arrays) deep, NUL keys all the way down. */
const deep = (depth: number): string =>
  `${'{"\\u0000":['.repeat(depth)}"\\u0000bottom"${"]}".repeat(depth)}`;

const HOSTILE: HostileRun[] = [
  {
    name: "an exception message with NUL (the finding)",
    stdout: (run, nonce) => reportLine(nonce, failedReport(run, "ValueError: a\u0000b")),
    status: "failed",
    error: /^train: ValueError: a\uFFFDb$/,
  },
  {
    name: "lone surrogates, high and low, and a reversed pair",
    stdout: (run, nonce) => reportLine(nonce, failedReport(run, "x\uD800y\uDC00z\uDE00\uD83D")),
    status: "failed",
    error: /^train: x\uFFFDy\uFFFDz\uFFFD\uFFFD$/,
  },
  {
    name: "U+FFFF and the other noncharacters, kept",
    stdout: (run, nonce) => reportLine(nonce, failedReport(run, "\uFFFF\uFFFE\u{10FFFF}")),
    status: "failed",
    error: /^train: \uFFFF\uFFFE\u{10FFFF}$/u,
  },
  {
    name: "a huge message (900 KB), cut on the record",
    stdout: (run, nonce) => reportLine(nonce, failedReport(run, `\u0000${"m".repeat(900_000)}`)),
    status: "failed",
    error: /^train: \uFFFDm+…$/,
  },
  {
    name: "a message that is not a string (a nested object)",
    stdout: (run, nonce) => reportLine(nonce, failedReport(run, { "\u0000": ["\uD800"] })),
    status: "failed",
    error: /unreadable report/,
  },
  {
    name: "fields nested 50,000 deep beside a valid report, with NUL keys",
    stdout: (run, nonce) =>
      reportLine(nonce, { ...failedReport(run, "boom"), "\u0000": "\u0000" }, deep(50_000)),
    status: "failed",
    error: /^train: boom$/,
  },
  {
    name: "invalid UTF-8 bytes in the report line and around it",
    stdout: (run, nonce) =>
      Buffer.concat([
        Buffer.from([0xff, 0xfe, 0xc0, 0xed, 0xa0, 0x80, 0x0a]),
        Buffer.from(`HARNESS-REPORT ${nonce} `),
        Buffer.from(
          JSON.stringify(failedReport(run, "@")).replace('"@"', '"\xff\xed\xa0\x80"'),
          "latin1",
        ),
        Buffer.from("\n"),
      ]),
    status: "failed",
    error: /^train: \uFFFD+$/,
  },
  {
    name: "a report line that is not JSON",
    stdout: (_run, nonce) => Buffer.from(`HARNESS-REPORT ${nonce} {"ok": tru\u0000e\n`, "latin1"),
    status: "failed",
    error: /unreadable report: the harness report is malformed: its JSON does not parse/,
  },
  {
    name: "NUL bytes and no report at all",
    stdout: () => Buffer.from("\u0000\u0000 HARNESS-REPORT \u0000 {}\n", "latin1"),
    status: "failed",
    error: /ended without a report/,
  },
  {
    name: "output past the 1 MiB cap, the report cut off",
    stdout: (run, nonce) =>
      Buffer.concat([
        Buffer.alloc(OUTPUT_CAP - 10, "x"),
        reportLine(nonce, failedReport(run, "late")),
      ]),
    status: "failed",
    error: /ended without a report/,
  },
];

describe("parseRunReport on hostile output", () => {
  const run = {
    stream_sha256: "0".repeat(64),
    vocab_size: 256,
    sequence_length: 128,
    batch_size: 8,
  } as RunJson;
  it.each(HOSTILE.map((c) => [c.name, c] as const))(
    "%s: answers a report or a reason, never throws, keeps only the schema's fields",
    (_name, hostile) => {
      const bytes = hostile.stdout(run, "nonce-123456");
      const capture = new OutputCapture(OUTPUT_CAP);
      capture.writeStream("stdout", bytes);
      capture.end();
      const { stdout, stdoutTruncated } = capture.result();
      const parsed = parseRunReport(stdout, "nonce-123456", { truncated: stdoutTruncated });
      if (!parsed.ok) {
        expect(["report_missing", "report_malformed"]).toContain(parsed.error.code);
        return;
      }
      for (const key of Object.keys(parsed.report))
        expect(RunReport.properties).toHaveProperty(key);
      expect(() => JSON.stringify(parsed.report)).not.toThrow();
    },
  );
});

/** A runner whose gate passes and whose scored run writes `stdout` (or throws `error`). */
function scriptedRunner(
  kind: TaskRunner["kind"],
  script: { stdout?: HostileRun["stdout"]; error?: () => Error },
): TaskRunner & { runs: number } {
  const runner = {
    kind,
    runs: 0,
    close: async () => {},
    run: async (task: Task): Promise<TaskResult> => {
      const nonce = task.env!["HARNESS_NONCE"]!;
      if (script.error) throw script.error();
      let bytes: Buffer;
      if (task.command?.includes("/opt/harness/gate.py")) {
        bytes = Buffer.from(`HARNESS-REPORT ${nonce} {"ok":true,"files":2,"violations":[]}\n`);
      } else {
        runner.runs++;
        const file = task.files!.find((f) => f.path === "run.json")!;
        const run = JSON.parse(Buffer.from(file.contentBase64, "base64").toString()) as RunJson;
        bytes = script.stdout!(run, nonce);
      }
      // Docker's multiplexed framing, read as the runners read it.
      const capture = new OutputCapture(OUTPUT_CAP);
      const header = Buffer.alloc(8);
      header[0] = 1;
      header.writeUInt32BE(bytes.length, 4);
      capture.write(Buffer.concat([header, bytes]));
      capture.end();
      return {
        containerName: `scripted-${task.jobId}`,
        exitCode: 0,
        timedOut: false,
        oomKilled: false,
        durationMs: 1,
        ...capture.result(),
      };
    },
  };
  return runner;
}

interface EvalJob {
  submission_id: string;
  level: string;
  status: string;
  attempts: number;
  failures: number;
  last_error: string | null;
}

describe.each(await testBackends())("hostile output through the service (%s)", (backend) => {
  let t: ScoringTest;
  beforeAll(async () => {
    t = await startScoring(backend, { EXECUTOR: "docker", LLM_GATE: "off" });
  });
  afterAll(() => t?.close());

  const submit = async (architecture: string, metadata = {}) => {
    const response = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: submitBody(bundleZip(architecture, DRAIN_TRAINING), "bundle.zip", metadata),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  };
  const processNext = () =>
    t.fetch("/internal/v1/worker/process-next", {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}` },
    });
  const record = async (id: string) =>
    (await (await t.fetch(`/v1/submissions/${id}`)).json()) as { status: string; error: string };
  const healthOf = async (id: string) => {
    const rows = (await (await t.fetch("/v1/health/eval-jobs?limit=200")).json()) as EvalJob[];
    return rows.filter((row) => row.submission_id === id);
  };
  const jobOf = async (id: string) => {
    const [row] = await t.sql<
      { job_id: string }[]
    >`select job_id from submissions where id = ${id}::bigint`;
    return (await t.state.queue.get(row!.job_id))!;
  };
  const useRunner = (runner: TaskRunner) => {
    t.state.pipeline.runner = runner;
  };

  it.each(HOSTILE.map((c) => [c.name, c] as const))(
    "%s: settles in one attempt",
    async (_name, hostile) => {
      const runner = scriptedRunner("docker", { stdout: hostile.stdout });
      useRunner(runner);
      const id = await submit(uniformArchitecture(`hostile-${Date.now()}`));
      const answer = await processNext();
      expect(answer.status, await answer.clone().text()).toBe(200);
      expect(await answer.json()).toEqual({ submission_id: id });
      const settled = await record(id);
      expect(settled.status).toBe(hostile.status);
      if (hostile.error) expect(settled.error).toMatch(hostile.error);
      expect(settled.error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
      expect(runner.runs).toBe(1);
      expect(await jobOf(id)).toMatchObject({ status: "completed", attempts: 1 });
      const run = (await healthOf(id)).find((row) => row.level === "run");
      expect(run).toMatchObject({
        status: "completed",
        attempts: 1,
        failures: 0,
        last_error: null,
      });
    },
  );

  it("a valid report carrying hostile extra fields is scored, the extras never stored", async () => {
    useRunner(
      scriptedRunner("docker", {
        stdout: (run, nonce) => {
          const rows = Math.floor(run.token_budget / run.sequence_length);
          const covered = rows * (run.sequence_length - 1);
          return reportLine(
            nonce,
            {
              ...failedReport(run, null),
              ok: true,
              error: null,
              batches: rows / run.batch_size,
              tokens: rows * run.sequence_length,
              covered_bytes: covered,
              nll_nats: covered * Math.log(256),
              first_batch_loss: Math.log(256),
              steps: rows / run.batch_size,
              holdout: { covered_bytes: 10, nll_nats: 10 * Math.log(256) },
              note: "\u0000\uD800",
            },
            deep(1000),
          );
        },
      }),
    );
    const id = await submit(flatArchitecture(`extras-${Date.now()}`));
    expect(await (await processNext()).json()).toEqual({ submission_id: id });
    expect(await record(id)).toMatchObject({ status: "completed", error: null });
    const [row] = await t.sql<{ report: Record<string, unknown> }[]>`
      select report from submissions where id = ${id}::bigint`;
    expect(row!.report).not.toHaveProperty("note");
    expect(row!.report).not.toHaveProperty("extra");
  });

  it("metadata with NUL and lone surrogates is accepted and stored cleaned", async () => {
    const id = await submit(uniformArchitecture(`metadata-${Date.now()}`), {
      "k\u0000": ["v\u0000", { deep: "\uD800" }],
    });
    const [row] = await t.sql<{ metadata: unknown }[]>`
      select metadata from submissions where id = ${id}::bigint`;
    expect(row!.metadata).toEqual({ "k\uFFFD": ["v\uFFFD", { deep: "\uFFFD" }] });
    // Settle it, so the next tests find the queue empty.
    useRunner(
      scriptedRunner("docker", { stdout: (run, n) => reportLine(n, failedReport(run, "x")) }),
    );
    expect(await (await processNext()).json()).toEqual({ submission_id: id });
  });

  it(`a failing platform is retried ${MAX_PLATFORM_FAILURES - 1} times, counted in the health entry, then the bundle fails saying so`, async () => {
    // The harness's own fault: a report of stage `harness`, with hostile text in it.
    const runner = scriptedRunner("docker", {
      stdout: (run, nonce) => {
        const report = failedReport(run, "disk on fire \u0000\uD800");
        return reportLine(nonce, {
          ...report,
          error: { stage: "harness", message: "disk on fire \u0000\uD800" },
        });
      },
    });
    useRunner(runner);
    const id = await submit(uniformArchitecture(`platform-${Date.now()}`));
    for (let attempt = 1; attempt < MAX_PLATFORM_FAILURES; attempt++) {
      const answer = await processNext();
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ code: "harness_error" });
      expect(await record(id)).toMatchObject({ status: "pending", error: null });
      const run = (await healthOf(id)).find((row) => row.level === "run")!;
      expect(run).toMatchObject({ status: "pending", attempts: attempt, failures: attempt });
      expect(run.last_error).toBe("harness_error: the harness failed: disk on fire \uFFFD\uFFFD");
      // The backoff is the queue's; make the retry due now.
      await t.sql`update sdk_jobs set run_at = now() where id = ${(await jobOf(id)).id}::bigint`;
    }
    expect(await (await processNext()).json()).toEqual({ submission_id: id });
    const settled = await record(id);
    expect(settled.status).toBe("failed");
    expect(settled.error).toBe(
      `the platform could not evaluate this bundle: ${MAX_PLATFORM_FAILURES} attempts failed on ` +
        "the platform's side (the last: harness_error: the harness failed: disk on fire \uFFFD\uFFFD); " +
        "this is not a verdict on the bundle, submit it again",
    );
    expect(runner.runs).toBe(MAX_PLATFORM_FAILURES);
    const run = (await healthOf(id)).find((row) => row.level === "run")!;
    expect(run).toMatchObject({ status: "completed", failures: MAX_PLATFORM_FAILURES });
    expect(await jobOf(id)).toMatchObject({ status: "completed", attempts: MAX_PLATFORM_FAILURES });
  });

  it("an outcome the database keeps refusing is retried a handful of times, then failed plainly", async () => {
    // The database itself refuses any outcome whose error mentions "refuse" (a trigger), as it
    // would a text no cleaning foresaw; its refusal says "refuse" too, so the give-up sentence
    // quoting it is refused as well, and only the plain last resort lands.
    await t.sql.unsafe(`
      create function refuse_outcome() returns trigger language plpgsql as $$
      begin
        if new.error like '%refuse%' then raise exception 'the database refuses this outcome'; end if;
        return new;
      end $$;
      create trigger refuse_outcome before update on submissions
        for each row execute function refuse_outcome();`);
    try {
      const runner = scriptedRunner("docker", {
        stdout: (run, nonce) => reportLine(nonce, failedReport(run, "please refuse me")),
      });
      useRunner(runner);
      const id = await submit(uniformArchitecture(`refused-${Date.now()}`));
      for (let attempt = 1; attempt < MAX_PLATFORM_FAILURES; attempt++) {
        const answer = await processNext();
        expect(answer.status).toBe(503);
        expect(await answer.json()).toMatchObject({ code: "internal_error" });
        const run = (await healthOf(id)).find((row) => row.level === "run")!;
        expect(run).toMatchObject({ failures: attempt });
        expect(run.last_error).toMatch(/^internal_error: the database refuses this outcome/);
        await t.sql`update sdk_jobs set run_at = now() where id = ${(await jobOf(id)).id}::bigint`;
      }
      expect(await (await processNext()).json()).toEqual({ submission_id: id });
      const settled = await record(id);
      expect(settled.status).toBe("failed");
      expect(settled.error).toBe(
        `the platform could not evaluate this bundle: ${MAX_PLATFORM_FAILURES} attempts failed on the platform's side; this is not a verdict on the bundle, submit it again`,
      );
      expect(runner.runs).toBe(MAX_PLATFORM_FAILURES);
      expect(await jobOf(id)).toMatchObject({
        status: "completed",
        attempts: MAX_PLATFORM_FAILURES,
      });
    } finally {
      await t.sql.unsafe(
        "drop trigger refuse_outcome on submissions; drop function refuse_outcome();",
      );
    }
  });

  it("an executor that is not there is waited for: counted in the health entry, never against the bundle", async () => {
    useRunner(
      scriptedRunner("docker", {
        error: () => new TaskUnavailableError("docker_unavailable", "no engine answers"),
      }),
    );
    const id = await submit(uniformArchitecture(`waiting-${Date.now()}`));
    const answer = await processNext();
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ code: "executor_unavailable" });
    const [row] = await t.sql<{ status: string; platform_failures: number }[]>`
      select status, platform_failures from submissions where id = ${id}::bigint`;
    expect(row).toEqual({ status: "pending", platform_failures: 0 });
    const gates = (await healthOf(id)).find((r) => r.level === "gates")!;
    expect(gates).toMatchObject({ status: "pending", failures: 1 });
    expect(gates.last_error).toMatch(/^executor_unavailable: the executor could not run/);
  });
});
