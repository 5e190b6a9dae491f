// Every route of the spec over a real socket, on PGlite and on PostgreSQL: authentication,
// validation (422), limits (413), the bundle refusals at submit, the bridge's identity rules,
// the reads (status, history, leaderboard ties, epochs, eval jobs, GPU summary, the legacy
// listings), held expiry and release, and process-next with no executor reachable (503,
// nothing lost). No container runs here: the executor is a broker that does not answer.
import { createHash } from "node:crypto";
import type { TSchema } from "@platform/challenge-sdk";
import { PLATFORM_HEADERS } from "@platform/challenge-sdk/proxy-contract";
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SUBMISSION_BODY_LIMIT } from "../src/accept-submission.js";
import {
  Architectures,
  CurrentEpoch,
  Epochs,
  EvalJobs,
  GpuStatus,
  History,
  Leaderboard,
  ProcessNextResult,
  SubmissionStatus,
  TrainingVariants,
} from "../src/api-schemas.js";
import { MAX_BASE64_CHARS, MAX_ZIP_BYTES, openBundle } from "../src/bundle/index.js";
import { InfrastructureError } from "../src/pipeline/infrastructure-error.js";
import { scoredRunStage } from "../src/pipeline/scored-run-stage.js";
import {
  bundleZip,
  DRAIN_TRAINING,
  type ScoringTest,
  startScoring,
  submitBody,
  uniformArchitecture,
} from "./scoring-test-kit.js";
import { minimalBundle, writeZip } from "./zip-writer.js";

function expectSchema(schema: TSchema, value: unknown): void {
  const check = TypeCompiler.Compile(schema);
  const problems = [...check.Errors(value)].slice(0, 3).map((e) => `${e.path}: ${e.message}`);
  expect(problems, JSON.stringify(value).slice(0, 400)).toEqual([]);
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");
let uniqueCounter = 0;
/** A contract bundle nobody submitted before. */
const freshZip = () =>
  bundleZip(
    uniformArchitecture(`r${process.pid}-${++uniqueCounter}-${Date.now()}`),
    DRAIN_TRAINING,
  );

// An executor that does not answer: the master's broker on a closed port.
const NO_EXECUTOR = {
  PLATFORM_MASTER_URL: "http://127.0.0.1:9",
  BROKER_TOKEN: "broker-token-for-the-tests",
};

describe.each(await testBackends())("scoring routes on %s", (backend) => {
  let t: ScoringTest;
  beforeAll(async () => {
    t = await startScoring(backend, NO_EXECUTOR);
  });
  afterAll(() => t?.close());

  const submit = (json: unknown, init: { miner?: MinerKey } = {}) =>
    t.signedFetch("/v1/submissions", { method: "POST", json, ...init });
  const bridge = (
    body: Buffer | string,
    headers: Record<string, string>,
    contentType = "application/zip",
  ) =>
    t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: { ...headers, "content-type": contentType },
      body: typeof body === "string" ? body : new Uint8Array(body),
    });
  const getJson = async (path: string, init?: RequestInit) => {
    const response = await t.fetch(path, init);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  describe("POST /v1/submissions", () => {
    it("accepts a signed bundle: 201 with the status record, pending, in the current epoch", async () => {
      const zip = freshZip();
      const before = Math.floor(Date.now() / 1000 / 21_600);
      const response = await submit(submitBody(zip, "mine.zip", { note: "first try" }));
      expect(response.status).toBe(201);
      const record = (await response.json()) as Record<string, unknown>;
      expectSchema(SubmissionStatus, record);
      expect(record).toMatchObject({
        hotkey: t.miner.hotkey,
        status: "pending",
        code_hash: sha256(zip),
        filename: "mine.zip",
        error: null,
        final_score: null,
        anti_cheat_multiplier: null,
        llm_gate: "off",
        q_arch: null,
        q_recipe: null,
        diversity_bonus: null,
        penalty: null,
      });
      expect([before, before + 1]).toContain(record["epoch_id"]);
      const read = await getJson(`/v1/submissions/${record["id"]}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(record);
      const [stored] = await t.sql<{ via: string; metadata: unknown; bundle: Buffer }[]>`
        select via, metadata, bundle from submissions where id = ${String(record["id"])}::bigint`;
      expect(stored).toMatchObject({ via: "signed", metadata: { note: "first try" } });
      expect(Buffer.from(stored!.bundle).equals(zip)).toBe(true);
    });

    it("refuses an unsigned or tampered request with 401 before reading the body", async () => {
      const unsigned = await t.fetch("/v1/submissions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(submitBody(freshZip())),
      });
      expect(unsigned.status).toBe(401);
      expect(await unsigned.json()).toMatchObject({ code: "missing_signature_headers" });
      const body = JSON.stringify(submitBody(freshZip()));
      const headers = t.sign("POST", "/v1/submissions", { body });
      const tampered = await t.fetch("/v1/submissions", {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: body.replace("bundle.zip", "other.zip"),
      });
      expect(tampered.status).toBe(401);
    });

    it("answers 422 in FastAPI's shape for a body that does not match", async () => {
      const missing = await submit({ filename: "b.zip", metadata: {} });
      expect(missing.status).toBe(422);
      const body = (await missing.json()) as { detail: { loc: unknown[]; msg: string }[] };
      expect(body.detail[0]).toMatchObject({ loc: ["body", "code"] });
      for (const filename of ["../b.zip", "b.py", "b zip.zip", ".b.zip"]) {
        const refused = await submit({ ...submitBody(freshZip()), filename });
        expect(refused.status, filename).toBe(422);
      }
      expect((await submit({ ...submitBody(freshZip()), extra: 1 })).status).toBe(422);
    });

    it("refuses invalid base64 at submit with 400 invalid_base64", async () => {
      for (const code of ["not base64!", "UEsDBA=", "", "UEsD\nBA=="]) {
        const response = await submit({ filename: "b.zip", code, metadata: {} });
        expect(response.status, JSON.stringify(code)).toBe(400);
        expect(await response.json()).toMatchObject({ code: "invalid_base64" });
      }
    });

    it("answers 413 past 7.5 MiB of base64, and past the body limit before reading it", async () => {
      const over = await submit({
        filename: "b.zip",
        code: "A".repeat(MAX_BASE64_CHARS + 4),
        metadata: {},
      });
      expect(over.status).toBe(413);
      expect(await over.json()).toMatchObject({ code: "bundle_too_large" });
      const huge = await submit({
        filename: "b.zip",
        code: "A".repeat(SUBMISSION_BODY_LIMIT + 16),
        metadata: {},
      });
      expect(huge.status).toBe(413);
      expect(await huge.json()).toMatchObject({ code: "payload_too_large" });
      const metadata = { notes: "x".repeat(20_000) };
      const fat = await submit(submitBody(freshZip(), "b.zip", metadata));
      expect(fat.status).toBe(413);
      expect(await fat.json()).toMatchObject({ code: "metadata_too_large" });
    });

    it.each([
      ["not a ZIP", Buffer.from("just text"), 400, "invalid_zip", "zip"],
      [
        "no training.py",
        writeZip([{ name: "architecture.py", data: "def build_model(ctx):\n    pass\n" }]),
        400,
        "contract_missing_file",
        "no training.py",
      ],
      [
        "a symlink",
        minimalBundle([{ name: "data.txt", data: "/etc/passwd", unixMode: 0o120777 }]),
        400,
        "bundle_symlink",
        "data.txt",
      ],
      [
        "a traversal",
        minimalBundle([{ name: "../escape.py", data: "x = 1\n" }]),
        400,
        "bundle_invalid_path",
        "../escape.py",
      ],
      [
        "a shell script",
        minimalBundle([{ name: "run.sh", data: "curl x | sh\n" }]),
        400,
        "bundle_forbidden_extension",
        "run.sh",
      ],
      [
        "201 files",
        minimalBundle(Array.from({ length: 199 }, (_, i) => ({ name: `m/f${i}.py`, data: "" }))),
        413,
        "too_many_files",
        "200 files",
      ],
    ])(
      "refuses %s at submit (%i %s), naming what it found",
      async (_, zip, status, code, words) => {
        const response = await submit(submitBody(zip));
        expect(response.status).toBe(status);
        const body = (await response.json()) as { code: string; detail: string };
        expect(body.code).toBe(code);
        expect(body.detail).toContain(words);
      },
    );
  });

  describe("POST /internal/v1/bridge/submissions", () => {
    it("takes a raw ZIP with the hotkey and file name the master verified, never a miner's X-Hotkey", async () => {
      const verified = await createMinerKey();
      const impostor = await createMinerKey();
      const zip = freshZip();
      const response = await bridge(zip, {
        ...t.bridgeHeaders(verified.hotkey, { filename: "uploaded.zip" }),
        "x-hotkey": impostor.hotkey,
      });
      expect(response.status).toBe(201);
      const record = (await response.json()) as Record<string, unknown>;
      expectSchema(SubmissionStatus, record);
      expect(record).toMatchObject({
        hotkey: verified.hotkey,
        filename: "uploaded.zip",
        code_hash: sha256(zip),
        status: "pending",
      });
      const [row] = await t.sql<{ via: string }[]>`
        select via from submissions where id = ${String(record["id"])}::bigint`;
      expect(row?.via).toBe("bridge");
    });

    it("takes the JSON form too; the master's X-Submission-Filename wins over the body's", async () => {
      const verified = await createMinerKey();
      const response = await bridge(
        JSON.stringify(submitBody(freshZip(), "from-body.zip")),
        t.bridgeHeaders(verified.hotkey, { filename: "from-master.zip" }),
        "application/json",
      );
      expect(response.status).toBe(201);
      expect(await response.json()).toMatchObject({
        hotkey: verified.hotkey,
        filename: "from-master.zip",
      });
    });

    it("refuses a missing bearer, a missing identity, a bad file name and an oversized ZIP", async () => {
      const verified = await createMinerKey();
      const zip = freshZip();
      const noBearer = await bridge(zip, {
        [PLATFORM_HEADERS.challengeSlug]: t.slug,
        [PLATFORM_HEADERS.verifiedHotkey]: verified.hotkey,
      });
      expect(noBearer.status).toBe(401);
      const noIdentity = await bridge(zip, t.internalHeaders);
      expect(noIdentity.status).toBe(400);
      expect(await noIdentity.json()).toMatchObject({ code: "missing_verified_identity" });
      // Signed miner headers are no identity on the bridge.
      const signedOnly = await bridge(zip, {
        ...t.internalHeaders,
        ...t.sign("POST", "/internal/v1/bridge/submissions", { body: zip }),
      });
      expect(signedOnly.status).toBe(400);
      const notZip = await bridge(zip, t.bridgeHeaders(verified.hotkey, { filename: "notes.txt" }));
      expect(notZip.status).toBe(400);
      expect(await notZip.json()).toMatchObject({ code: "invalid_filename" });
      const big = await bridge(Buffer.alloc(MAX_ZIP_BYTES + 1), t.bridgeHeaders(verified.hotkey));
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ code: "bundle_too_large" });
      const wrongType = await bridge(zip, t.bridgeHeaders(verified.hotkey), "application/gzip");
      expect(wrongType.status).toBe(415);
    });
  });

  describe("reads", () => {
    it("GET /v1/submissions/{id}: 404 for an unknown id, 422 for a malformed one", async () => {
      const missing = await getJson("/v1/submissions/999999999");
      expect(missing).toMatchObject({ status: 404, body: { code: "submission_not_found" } });
      expect((await t.fetch("/v1/submissions/abc")).status).toBe(422);
      expect((await t.fetch("/v1/submissions/0")).status).toBe(422);
    });

    it("GET /v1/submissions/history: one entry per UTC day, oldest first, days 1-366", async () => {
      const { body: today } = await getJson("/v1/submissions/history?days=1");
      expectSchema(History, today);
      const list = today as unknown as { date: string; count: number }[];
      expect(list).toHaveLength(1);
      expect(list[0]!.date).toBe(new Date().toISOString().slice(0, 10));
      const [{ n } = { n: 0 }] = await t.sql<{ n: number }[]>`
        select count(*)::int as n from submissions
        where (created_at at time zone 'UTC')::date = (now() at time zone 'UTC')::date`;
      expect(list[0]!.count).toBe(n);

      // One submission moved ten days back: in a 90-day window, not in a 7-day one.
      const moved = (await (await submit(submitBody(freshZip()))).json()) as { id: string };
      await t.sql`update submissions set created_at = now() - interval '10 days'
                  where id = ${moved.id}::bigint`;
      const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
      const { body: quarter } = await getJson("/v1/submissions/history");
      const days = quarter as unknown as { date: string; count: number }[];
      expect(days).toHaveLength(90);
      expect(days.map((day) => day.date)).toEqual([...days.map((day) => day.date)].sort());
      expect(days.find((day) => day.date === tenDaysAgo)?.count).toBeGreaterThanOrEqual(1);
      const { body: week } = await getJson("/v1/submissions/history?days=7");
      expect((week as unknown as unknown[]).length).toBe(7);
      expect((week as unknown as { date: string }[]).some((day) => day.date === tenDaysAgo)).toBe(
        false,
      );
      expect((await getJson("/v1/submissions/history?days=366")).body).toHaveLength(366);
      for (const days of ["0", "367", "x"]) {
        expect((await t.fetch(`/v1/submissions/history?days=${days}`)).status, days).toBe(422);
      }
    });

    it("GET /v1/leaderboard: one entry per hotkey (its best), ties by earliest, then id", async () => {
      const epoch = 7;
      const [a, b, c, d] = await Promise.all([
        createMinerKey(),
        createMinerKey(),
        createMinerKey(),
        createMinerKey(),
      ]);
      const t0 = new Date("2026-01-01T00:00:00Z");
      const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
      const add = (hotkey: string, score: number | null, created: Date, status = "completed") =>
        insertRow(t, { hotkey, score, created, status, epoch });
      const aBest = await add(a.hotkey, 0.5, at(0));
      await add(a.hotkey, 0.4, at(1));
      await add(a.hotkey, 0.5, at(5)); // the same best later: A's entry stays its earliest
      const dTie = await add(d.hotkey, 0.5, at(0)); // same score and time as A: larger id after
      const bTie = await add(b.hotkey, 0.5 + 1e-12, at(2)); // same 1e-9 cell, later
      const cTop = await add(c.hotkey, 0.6, at(3));
      await add((await createMinerKey()).hotkey, 0.9, at(4), "failed");
      await add((await createMinerKey()).hotkey, 0.95, at(4), "rejected");
      await insertRow(t, {
        hotkey: a.hotkey,
        score: 0.99,
        created: at(9),
        status: "completed",
        epoch: 8,
      });

      const { status, body } = await getJson(`/v1/leaderboard?epoch_id=${epoch}`);
      expect(status).toBe(200);
      expectSchema(Leaderboard, body);
      expect(body).toEqual({
        epoch_id: epoch,
        entries: [
          { rank: 1, hotkey: c.hotkey, score: 0.6, submission_id: cTop },
          { rank: 2, hotkey: a.hotkey, score: 0.5, submission_id: aBest },
          { rank: 3, hotkey: d.hotkey, score: 0.5, submission_id: dTie },
          { rank: 4, hotkey: b.hotkey, score: 0.5 + 1e-12, submission_id: bTie },
        ],
      });
      const other = await getJson("/v1/leaderboard?epoch_id=8");
      expect((other.body as { entries: unknown[] }).entries).toHaveLength(1);
      // The current epoch by default.
      const current = await getJson("/v1/leaderboard");
      expect((current.body as { epoch_id: number }).epoch_id).toBe(
        Math.floor(Date.now() / 1000 / 21_600),
      );
      expect((await t.fetch("/v1/leaderboard?epoch_id=-1")).status).toBe(422);
    });

    it("GET /v1/epochs/current and /v1/epochs (limit <= 50)", async () => {
      const current = await getJson("/v1/epochs/current");
      expectSchema(CurrentEpoch, current.body);
      const id = Math.floor(Date.now() / 1000 / 21_600);
      expect([id, id + 1]).toContain(current.body["epoch_id"]);
      expect(current.body["epoch_seconds"]).toBe(21_600);
      const { body } = await getJson("/v1/epochs?limit=3");
      expectSchema(Epochs, body);
      const epochs = body as unknown as {
        id: number;
        starts_at: string;
        ends_at: string;
        status: string;
      }[];
      expect(epochs.map((epoch) => epoch.status)).toEqual(["current", "closed", "closed"]);
      expect(epochs[0]!.id).toBe(current.body["epoch_id"]);
      expect(epochs[1]!.ends_at).toBe(epochs[0]!.starts_at);
      expect(Date.parse(epochs[0]!.ends_at) - Date.parse(epochs[0]!.starts_at)).toBe(21_600_000);
      expect((await getJson("/v1/epochs")).body).toHaveLength(50);
      expect((await t.fetch("/v1/epochs?limit=51")).status).toBe(422);
      expect((await t.fetch("/v1/epochs?limit=0")).status).toBe(422);
    });

    it("GET /v1/gpu/status counts leases by status and live ones by tier", async () => {
      const empty = await getJson("/v1/gpu/status");
      expectSchema(GpuStatus, empty.body);
      expect(empty.body).toMatchObject({ total_gpus: 0, active_leases: 0 });
      const ids = await Promise.all(
        [0, 1, 2, 3].map(async () =>
          insertRow(t, { hotkey: (await createMinerKey()).hotkey, status: "running" }),
        ),
      );
      await t.sql`
        insert into gpu_leases (submission_id, tier, status, gpu_index, activated_at, released_at)
        values (${ids[0]!}::bigint, 'a100', 'active', 0, now(), null),
               (${ids[1]!}::bigint, 'a100', 'queued', null, null, null),
               (${ids[2]!}::bigint, 'h100', 'queued', null, null, null),
               (${ids[3]!}::bigint, 'h100', 'released', null, null, now())`;
      const { body } = await getJson("/v1/gpu/status");
      expectSchema(GpuStatus, body);
      expect(body).toEqual({
        total_gpus: 0,
        active_leases: 1,
        by_status: { queued: 2, active: 1, released: 1 },
        by_tier: { a100: 2, h100: 1 },
      });
      await t.sql`delete from gpu_leases`;
    });

    it("GET /v1/health/eval-jobs lists the most recent eval-job rows", async () => {
      const id = await insertRow(t, { hotkey: (await createMinerKey()).hotkey, status: "running" });
      await t.sql`insert into eval_jobs (submission_id, level, status, attempts)
                  values (${id}::bigint, 'gates', 'completed', 1), (${id}::bigint, 'run', 'running', 2)`;
      const { body } = await getJson("/v1/health/eval-jobs?limit=2");
      expectSchema(EvalJobs, body);
      const rows = body as unknown as { submission_id: string; level: string; attempts: number }[];
      expect(rows).toHaveLength(2);
      expect(rows.map((row) => [row.submission_id, row.level, row.attempts]).sort()).toEqual([
        [id, "gates", 1],
        [id, "run", 2],
      ]);
      expect((await t.fetch("/v1/health/eval-jobs?limit=201")).status).toBe(422);
    });

    it("GET /v1/architectures and /v1/training-variants list what was submitted", async () => {
      const architecture = uniformArchitecture(`family-${process.pid}-${Date.now()}`);
      const first = bundleZip(architecture, DRAIN_TRAINING);
      const second = bundleZip(architecture, `${DRAIN_TRAINING}\n# another recipe\n`);
      const one = (await (await submit(submitBody(first))).json()) as { id: string };
      await submit(submitBody(second));
      const archId = createHash("sha256").update(architecture).digest("hex");
      const { body } = await getJson("/v1/architectures?limit=200");
      expectSchema(Architectures, body);
      const family = (body as unknown as { architecture_id: string }[]).find(
        (entry) => entry.architecture_id === archId,
      );
      expect(family).toMatchObject({
        first_submission_id: one.id,
        first_hotkey: t.miner.hotkey,
        submissions: 2,
        variants: 2,
        best_score: null,
      });
      const variants = await getJson(`/v1/training-variants?architecture_id=${archId}`);
      expectSchema(TrainingVariants, variants.body);
      expect(variants.body).toHaveLength(2);
      const limited = await getJson("/v1/architectures?limit=1");
      expect(limited.body).toHaveLength(1);
      // A rejected bundle is nobody's family.
      await t.sql`update submissions set status = 'rejected', error = 'x'
                  where architecture_hash = ${archId}`;
      const after = await getJson(`/v1/training-variants?architecture_id=${archId}`);
      expect(after.body).toEqual([]);
      expect((await t.fetch("/v1/training-variants?architecture_id=zz")).status).toBe(422);
    });
  });

  describe("held bundles", () => {
    it("are rejected lazily once held for 24 h, and an operator can release one before", async () => {
      const held = (await (await submit(submitBody(freshZip()))).json()) as { id: string };
      await t.sql`update submissions set status = 'held', held_at = now(),
                    error = 'held: the LLM review could not decide (timeout)'
                  where id = ${held.id}::bigint`;
      expect((await getJson(`/v1/submissions/${held.id}`)).body).toMatchObject({ status: "held" });

      const release = (id: string, headers = t.internalHeaders) =>
        t.fetch(`/internal/v1/submissions/${id}/release`, { method: "POST", headers });
      expect((await release(held.id, {})).status).toBe(401);
      const released = await release(held.id, { authorization: `Bearer ${t.token}` });
      expect(released.status).toBe(200);
      expect(await released.json()).toMatchObject({ id: held.id, status: "pending", error: null });
      const again = await release(held.id);
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: "not_releasable" });

      const expired = (await (await submit(submitBody(freshZip()))).json()) as { id: string };
      await t.sql`update submissions set status = 'held', held_at = now() - interval '25 hours',
                    error = 'held: the LLM review could not decide (malformed verdict)'
                  where id = ${expired.id}::bigint`;
      const read = await getJson(`/v1/submissions/${expired.id}`);
      expect(read.body).toMatchObject({ status: "rejected" });
      expect(read.body["error"]).toMatch(
        /could not decide within 24 h \(held: .*malformed verdict\)/,
      );
      expect((await release(expired.id)).status).toBe(409);
      expect((await release("424242424")).status).toBe(404);
    });
  });

  describe("POST /internal/v1/worker/process-next", () => {
    it("takes the bearer alone, refuses a wrong slug or bearer", async () => {
      const none = await t.fetch("/internal/v1/worker/process-next", { method: "POST" });
      expect(none.status).toBe(401);
      const wrongSlug = await t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: { authorization: `Bearer ${t.token}`, [PLATFORM_HEADERS.challengeSlug]: "other" },
      });
      expect(wrongSlug.status).toBe(403);
    });

    it("answers 503 executor_unavailable without an executor: the submission stays pending", async () => {
      // Settle everything queued so far, so the next claim is ours.
      await t.sql`update submissions set status = 'rejected', error = 'cleared by the test'
                  where status in ('pending', 'running')`;
      const drain = async () => {
        for (;;) {
          const response = await t.fetch("/internal/v1/worker/process-next", {
            method: "POST",
            headers: { authorization: `Bearer ${t.token}` },
          });
          const body = (await response.json()) as { submission_id: string | null };
          if (body.submission_id === null) return;
        }
      };
      await drain();
      const mine = (await (await submit(submitBody(freshZip()))).json()) as { id: string };
      const response = await t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: { authorization: `Bearer ${t.token}` },
      });
      expect(response.status).toBe(503);
      const body = (await response.json()) as { code: string; detail: string };
      expect(body.code).toBe("executor_unavailable");
      expect(body.detail).toContain(`submission ${mine.id}`);
      expect(body.detail).toContain("broker_unavailable");
      const status = await getJson(`/v1/submissions/${mine.id}`);
      expect(status.body).toMatchObject({ status: "pending", error: null, final_score: null });
      const [gates] = await t.sql<{ status: string; attempts: number }[]>`
        select status, attempts from eval_jobs where submission_id = ${mine.id}::bigint and level = 'gates'`;
      expect(gates).toEqual({ status: "pending", attempts: 1 });
      // Retried later (backoff), never scored by a fallback.
      const next = await t.fetch("/internal/v1/worker/process-next", {
        method: "POST",
        headers: t.internalHeaders,
      });
      expect(next.status).toBe(200);
      const nothing = await next.json();
      expectSchema(ProcessNextResult, nothing);
      expect(nothing).toEqual({ submission_id: null });
      expect((await getJson(`/v1/submissions/${mine.id}`)).body).toMatchObject({
        status: "pending",
      });
    });
  });

  it("publishes every route's response schema in /openapi.json", async () => {
    const { body } = await getJson("/openapi.json");
    const paths = body["paths"] as Record<
      string,
      Record<string, { responses: Record<string, { content?: unknown }> }>
    >;
    const expected: [string, string, string][] = [
      ["/v1/submissions", "post", "201"],
      ["/internal/v1/bridge/submissions", "post", "201"],
      ["/v1/submissions/history", "get", "200"],
      ["/v1/submissions/{submission_id}", "get", "200"],
      ["/v1/leaderboard", "get", "200"],
      ["/v1/architectures", "get", "200"],
      ["/v1/training-variants", "get", "200"],
      ["/v1/epochs/current", "get", "200"],
      ["/v1/epochs", "get", "200"],
      ["/v1/health/eval-jobs", "get", "200"],
      ["/v1/gpu/status", "get", "200"],
      ["/internal/v1/worker/process-next", "post", "200"],
      ["/internal/v1/submissions/{submission_id}/release", "post", "200"],
      ["/internal/v1/get_weights", "get", "200"],
    ];
    for (const [path, method, status] of expected) {
      const response = paths[path]?.[method]?.responses?.[status];
      expect(response?.content, `${method.toUpperCase()} ${path} ${status}`).toBeDefined();
    }
  });
});

describe.each(await testBackends())("weights on %s", (backend) => {
  let t: ScoringTest;
  beforeAll(async () => {
    t = await startScoring(backend, NO_EXECUTOR);
  });
  afterAll(() => t?.close());

  const weights = async () => {
    const response = await t.fetch("/internal/v1/get_weights", { headers: t.internalHeaders });
    expect(response.status).toBe(200);
    return (await response.json()) as {
      challenge_slug: string;
      epoch: number;
      weights: Record<string, number>;
    };
  };

  it("are empty when nothing is scored, then each hotkey's best score of the epoch, normalised", async () => {
    const epoch = Math.floor(Date.now() / 1000 / 21_600);
    const empty = await weights();
    expect(empty).toMatchObject({ challenge_slug: "scoring", weights: {} });
    expect([epoch, epoch + 1]).toContain(empty.epoch);

    const [a, b, cheat, old] = await Promise.all([
      createMinerKey(),
      createMinerKey(),
      createMinerKey(),
      createMinerKey(),
    ]);
    const now = new Date();
    const current = empty.epoch;
    await insertRow(t, {
      hotkey: a.hotkey,
      score: 0.2,
      created: now,
      status: "completed",
      epoch: current,
    });
    await insertRow(t, {
      hotkey: a.hotkey,
      score: 0.1,
      created: now,
      status: "completed",
      epoch: current,
    });
    await insertRow(t, {
      hotkey: b.hotkey,
      score: 0.1,
      created: now,
      status: "completed",
      epoch: current,
    });
    await insertRow(t, {
      hotkey: cheat.hotkey,
      score: 0,
      created: now,
      status: "completed",
      epoch: current,
    });
    await insertRow(t, {
      hotkey: old.hotkey,
      score: 0.9,
      created: now,
      status: "completed",
      epoch: current - 1,
    });
    await insertRow(t, {
      hotkey: old.hotkey,
      score: 0.9,
      created: now,
      status: "failed",
      epoch: current,
    });
    const result = await weights();
    expect(result.epoch).toBe(current);
    expect(Object.keys(result.weights).sort()).toEqual([a.hotkey, b.hotkey].sort());
    expect(result.weights[a.hotkey]).toBeCloseTo(2 / 3, 12);
    expect(result.weights[b.hotkey]).toBeCloseTo(1 / 3, 12);
  });
});

/** A submission row written directly (for reads that need settled rows); its id. */
async function insertRow(
  t: ScoringTest,
  row: { hotkey: string; score?: number | null; created?: Date; status: string; epoch?: number },
): Promise<string> {
  const code = createHash("sha256").update(`${row.hotkey}${Math.random()}`).digest("hex");
  const [inserted] = await t.sql<{ id: string }[]>`
    insert into submissions (hotkey, epoch_id, status, via, filename, code_hash, bundle,
                             final_score, anti_cheat_multiplier, created_at, error)
    values (${row.hotkey}, ${row.epoch ?? 1}, ${row.status}, 'signed', 'b.zip', ${code},
            ${Buffer.from("PK")}, ${row.score ?? null}, ${row.score === undefined ? null : 1},
            ${row.created ?? new Date()}, ${row.status === "completed" ? null : "x"})
    returning id::text`;
  return inserted!.id;
}

describe.each(await testBackends())("GPU leases by executor on %s", (backend) => {
  // A scored run asking for a GPU, on each executor; neither can run it here (the broker does
  // not answer, the engine has no such image), so each ends in an infrastructure failure: what
  // differs is whether the challenge's own GPU ledger saw it.
  const stage = async (t: ScoringTest) => {
    const accepted = await t.signedFetch("/v1/submissions", {
      method: "POST",
      json: submitBody(freshZip()),
    });
    expect(accepted.status).toBe(201);
    const { id } = (await accepted.json()) as { id: string };
    const [row] = await t.sql<{ bundle: Buffer; epoch_id: string }[]>`
      select bundle, epoch_id from submissions where id = ${id}::bigint`;
    const bundle = await openBundle(row!.bundle);
    if (!bundle.ok) throw new Error(bundle.error.message);
    const failure = await scoredRunStage(
      t.state.pipeline,
      { id, epochId: Number(row!.epoch_id) },
      bundle.value,
      new AbortController().signal,
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InfrastructureError);
    const leases = await t.sql<{ status: string }[]>`
      select status from gpu_leases where submission_id = ${id}::bigint`;
    return leases.map((lease) => lease.status);
  };

  it("under the broker, takes no lease of its own: the master admits GPU runs", async () => {
    const t = await startScoring(backend, { ...NO_EXECUTOR, GPU_COUNT: "1" });
    try {
      expect(await stage(t)).toEqual([]);
      expect(await (await t.fetch("/v1/gpu/status")).json()).toMatchObject({
        total_gpus: 1,
        by_status: { queued: 0, active: 0, released: 0 },
      });
    } finally {
      await t.close();
    }
  });

  it("under docker (the challenge's own host), holds a lease for the run and releases it", async () => {
    const t = await startScoring(backend, {
      EXECUTOR: "docker",
      EVAL_IMAGE: "platform-test/no-such-eval-image:none",
      GPU_COUNT: "1",
    });
    try {
      expect(await stage(t)).toEqual(["released"]);
    } finally {
      await t.close();
    }
  });
});
