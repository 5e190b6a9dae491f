// The submission routes on both backends: signed and bridged uploads, the server's own hash,
// the per-hotkey window (429 with next_allowed_at; racing and refused submissions), duplicates (409), bad artifacts, the list,
// and rule 1 (storing starts nothing).
import { createHash } from "node:crypto";
import {
  createMinerKey,
  type MinerKey,
  testBackends,
  writeZip,
} from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentTaskFiles } from "../src/eval-worker/agent-files.js";
import { AGENT_ARCHIVE } from "../src/submissions/agent-archive.js";
import { type AgentEvalTest, agentZip, startAgentEval } from "./agent-eval-kit.js";

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const submitBody = (zip: Buffer, name = "my agent") => ({
  name,
  artifact_b64: zip.toString("base64"),
});

describe.each(await testBackends())("agent-eval submissions on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  const submit = (json: unknown, miner?: MinerKey) =>
    t.signedFetch("/submissions", { method: "POST", json, ...(miner ? { miner } : {}) });
  const bridge = (zip: Buffer, hotkey: string, filename = "agent.zip") =>
    t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: { ...t.bridgeHeaders(hotkey, { filename }), "content-type": "application/zip" },
      body: new Uint8Array(zip),
    });

  it("rule 1: stores a signed submission (201, hashed by the server) and starts nothing", async () => {
    const miner = await createMinerKey();
    const zip = agentZip();
    const response = await submit(submitBody(zip, "first agent"), miner);
    expect(response.status).toBe(201);
    const record = (await response.json()) as Record<string, unknown>;
    expect(record).toMatchObject({
      hotkey: miner.hotkey,
      name: "first agent",
      artifact_sha256: sha256(zip),
      size: zip.length,
      version: 1,
      latest: true,
      status: "received",
      effective_status: "received",
      latest_evaluation: null,
    });
    const id = String(record["id"]);
    const [stored] = await t.sql<{ artifact: Buffer; via: string }[]>`
      select artifact, via from submissions where id = ${id}`;
    expect(Buffer.from(stored!.artifact).equals(zip)).toBe(true);
    expect(stored!.via).toBe("signed");
    // Nothing started: no review assignment, no eval run; one status event, "received".
    const [counts] = await t.sql<{ assignments: number; runs: number }[]>`
      select (select count(*)::int from review_assignments where submission_id = ${id}) as assignments,
             (select count(*)::int from eval_runs where submission_id = ${id}) as runs`;
    expect(counts).toEqual({ assignments: 0, runs: 0 });
    const events = await t.sql<{ seq: number; to_state: string; actor: string }[]>`
      select seq, to_state, actor from submission_status_events where submission_id = ${id}`;
    expect(events).toEqual([{ seq: 1, to_state: "received", actor: "miner" }]);
  });

  it("one accepted submission per hotkey per window: 429 with next_allowed_at, nothing stored", async () => {
    const miner = await createMinerKey();
    expect((await submit(submitBody(agentZip()), miner)).status).toBe(201);
    const before = await t.sql<{ n: number }[]>`select count(*)::int as n from submissions`;
    const second = await submit(submitBody(agentZip()), miner);
    expect(second.status).toBe(429);
    const body = (await second.json()) as Record<string, string>;
    expect(body["code"]).toBe("submission_rate_limited");
    const next = Date.parse(body["next_allowed_at"]!);
    expect(next - Date.now()).toBeGreaterThan(3 * 3600 * 1000 - 60_000);
    expect(next - Date.now()).toBeLessThanOrEqual(3 * 3600 * 1000);
    const retryAfter = Number(second.headers.get("retry-after"));
    expect(body["retry_after_seconds"]).toBe(retryAfter);
    expect(retryAfter).toBeGreaterThan(3 * 3600 - 60);
    const after = await t.sql<{ n: number }[]>`select count(*)::int as n from submissions`;
    expect(after[0]!.n).toBe(before[0]!.n);
    // Another hotkey is not limited by this one's window.
    expect((await submit(submitBody(agentZip()), await createMinerKey())).status).toBe(201);
  });

  it("racing submissions of one hotkey, signed and bridged at once: exactly one is accepted", async () => {
    const miner = await createMinerKey();
    const answers = await Promise.all([
      submit(submitBody(agentZip()), miner),
      submit(submitBody(agentZip()), miner),
      bridge(agentZip(), miner.hotkey),
      bridge(agentZip(), miner.hotkey),
    ]);
    const statuses = answers.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 429, 429, 429]);
    const rows = await t.sql`select id from submissions where hotkey = ${miner.hotkey}`;
    expect(rows).toHaveLength(1);
  });

  it("a refused submission does not use the hotkey's window", async () => {
    const miner = await createMinerKey();
    const taken = agentZip();
    expect((await submit(submitBody(taken), await createMinerKey())).status).toBe(201);
    // Refused in the accepting transaction (the bytes were submitted before), or before it (not
    // a ZIP): neither counts, so the hotkey's real submission is still accepted.
    expect((await submit(submitBody(taken), miner)).status).toBe(409);
    expect((await submit(submitBody(Buffer.from("not a zip")), miner)).status).toBe(400);
    expect((await bridge(taken, miner.hotkey)).status).toBe(409);
    expect((await submit(submitBody(agentZip()), miner)).status).toBe(201);
    expect((await submit(submitBody(agentZip()), miner)).status).toBe(429);
  });

  it("the same ZIP twice is 409 duplicate_artifact, whoever submits it", async () => {
    const zip = agentZip();
    expect((await submit(submitBody(zip), await createMinerKey())).status).toBe(201);
    const again = await submit(submitBody(zip), await createMinerKey());
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("duplicate_artifact");
  });

  it("refuses bad artifacts with a stable code: base64, not a ZIP, too large", async () => {
    const cases: [unknown, number, string][] = [
      [{ name: "x", artifact_b64: "not base64!" }, 400, "invalid_base64"],
      [{ name: "x", artifact_b64: "UEsFBg=\n=" }, 400, "invalid_base64"],
      // "QQ==" and "QR==" decode to the same byte: only the canonical spelling is accepted.
      [{ name: "x", artifact_b64: "QR==" }, 400, "invalid_base64"],
      [submitBody(Buffer.from("just some text, no zip")), 400, "invalid_artifact"],
      [
        submitBody(Buffer.concat([Buffer.alloc(1024 * 1024), agentZip()])),
        413,
        "artifact_too_large",
      ],
    ];
    for (const [body, status, code] of cases) {
      const response = await submit(body, await createMinerKey());
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(status);
      expect(((await response.json()) as { code: string }).code).toBe(code);
    }
  });

  // Once refused only by the review worker (a blocking finding), now by the submission itself:
  // the SDK reads the ZIP under AGENT_ARCHIVE before the handler, either way in.
  it("refuses a ZIP no reader would open, at submission: escaping paths, links, too many files", async () => {
    const many = Array.from({ length: AGENT_ARCHIVE.limits!.maxFiles + 1 }, (_, i) => ({
      name: `m/f${i}.py`,
      data: "",
    }));
    const cases: [Buffer, number, string][] = [
      [
        writeZip([
          { name: "agent.py", data: "x = 1\n" },
          { name: "../escape.py", data: "y = 2\n" },
        ]),
        400,
        "invalid_path",
      ],
      [writeZip([{ name: "agent.py", data: "/etc/passwd", unixMode: 0o120777 }]), 400, "symlink"],
      [writeZip(many), 413, "too_many_files"],
    ];
    for (const [zip, status, code] of cases) {
      const signed = await submit(submitBody(zip), await createMinerKey());
      expect(signed.status, code).toBe(status);
      expect(((await signed.json()) as { code: string }).code).toBe(code);
      const bridged = await bridge(zip, (await createMinerKey()).hotkey);
      expect(bridged.status, code).toBe(status);
      expect(((await bridged.json()) as { code: string }).code).toBe(code);
    }
  });

  // The attack the one rule set closes: an agent that the submission and the review accept
  // but the eval worker refuses (it once read under 250 files where review allowed 500).
  it("what it accepts, the eval worker can unpack: one rule set for every reader", async () => {
    const largest = [
      { name: "agent.py", data: "print('hi')\n" },
      ...Array.from({ length: AGENT_ARCHIVE.limits!.maxFiles - 1 }, (_, i) => ({
        name: `lib/m${i}.py`,
        data: "",
      })),
    ];
    const zip = writeZip(largest);
    expect((await submit(submitBody(zip), await createMinerKey())).status).toBe(201);
    expect(await agentTaskFiles(zip)).toMatchObject({ ok: true, count: largest.length });
  });

  it("answers 422 HTTPValidationError for a body that does not match SubmissionRequest", async () => {
    for (const body of [
      { artifact_b64: agentZip().toString("base64") },
      { name: "", artifact_b64: agentZip().toString("base64") },
      { name: "x".repeat(129), artifact_b64: agentZip().toString("base64") },
      { ...submitBody(agentZip()), extra: true },
    ]) {
      const response = await submit(body, await createMinerKey());
      expect(response.status).toBe(422);
      expect(((await response.json()) as { detail: unknown[] }).detail.length).toBeGreaterThan(0);
    }
  });

  it("refuses an unsigned request and a tampered body with 401", async () => {
    const unsigned = await t.fetch("/submissions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(submitBody(agentZip())),
    });
    expect(unsigned.status).toBe(401);
  });

  it("the bridge takes the raw ZIP with the master's verified hotkey and file name", async () => {
    const verified = await createMinerKey();
    const zip = agentZip();
    const response = await bridge(zip, verified.hotkey, "solver v2.zip");
    expect(response.status).toBe(201);
    const record = (await response.json()) as Record<string, unknown>;
    expect(record).toMatchObject({
      hotkey: verified.hotkey,
      name: "solver v2",
      filename: "solver v2.zip",
      artifact_sha256: sha256(zip),
    });
    const [row] = await t.sql<{ via: string }[]>`
      select via from submissions where id = ${String(record["id"])}`;
    expect(row?.via).toBe("bridge");
    // Without the bearer, or with a file name that is a path: refused, nothing stored.
    const noBearer = await t.fetch("/internal/v1/bridge/submissions", {
      method: "POST",
      headers: { "content-type": "application/zip" },
      body: new Uint8Array(agentZip()),
    });
    expect(noBearer.status).toBe(401);
    const path = await bridge(agentZip(), (await createMinerKey()).hotkey, "../etc/passwd");
    expect(path.status).toBe(400);
  });

  it("numbers a hotkey's submissions of one name, and marks the latest", async () => {
    const miner = await createMinerKey();
    const first = (await (await bridge(agentZip(), miner.hotkey, "bot.zip")).json()) as {
      id: number;
    };
    // The bridge shares the window with the signed route: the second upload waits for it (here
    // the first acceptance is moved 4 h back, by the database's clock).
    await t.sql`update sdk_rate_limits set hits = array[now() - interval '4 hours']
                where bucket = 'agent-eval submissions' and hotkey = ${miner.hotkey}`;
    const second = (await (await bridge(agentZip(), miner.hotkey, "bot.zip")).json()) as {
      id: number;
      version: number;
      latest: boolean;
    };
    expect(second).toMatchObject({ version: 2, latest: true });
    const list = (await (await t.fetch(`/submissions?hotkey=${miner.hotkey}`)).json()) as {
      id: number;
    }[];
    expect(list.map((item) => item.id)).toEqual([second.id, first.id]);
  });

  it("GET /submissions lists recent submissions, newest first, each with its latest score", async () => {
    const response = await t.fetch("/submissions?limit=3");
    expect(response.status).toBe(200);
    const list = (await response.json()) as Record<string, unknown>[];
    expect(list).toHaveLength(3);
    for (const item of list) {
      expect(Object.keys(item).sort()).toEqual(
        [
          "artifact_sha256",
          "created_at",
          "effective_status",
          "hotkey",
          "id",
          "latest_score",
          "name",
          "status",
        ].sort(),
      );
      expect(item["latest_score"]).toBeNull();
    }
    const ids = list.map((item) => item["id"] as number);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect((await t.fetch("/submissions?limit=0")).status).toBe(422);
    expect((await t.fetch("/submissions?limit=101")).status).toBe(422);
  });
});

describe.runIf((await testBackends()).includes("postgres"))("under concurrency (postgres)", () => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval("postgres");
  });
  afterAll(() => t?.close());

  it("ten simultaneous submissions of one hotkey: exactly one is stored", async () => {
    const miner = await createMinerKey();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        t.signedFetch("/submissions", {
          method: "POST",
          json: submitBody(agentZip()),
          miner,
        }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, ...Array(9).fill(429)]);
    const [row] = await t.sql<{ n: number }[]>`
      select count(*)::int as n from submissions where hotkey = ${miner.hotkey}`;
    expect(row!.n).toBe(1);
  });
});
