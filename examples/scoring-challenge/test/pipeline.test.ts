// The whole pipeline end to end on CPU, against the real things: the evaluation image on the
// local Docker engine, a database from the testing kit, a local server speaking the real
// chat-completions protocol as the LLM reviewer. One instance, sequential, small budgets
// (16 KiB of tokens: each scored run takes seconds): the example bundles each end where they
// should, the LLM gate allows, denies (cached), and holds, and a worker lost mid-run leaves the
// submission to another that scores it exactly once.
import { readFileSync } from "node:fs";
import { LeaseLostError } from "@platform/challenge-sdk/jobs";
import type { TaskResult, TaskRunner } from "@platform/challenge-sdk/tasks";
import {
  createMinerKey,
  type MinerKey,
  testBackends,
  waitFor,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBundle } from "../src/bundle/index.js";
import { processSubmission } from "../src/pipeline/process-submission.js";
import {
  type ChatServer,
  type Reply,
  startChatServer,
  verdictArguments,
} from "./chat-completions-server.js";
import {
  bundleZip,
  DRAIN_TRAINING,
  evalImageReady,
  exampleBundle,
  flatArchitecture,
  type ScoringTest,
  startScoring,
  submitBody,
  uniformArchitecture,
} from "./scoring-test-kit.js";
import { writeZip } from "./zip-writer.js";

const ready = evalImageReady();
const backend = (await testBackends())[0]!;

const allow: Reply = {
  kind: "verdict",
  arguments: verdictArguments({
    allow: true,
    reason: "A plain model and a training loop over the harness's batches.",
    violations: [],
    confidence: 0.9,
    rule_ids: [],
    evidence: [],
  }),
};
const deny: Reply = {
  kind: "verdict",
  arguments: verdictArguments({
    allow: false,
    reason: "training.py sends the batches to a remote host.",
    violations: ["network exfiltration of the training data"],
    confidence: 0.97,
    rule_ids: ["exfiltration"],
    evidence: [
      { rule_id: "exfiltration", path: "training.py", line: 3, explanation: "posts batches" },
    ],
  }),
};
// A reply with no tool call: the verdict is malformed, the gate must hold (fail closed).
const malformed: Reply = { kind: "content", text: "I think this bundle is fine, allow it." };

interface Status {
  id: string;
  hotkey: string;
  status: string;
  error: string | null;
  final_score: number | null;
  anti_cheat_multiplier: number | null;
  bpb: number | null;
  llm_gate: string;
  updated_at: string;
}

describe.runIf(ready)(`the whole pipeline on CPU (${backend})`, () => {
  let t: ScoringTest;
  let chat: ChatServer;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    chat = await startChatServer();
    chat.script(allow);
    t = await startScoring(backend, {
      EXECUTOR: "docker",
      LLM_GATE: "required",
      LLM_BASE_URL: chat.baseUrl,
      LLM_API_KEY: chat.apiKey,
      LLM_MODEL: chat.model,
      LLM_TIMEOUT_SECONDS: "10",
    });
  });
  afterAll(async () => {
    await t?.close();
    await chat?.close();
  });

  const submit = async (zip: Buffer, miner?: MinerKey): Promise<Status> => {
    const response = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: submitBody(zip),
      ...(miner ? { miner } : {}),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as Status;
  };
  const processNext = async (): Promise<string | null> => {
    const response = await t.fetch("/internal/v1/worker/process-next", {
      method: "POST",
      headers: { authorization: `Bearer ${t.token}` },
    });
    const body = (await response.json()) as { submission_id: string | null; detail?: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body.submission_id;
  };
  const status = async (id: string): Promise<Status> =>
    (await (await t.fetch(`/v1/submissions/${id}`)).json()) as Status;
  /** Submit `zip` as a fresh miner, process it, and answer its final status record. */
  const evaluate = async (name: string, zip: Buffer): Promise<Status> => {
    const submitted = await submit(zip, await createMinerKey());
    ids[name] = submitted.id;
    expect(await processNext()).toBe(submitted.id);
    return status(submitted.id);
  };
  const reviewsOf = (marker: string) =>
    chat.requests.filter((request) => request.body.messages[1]?.content.includes(marker)).length;
  const weights = async () =>
    (
      (await (
        await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders })
      ).json()) as { weights: Record<string, number> }
    ).weights;

  it("good.zip completes with a finite bpb and final_score = 1 / (1 + bpb)", async () => {
    const good = await evaluate("good", exampleBundle("good"));
    expect(good).toMatchObject({ status: "completed", error: null, anti_cheat_multiplier: 1 });
    expect(good.llm_gate).toBe("required");
    expect(Number.isFinite(good.bpb)).toBe(true);
    expect(good.bpb!).toBeGreaterThan(0);
    expect(good.bpb!).toBeLessThan(8); // it learns: better than the uniform 8 bits per byte
    expect(good.final_score).toBe(1 / (1 + good.bpb!));
    // The reviewer saw every file under its header, once.
    expect(chat.requests).toHaveLength(1);
    expect(chat.requests[0]!.body.messages[1]!.content).toContain("# file: architecture.py");
    // The harness's report is kept, and the bpb is the service's arithmetic on it.
    const [row] = await t.sql<{ report: { nll_nats: number; covered_bytes: number } }[]>`
      select report from submissions where id = ${good.id}::bigint`;
    expect(good.bpb).toBe(row!.report.nll_nats / (Math.LN2 * row!.report.covered_bytes));
    const levels = await t.sql<{ level: string; status: string; attempts: number }[]>`
      select level, status, attempts from eval_jobs where submission_id = ${good.id}::bigint order by id`;
    expect(levels).toEqual([
      { level: "gates", status: "completed", attempts: 1 },
      { level: "llm", status: "completed", attempts: 1 },
      { level: "run", status: "completed", attempts: 1 },
    ]);
    const board = (await (await t.fetch("/v1/leaderboard")).json()) as {
      entries: { hotkey: string; score: number; submission_id: string }[];
    };
    expect(board.entries).toEqual([
      { rank: 1, hotkey: good.hotkey, score: good.final_score, submission_id: good.id },
    ]);
    expect(await weights()).toEqual({ [good.hotkey]: 1 });
  });

  it("cheat-weights.zip completes with anti-cheat multiplier 0 (step-0 anomaly)", async () => {
    const cheat = await evaluate("cheat", exampleBundle("cheat-weights"));
    expect(cheat).toMatchObject({ status: "completed", anti_cheat_multiplier: 0, final_score: 0 });
    expect(cheat.error).toContain("step-0 anomaly");
    // It gets no weight: the good bundle keeps it all.
    expect(await weights()).toEqual({ [(await status(ids["good"]!)).hotkey]: 1 });
  });

  it("lookahead.zip is rejected, the error naming the look-ahead", async () => {
    const lookahead = await evaluate("lookahead", exampleBundle("lookahead"));
    expect(lookahead).toMatchObject({ status: "rejected", final_score: null });
    expect(lookahead.error).toContain("looks ahead");
  });

  it("broken.zip fails in its training stage", async () => {
    const broken = await evaluate("broken", exampleBundle("broken"));
    expect(broken).toMatchObject({ status: "failed", final_score: null });
    expect(broken.error).toMatch(/^train: /);
  });

  it("malicious.zip is rejected by the static gate naming the construct; the LLM is not asked", async () => {
    const asked = chat.requests.length;
    const malicious = await evaluate("malicious", exampleBundle("malicious"));
    expect(malicious.status).toBe("rejected");
    expect(malicious.error).toMatch(/^static gate: /);
    expect(malicious.error).toMatch(/import of (socket|os) is not allowed \(training\.py:\d+\)/);
    expect(chat.requests.length).toBe(asked);
  });

  it("duplicate.zip is rejected as a near-copy of good.zip after the static gate, before the LLM and the run", async () => {
    const asked = chat.requests.length;
    const duplicate = await evaluate("duplicate", exampleBundle("duplicate"));
    expect(duplicate.status).toBe("rejected");
    expect(duplicate.error).toContain(`near-copy of submission ${ids["good"]}`);
    expect(chat.requests.length).toBe(asked);
    const levels = await t.sql<{ level: string }[]>`
      select level from eval_jobs where submission_id = ${duplicate.id}::bigint`;
    expect(levels.map((row) => row.level)).toEqual(["gates"]);
    // The same ZIP again is an exact duplicate, refused without the gate's container run: the
    // earlier bundle's gate passed, and the gate reads only the bytes.
    const again = await evaluate("good-again", exampleBundle("good"));
    expect(again.error).toBe(`duplicate: this bundle is byte-for-byte submission ${ids["good"]}`);
    const [audit] = await t.sql<{ gate: Record<string, unknown> }[]>`
      select gate from submissions where id = ${again.id}::bigint`;
    expect(audit!.gate).not.toHaveProperty("static");
    expect(audit!.gate["duplicate"]).toMatchObject({ kind: "exact", submissionId: ids["good"] });
  });

  it("a near-copy that also breaks the static gate is refused for what it breaks, not as a duplicate", async () => {
    const opened = await openBundle(exampleBundle("duplicate"));
    if (!opened.ok) throw new Error(opened.error.message);
    const files = opened.value.files.map((file) => ({
      name: file.path,
      data: file.path === "training.py" ? `import os\n${file.data.toString("utf8")}` : file.data,
    }));
    const hostile = await evaluate("duplicate-and-hostile", writeZip(files));
    expect(hostile.status).toBe("rejected");
    expect(hostile.error).toMatch(/^static gate: import of os is not allowed \(training\.py:1\)/);
    const [row] = await t.sql<{ gate: { static: { ok: boolean } } }[]>`
      select gate from submissions where id = ${hostile.id}::bigint`;
    expect(row!.gate.static.ok).toBe(false);
  });

  it("a hand rewrite of good.zip is scored, then rejected as a copy of it by what it computes", async () => {
    const fixture = (file: string) =>
      readFileSync(new URL(`./fixtures/copies/rewrite/${file}`, import.meta.url), "utf8");
    const rewrite = await evaluate(
      "rewrite",
      bundleZip(fixture("architecture.py"), fixture("training.py")),
    );
    expect(rewrite.status).toBe("rejected");
    expect(rewrite.error).toContain(`computes what submission ${ids["good"]} computes`);
    const [row] = await t.sql<{ bpb: number; behaviour: { losses: number[] } }[]>`
      select (report ->> 'nll_nats')::float8 / (ln(2) * (report ->> 'covered_bytes')::float8) as bpb,
             report -> 'behaviour' as behaviour
      from submissions where id = ${rewrite.id}::bigint`;
    // The run happened (its report is kept for the audit), and it scored what good.zip scored.
    expect(row!.behaviour.losses.length).toBe(64);
    expect(row!.bpb).toBeCloseTo((await status(ids["good"]!)).bpb!, 2);
    // good.zip keeps the weight.
    expect(await weights()).toEqual({ [(await status(ids["good"]!)).hotkey]: 1 });
  });

  it("an LLM deny rejects the bundle; the same bundle again is denied from the cache", async () => {
    chat.script(deny);
    const tag = `deny-${Date.now()}`;
    const zip = bundleZip(uniformArchitecture(tag), DRAIN_TRAINING);
    const denied = await evaluate("denied", zip);
    expect(denied.status).toBe("rejected");
    expect(denied.error).toMatch(
      /^rejected by the LLM review \[exfiltration\]: training\.py sends/,
    );
    expect(reviewsOf(tag)).toBe(1);
    // A rejected bundle is no one's original: the same ZIP is reviewed again, from the cache.
    chat.script(allow);
    const again = await evaluate("denied-again", zip);
    expect(again.status).toBe("rejected");
    expect(again.error).toBe(denied.error);
    expect(reviewsOf(tag)).toBe(1);
    const [row] = await t.sql<{ gate: { llm: { cached: boolean } } }[]>`
      select gate from submissions where id = ${again.id}::bigint`;
    expect(row!.gate.llm.cached).toBe(true);
  });

  it("a malformed verdict holds the bundle, and process-next never re-runs a held one", async () => {
    chat.script(malformed);
    const tag = `held-${Date.now()}`;
    const held = await evaluate("held", bundleZip(uniformArchitecture(tag), DRAIN_TRAINING));
    expect(held.status).toBe("held");
    expect(held.error).toMatch(/^held: the LLM review could not decide/);
    // One attempt and one retry, then fail closed.
    expect(reviewsOf(tag)).toBe(2);
    expect(await processNext()).toBeNull();
    expect((await status(held.id)).status).toBe("held");
    const [level] = await t.sql<{ status: string }[]>`
      select status from eval_jobs where submission_id = ${held.id}::bigint and level = 'llm'`;
    expect(level!.status).toBe("failed");
    chat.script(allow);
  });

  it("a worker lost mid-run: its job is taken over, the bundle scored once, the LLM asked once", async () => {
    const tag = `lost-${Date.now()}`;
    // Not a near-copy of the bundles above (the held one still counts as an original).
    const submitted = await submit(bundleZip(flatArchitecture(tag), DRAIN_TRAINING));
    const { queue, pipeline } = t.state;
    // Worker A claims with a 1 s lease and never heartbeats (as if frozen, then killed).
    const a = (await queue.claim({ workerId: "worker-a", leaseSeconds: 1 }))!;
    expect(a.payload.submissionId).toBe(submitted.id);
    // A's scored run starts only once B has taken the job over, so the order is certain.
    let takenOver!: () => void;
    const tookOver = new Promise<void>((resolve) => {
      takenOver = resolve;
    });
    const held: TaskRunner = {
      kind: pipeline.runner.kind,
      close: async () => {},
      run: async (task, options) => {
        if (task.command?.includes("/opt/harness/run.py")) await tookOver;
        return pipeline.runner.run(task, options);
      },
    };
    const workerA = processSubmission({ ...pipeline, runner: held }, a.payload, {
      signal: new AbortController().signal,
      workerId: "worker-a",
      fence: (tx) => queue.fence(a, tx),
    }).then(
      (result) => result,
      (error: unknown) => error,
    );
    let settledA: unknown;
    void workerA.then((outcome) => {
      settledA = outcome;
    });
    await waitFor(
      async () => {
        if (settledA !== undefined) throw new Error(`worker A ended early: ${String(settledA)}`);
        const [run] = await t.sql<{ status: string }[]>`
        select status from eval_jobs where submission_id = ${submitted.id}::bigint and level = 'run'`;
        return run?.status === "running";
      },
      { timeoutMs: 30_000 },
    );
    await waitFor(async () => (await queue.get(a.id))!.leaseExpiresAt! < new Date(), {
      timeoutMs: 10_000,
    });
    // Worker B: process-next claims the expired job and takes it through the whole pipeline.
    const workerB = processNext();
    await waitFor(async () => (await queue.get(a.id))!.leaseOwner !== "worker-a", {
      timeoutMs: 10_000,
    });
    takenOver();
    expect(await workerB).toBe(submitted.id);
    expect(await workerA).toBeInstanceOf(LeaseLostError);

    const scored = await status(submitted.id);
    expect(scored).toMatchObject({ status: "completed", anti_cheat_multiplier: 1 });
    expect(scored.bpb).toBe(8); // the uniform model: exactly ln 256 nats per byte
    expect(scored.final_score).toBe(1 / 9);
    // A's late write changed nothing; the LLM review was not charged twice (cached verdict).
    expect((await status(submitted.id)).updated_at).toBe(scored.updated_at);
    expect(reviewsOf(tag)).toBe(1);
    expect(await queue.get(a.id)).toMatchObject({ status: "completed", attempts: 2 });
    const levels = await t.sql<{ level: string; attempts: number; status: string }[]>`
      select level, attempts, status from eval_jobs where submission_id = ${submitted.id}::bigint order by id`;
    expect(levels).toEqual([
      { level: "gates", attempts: 2, status: "completed" },
      { level: "llm", attempts: 2, status: "completed" },
      { level: "run", attempts: 2, status: "completed" },
    ]);
  });

  /** Take the next job through the pipeline with the scored run's result rewritten by `edit`. */
  const processWith = async (edit: (result: TaskResult, nonce: string) => TaskResult) => {
    const { queue, pipeline } = t.state;
    const job = (await queue.claim({ workerId: "worker-edit", leaseSeconds: 120 }))!;
    const edited: TaskRunner = {
      kind: pipeline.runner.kind,
      close: async () => {},
      run: async (task, options) => {
        const result = await pipeline.runner.run(task, options);
        if (!task.command?.includes("/opt/harness/run.py")) return result;
        return edit(result, task.env!["HARNESS_NONCE"]!);
      },
    };
    await processSubmission({ ...pipeline, runner: edited }, job.payload, {
      signal: new AbortController().signal,
      workerId: "worker-edit",
      fence: (tx) => queue.fence(job, tx),
    });
    return job.payload.submissionId;
  };

  // A third uniform model, not a near-copy of the uniform and flat ones above (a held bundle
  // still counts as an original).
  const unigramArchitecture = (tag: string) => `import torch as T


def build_model(ctx):
    return Constant(ctx.vocab_size)


class Constant(T.nn.Module):
    """A learned unigram over bytes, zero at first: ${tag}"""

    def __init__(self, n):
        super().__init__()
        self.logits = T.nn.Parameter(T.zeros(n))

    def forward(self, x):
        b, l = x.shape[0], x.shape[1]
        return self.logits.unsqueeze(0).unsqueeze(0).repeat(b, l, 1)
`;

  it("a run the watchdog stopped is never scored from its output, whatever it printed", async () => {
    const submitted = await submit(
      bundleZip(unigramArchitecture(`watchdog-${Date.now()}`), DRAIN_TRAINING),
    );
    // The real run's report is on stdout, complete and valid; the watchdog fired just after.
    const id = await processWith((result, nonce) => {
      expect(result.stdout).toContain(`HARNESS-REPORT ${nonce} {"ok":true`);
      return { ...result, timedOut: true };
    });
    expect(id).toBe(submitted.id);
    const record = await status(submitted.id);
    expect(record.error).toMatch(/exceeded its time limit/);
    expect(record).toMatchObject({ status: "failed", final_score: null, bpb: null });
  });

  it("a malformed report carrying the nonce is the bundle's failure, not a platform fault", async () => {
    const submitted = await submit(
      bundleZip(unigramArchitecture(`malformed-${Date.now()}`), DRAIN_TRAINING),
    );
    await processWith((result, nonce) => ({
      ...result,
      stdout: result.stdout.replace(`HARNESS-REPORT ${nonce} {`, `HARNESS-REPORT ${nonce} {{`),
    }));
    const record = await status(submitted.id);
    expect(record.error).toMatch(/unreadable report/);
    expect(record).toMatchObject({ status: "failed", final_score: null });
    // Failed once, for good: not requeued as infrastructure.
    const [run] = await t.sql<{ status: string; attempts: number }[]>`
      select status, attempts from eval_jobs where submission_id = ${submitted.id}::bigint and level = 'run'`;
    expect(run).toEqual({ status: "completed", attempts: 1 });
    const [row] = await t.sql<{ platform_failures: number }[]>`
      select platform_failures from submissions where id = ${submitted.id}::bigint`;
    expect(row!.platform_failures).toBe(0);
  });
});

// An image with no harness at all: its python3 runs and says nothing (.ci/test-images.sh).
const NO_HARNESS_IMAGE = "platform-test/silent-python:1";

describe.runIf(ready && evalImageReady(NO_HARNESS_IMAGE))(
  `the pipeline with LLM_GATE=off, without its image, without a harness (${backend})`,
  () => {
    let off: ScoringTest;
    let imageless: ScoringTest;
    let harnessless: ScoringTest;
    let unreviewed: ScoringTest;
    beforeAll(async () => {
      [off, imageless, harnessless, unreviewed] = await Promise.all([
        startScoring(backend, { EXECUTOR: "docker", LLM_GATE: "off" }),
        startScoring(backend, {
          EXECUTOR: "docker",
          LLM_GATE: "off",
          EVAL_IMAGE: "platform/scoring-eval:missing-for-the-tests",
        }),
        startScoring(backend, {
          EXECUTOR: "docker",
          LLM_GATE: "off",
          EVAL_IMAGE: NO_HARNESS_IMAGE,
        }),
        // The LLM gate required (the default) and no reviewer configured.
        startScoring(backend, { EXECUTOR: "docker", LLM_GATE: undefined }),
      ]);
    });
    afterAll(async () => {
      await off?.close();
      await imageless?.close();
      await harnessless?.close();
      await unreviewed?.close();
    });

    const processNext = (t: ScoringTest) =>
      t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: { authorization: `Bearer ${t.token}` },
      });

    it("records llm_gate=off on a bundle it let through", async () => {
      const crashing = `def build_model(ctx):\n    raise ValueError("no model today")\n`;
      const response = await off.signedFetch("/v1/submissions", {
        method: "POST",
        json: submitBody(bundleZip(crashing, DRAIN_TRAINING)),
      });
      const { id } = (await response.json()) as { id: string };
      expect(await (await processNext(off)).json()).toEqual({ submission_id: id });
      const record = (await (await off.fetch(`/v1/submissions/${id}`)).json()) as Status;
      expect(record).toMatchObject({ status: "failed", llm_gate: "off" });
      expect(record.error).toMatch(/^build_model: ValueError: no model today/);
      const [row] = await off.sql<{ gate: { llm: unknown } }[]>`
      select gate from submissions where id = ${id}::bigint`;
      expect(row!.gate.llm).toEqual({ outcome: "off" });
    });

    // The attack of issue 31: a NUL in an exception's message reached error.message, PostgreSQL
    // refused the outcome, and the job was retried as an internal error, a full run each time.
    it.each([
      ["chr(0) (the finding)", '"nul:" + chr(0) + ":end"', "train: ValueError: nul:\uFFFD:end"],
      [
        "chr(0), a lone surrogate and U+FFFF",
        '"a" + chr(0) + chr(0xD800) + chr(0xFFFF) + chr(0xDC00) + "z"',
        "train: ValueError: a\uFFFD\uFFFD\uFFFF\uFFFDz",
      ],
    ])(
      "a bundle whose train() raises with %s in its message settles failed in one attempt",
      async (_name, message, expected) => {
        const training = `def train(ctx):\n    raise ValueError(${message})\n`;
        const response = await off.signedFetch("/v1/submissions", {
          method: "POST",
          json: submitBody(bundleZip(uniformArchitecture(`nul-${Date.now()}`), training)),
        });
        const { id } = (await response.json()) as { id: string };
        const answer = await processNext(off);
        expect(answer.status, await answer.clone().text()).toBe(200);
        expect(await answer.json()).toEqual({ submission_id: id });
        const record = (await (await off.fetch(`/v1/submissions/${id}`)).json()) as Status;
        expect(record).toMatchObject({ status: "failed", error: expected, final_score: null });
        const levels = await off.sql<{ level: string; attempts: number; failures: number }[]>`
        select level, attempts, failures from eval_jobs where submission_id = ${id}::bigint order by id`;
        expect(levels).toEqual([
          { level: "gates", attempts: 1, failures: 0 },
          { level: "llm", attempts: 1, failures: 0 },
          { level: "run", attempts: 1, failures: 0 },
        ]);
        const [row] = await off.sql<{ report: { error: { message: string } } }[]>`
        select report from submissions where id = ${id}::bigint`;
        expect(`train: ${row!.report.error.message}`).toBe(expected);
      },
    );

    it("holds every bundle when the LLM gate is required but no reviewer is configured", async () => {
      const response = await unreviewed.signedFetch("/v1/submissions", {
        method: "POST",
        json: submitBody(
          bundleZip(uniformArchitecture(`unreviewed-${Date.now()}`), DRAIN_TRAINING),
        ),
      });
      const { id } = (await response.json()) as { id: string };
      expect(await (await processNext(unreviewed)).json()).toEqual({ submission_id: id });
      const record = (await (await unreviewed.fetch(`/v1/submissions/${id}`)).json()) as Status;
      expect(record).toMatchObject({ status: "held", llm_gate: "required", final_score: null });
      expect(record.error).toContain("no reviewer is configured");
    });

    it("answers 503 executor_unavailable when the image is missing: nothing lost, nothing scored", async () => {
      const response = await imageless.signedFetch("/v1/submissions", {
        method: "POST",
        json: submitBody(bundleZip(uniformArchitecture(`imageless-${Date.now()}`), DRAIN_TRAINING)),
      });
      const { id } = (await response.json()) as { id: string };
      const answer = await processNext(imageless);
      expect(answer.status).toBe(503);
      const body = (await answer.json()) as { code: string; detail: string };
      expect(body.code).toBe("executor_unavailable");
      expect(body.detail).toContain("image_unavailable");
      const record = (await (await imageless.fetch(`/v1/submissions/${id}`)).json()) as Status;
      expect(record).toMatchObject({ status: "pending", error: null, final_score: null });
    });

    it("a harness that gives no report is retried as infrastructure, and fails the bundle at the fifth", async () => {
      const t = harnessless;
      const send = async (architecture: string) => {
        const response = await t.signedFetch("/v1/submissions", {
          method: "POST",
          json: submitBody(bundleZip(architecture, DRAIN_TRAINING)),
        });
        return ((await response.json()) as { id: string }).id;
      };
      const first = await send(uniformArchitecture(`harnessless-${Date.now()}`));
      const answer = await processNext(t);
      expect(answer.status).toBe(503);
      expect(await answer.json()).toMatchObject({ code: "harness_error" });
      const [row] = await t.sql<{ status: string; platform_failures: number }[]>`
      select status, platform_failures from submissions where id = ${first}::bigint`;
      expect(row).toEqual({ status: "pending", platform_failures: 1 });
      const [gates] = await t.sql<{ failures: number; last_error: string }[]>`
      select failures, last_error from eval_jobs where submission_id = ${first}::bigint and level = 'gates'`;
      expect(gates!.failures).toBe(1);
      expect(gates!.last_error).toMatch(/^harness_error: gate\.py gave no usable report/);

      // A bundle the platform already failed on four times (the first is waiting out its backoff).
      const second = await send(flatArchitecture(`harnessless-${Date.now()}`));
      await t.sql`update submissions set platform_failures = 4 where id = ${second}::bigint`;
      expect(await (await processNext(t)).json()).toEqual({ submission_id: second });
      const record = (await (await t.fetch(`/v1/submissions/${second}`)).json()) as Status;
      expect(record.status).toBe("failed");
      expect(record.error).toMatch(
        /^the platform could not evaluate this bundle: 5 attempts failed on the platform's side \(the last: harness_error: gate\.py gave no usable report/,
      );
    });
  },
);
