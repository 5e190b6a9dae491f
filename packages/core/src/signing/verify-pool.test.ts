import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { u8aWrapBytes } from "@polkadot/util";
import { sr25519Sign } from "@polkadot/util-crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { initCrypto } from "./init-crypto.js";
import { keypairFromSeed, type Sr25519Keypair } from "./keys.js";
import { signMessage } from "./signature.js";
import { signRequest, verifySignedRequest } from "./signed-request.js";
import { createVerifyPool, type VerifyPool } from "./verify-pool.js";

// Records every worker the pool starts, so a test can kill one the way a crash would.
const started = vi.hoisted(() => [] as Worker[]);
vi.mock("node:worker_threads", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:worker_threads")>();
  class RecordedWorker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      super(...args);
      started.push(this);
    }
  }
  return { ...real, Worker: RecordedWorker };
});

let pool: VerifyPool;
let pair: Sr25519Keypair;

beforeAll(async () => {
  await initCrypto();
  pair = keypairFromSeed(`0x${"33".repeat(32)}`);
  pool = await createVerifyPool({ size: 2 });
});
afterAll(() => pool.close());

describe("createVerifyPool", () => {
  it("verifies like verifySignature, including the wrapped form", async () => {
    const signature = signMessage(pair, "hello");
    expect(await pool.verify("hello", signature, pair.address)).toBe(true);
    expect(await pool.verify("hellO", signature, pair.address)).toBe(false);
    const wrapped = sr25519Sign(u8aWrapBytes(new TextEncoder().encode("hello")), pair);
    expect(await pool.verify("hello", Buffer.from(wrapped).toString("hex"), pair.address)).toBe(
      true,
    );
    expect(await pool.verify("hello", "0x12", pair.address)).toBe(false);
    expect(await pool.verify("hello", signature, "nope")).toBe(false);
  });

  it("keeps every answer with its own job under concurrency", async () => {
    const messages = Array.from({ length: 300 }, (_, i) => `message ${i}`);
    const signatures = messages.map((m, i) => signMessage(pair, i % 3 === 0 ? `${m}!` : m));
    const results = await Promise.all(
      messages.map((m, i) => pool.verify(m, signatures[i]!, pair.address)),
    );
    expect(results).toEqual(messages.map((_, i) => i % 3 !== 0));
  });

  it("gives the same results and codes as verifySignedRequest", async () => {
    const headers = signRequest(pair, {
      method: "POST",
      url: "/challenges/demo/submissions",
      body: "x",
      slug: "demo",
      timestamp: 1000,
      nonce: "0123456789abcdef",
    });
    const input = {
      headers,
      method: "POST",
      pathWithQuery: "/challenges/demo/submissions",
      body: "x",
      slug: "demo",
      now: 1000,
    };
    for (const variant of [
      input,
      { ...input, body: "y" },
      { ...input, now: 2000 },
      { ...input, headers: { ...headers, "X-Nonce": "bad" } },
    ]) {
      expect(await pool.verifySignedRequest(variant)).toEqual(verifySignedRequest(variant));
    }
    expect(await pool.verifySignedRequest(input)).toMatchObject({ ok: true, hotkey: pair.address });
  });

  it("sizes itself to the machine by default and refuses new work once closed", async () => {
    const own = await createVerifyPool();
    expect(own.size).toBe(availableParallelism());
    const signature = signMessage(pair, "m");
    const inFlight = expect(own.verify("m", signature, pair.address)).rejects.toThrow(/closed/);
    await own.close();
    await inFlight;
    await expect(own.verify("m", signature, pair.address)).rejects.toThrow(/closed/);
  });

  it("replaces a worker that dies and keeps answering", async () => {
    const small = await createVerifyPool({ size: 1 });
    try {
      const signature = signMessage(pair, "m");
      const victim = started.at(-1)!;
      // Enough work (~100 ms) that the kill lands while most of it is still in the worker.
      const batch = Array.from({ length: 300 }, () => small.verify("m", signature, pair.address));
      await new Promise((resolve) => setImmediate(resolve)); // let the batch reach the worker
      await victim.terminate();
      const settled = await Promise.allSettled(batch);
      const lost = settled.filter((r) => r.status === "rejected");
      expect(lost.length).toBeGreaterThan(0);
      expect(String((lost[0] as PromiseRejectedResult).reason)).toMatch(/exited/);
      expect(await small.verify("m", signature, pair.address)).toBe(true);
      expect(started.at(-1)).not.toBe(victim);
    } finally {
      await small.close();
    }
  });

  it("refuses a nonsensical size", async () => {
    await expect(createVerifyPool({ size: 0 })).rejects.toThrow(RangeError);
  });
});
