// The miner env and launch on both backends: the whole set replaced and sealed at rest (the raw
// row holds no plaintext), only metadata ever returned, the limits, URL-shaped keys and values
// refused, confirm-empty, the launch gate (412 without env), the lock after launch (409), the
// owner-only rule, and the URL checks on adversarial input.
import { createMinerKey, type MinerKey, testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLocationKey, isUrlShaped } from "../src/env/env-rules.js";
import { openMinerEnv } from "../src/env/miner-env.js";
import { type AgentEvalTest, startAgentEval } from "./agent-eval-kit.js";
import { submitAgent } from "./review/review-test-kit.js";

interface Metadata {
  status: string;
  keys: { name: string; size: number; sha256: string }[];
  total_bytes: number;
  revision: number;
  locked: boolean;
}

describe.each(await testBackends())("miner env and launch on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend);
  });
  afterAll(() => t?.close());

  async function owned(): Promise<{ miner: MinerKey; id: number }> {
    const miner = await createMinerKey();
    return { miner, id: await submitAgent(t, miner) };
  }
  const call = (miner: MinerKey, id: number) => ({
    get: () => t.signedFetch(`/submissions/${id}/env`, { miner }),
    put: (env: Record<string, string>) =>
      t.signedFetch(`/submissions/${id}/env`, { method: "PUT", miner, json: { env } }),
    confirmEmpty: () =>
      t.signedFetch(`/submissions/${id}/env/confirm-empty`, { method: "POST", miner }),
    launch: () => t.signedFetch(`/submissions/${id}/launch`, { method: "POST", miner }),
  });
  const json = async <T>(response: Response, status = 200): Promise<T> => {
    const text = await response.text();
    expect(response.status, text).toBe(status);
    return JSON.parse(text) as T;
  };
  const code = async (response: Response) => ((await response.json()) as { code: string }).code;

  it("replaces the whole set, seals it at rest and returns only metadata", async () => {
    const { miner, id } = await owned();
    const env = call(miner, id);
    expect(await json<Metadata>(await env.get())).toMatchObject({ status: "unset", revision: 0 });
    const secret = "sk-env-plaintext-marker-0123456789";
    const first = await json<Metadata>(await env.put({ API_KEY: secret, MODE: "fast" }));
    expect(first).toMatchObject({ status: "set", revision: 1, locked: false });
    expect(first.keys.map((key) => [key.name, key.size])).toEqual([
      ["API_KEY", secret.length],
      ["MODE", 4],
    ]);
    expect(JSON.stringify(first)).not.toContain(secret);
    // The raw row: sealed bytes and metadata, no plaintext anywhere.
    const [row] = await t.sql<{ sealed: Buffer; keys: unknown }[]>`
      select sealed, keys from submission_env where submission_id = ${id}`;
    expect(Buffer.from(row!.sealed).includes(secret)).toBe(false);
    expect(JSON.stringify(row!.keys)).not.toContain(secret);
    // The evaluation opens exactly the set.
    const opened = await t.sql.begin((tx) => openMinerEnv(tx, String(id), t.state.secretKey));
    expect(opened).toEqual({ API_KEY: secret, MODE: "fast" });

    // PUT replaces the whole set (MODE is gone), a new revision.
    const second = await json<Metadata>(await env.put({ OTHER: "1" }));
    expect(second.keys.map((key) => key.name)).toEqual(["OTHER"]);
    expect(second.revision).toBe(2);
    expect(await t.sql.begin((tx) => openMinerEnv(tx, String(id), t.state.secretKey))).toEqual({
      OTHER: "1",
    });
  });

  it("refuses URL-shaped keys and values, naming the key and never the value", async () => {
    const { miner, id } = await owned();
    const env = call(miner, id);
    for (const [key, value] of [
      ["OPENAI_BASE_URL", "abc"],
      ["HTTPS_PROXY", "abc"],
      ["MODEL_HOST", "abc"],
      ["NOTE", "https://evil.example/x"],
      ["NOTE", "ftp://host"],
      ["NOTE", "//evil.example"],
      ["NOTE", "10.0.0.1:8080"],
      ["NOTE", "evil.example.com/path"],
      ["NOTE", "www.evil.example"],
    ]) {
      const response = await env.put({ [key!]: value! });
      expect([key, value, response.status]).toEqual([key, value, 400]);
      const body = (await response.json()) as { code: string; key: string };
      expect(body.code).toBe("env_url_not_allowed");
      expect(body.key).toBe(key);
      if (key === "NOTE") expect(JSON.stringify(body)).not.toContain(value!);
    }
    // Nothing was stored by the refusals; ordinary values pass.
    expect(await json<Metadata>(await env.get())).toMatchObject({ status: "unset" });
    expect(
      (await env.put({ MODEL_NAME: "gpt-4o.mini", RATIO: "1.5", HOSTED_MODE: "no" })).status,
    ).toBe(200);
  });

  it("holds the limits: 64 keys, the key pattern, 16 KiB a value, 128 KiB in all", async () => {
    const { miner, id } = await owned();
    const env = call(miner, id);
    const many = (n: number, size = 1) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, "v".repeat(size)]));
    expect((await env.put(many(64))).status).toBe(200);
    expect((await env.put(many(65))).status).toBe(422);
    expect((await env.put({ "1BAD": "x" })).status).toBe(422);
    expect((await env.put({ "BAD-KEY": "x" })).status).toBe(422);
    // 16 KiB of bytes, not characters: 8,193 two-byte characters are 16,386 bytes.
    expect(await code(await env.put({ BIG: "é".repeat(8193) }))).toBe("env_value_too_large");
    expect((await env.put({ BIG: "v".repeat(16 * 1024) })).status).toBe(200);
    expect(await code(await env.put(many(9, 16 * 1024 - 8)))).toBe("env_too_large");
  });

  it("gates launch on a set or confirmed env (412), then locks it (409)", async () => {
    const { miner, id } = await owned();
    const env = call(miner, id);
    const refused = await env.launch();
    expect(refused.status).toBe(412);
    expect(await code(refused)).toBe("env_not_confirmed");
    expect(await json<Metadata>(await env.confirmEmpty())).toMatchObject({
      status: "empty",
      keys: [],
      revision: 1,
    });
    const launched = await json<{ env_status: string; env_revision: number; launched_at: string }>(
      await env.launch(),
    );
    expect(launched).toMatchObject({ env_status: "empty", env_revision: 1 });
    // A repeat answers the recorded launch.
    expect(await json(await env.launch())).toEqual(launched);
    expect(await json<Metadata>(await env.get())).toMatchObject({ locked: true });
    const put = await env.put({ LATE: "1" });
    expect(put.status).toBe(409);
    expect(await code(put)).toBe("env_locked");
    expect(await code(await env.confirmEmpty())).toBe("env_locked");
    // The database refuses a write to a locked env whatever the code path.
    await expect(
      t.sql`update submission_env set revision = 99 where submission_id = ${id}`,
    ).rejects.toThrow(/locked/);
  });

  it("answers only the submission's hotkey", async () => {
    const { miner, id } = await owned();
    const stranger = await createMinerKey();
    for (const response of [
      await call(stranger, id).get(),
      await call(stranger, id).put({ A: "1" }),
      await call(stranger, id).confirmEmpty(),
      await call(stranger, id).launch(),
    ]) {
      expect(response.status).toBe(403);
      expect(await code(response)).toBe("not_submission_owner");
    }
    expect((await call(miner, 999_999).get()).status).toBe(404);
    expect(await json<Metadata>(await call(miner, id).get())).toMatchObject({ status: "unset" });
  });
});

describe("env URL checks", () => {
  it("are whole-word on keys and stay linear on adversarial values (8 and 64 KiB)", () => {
    expect(isLocationKey("API_KEY_HOSTED")).toBe(false);
    expect(isLocationKey("webhook")).toBe(true);
    const shapes: ((kib: number) => string)[] = [
      (kib) => "a".repeat(kib * 1024),
      (kib) => "a.".repeat(kib * 512),
      (kib) => "1.".repeat(kib * 512),
      (kib) => `${"a-".repeat(kib * 512)}:`,
      (kib) => `1.2.3.4${" ".repeat(kib * 1024)}x`,
    ];
    // CPU per call, best of three, repeated until the larger input costs a measurable amount.
    const cost = (input: string, times: number) =>
      Math.min(
        ...[0, 1, 2].map(() => {
          const start = process.cpuUsage();
          for (let i = 0; i < times; i++) isUrlShaped(input);
          const used = process.cpuUsage(start);
          return (used.user + used.system) / times;
        }),
      );
    for (const shape of shapes) {
      const small = shape(8);
      const large = shape(64);
      let times = 1;
      while (cost(large, times) * times < 2_000 && times < 1 << 10) times *= 2;
      // Linear grows 8 times, quadratic 64: the growth is asserted, never a time.
      const growth = cost(large, times) / Math.max(cost(small, times * 8), 0.01);
      expect(
        growth,
        `${JSON.stringify(small.slice(0, 12))}... grew ${growth.toFixed(1)}x`,
      ).toBeLessThan(24);
    }
  });
});
