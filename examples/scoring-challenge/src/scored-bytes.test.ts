import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Corpus } from "./corpus.js";
import { epochSeed, epochStream, runHoldout, SeededDraws, scoredBytes } from "./scored-bytes.js";

const sha = (data: Buffer) => createHash("sha256").update(data).digest("hex");

/** A pool of `training` bytes (each position distinct enough to locate) and `held` held out. */
function pool(training: number, held: number): Corpus {
  const bytes = (length: number, salt: string) => {
    const out = Buffer.alloc(length);
    for (let offset = 0; offset < length; offset += 32) {
      createHash("sha256").update(`${salt}${offset}`).digest().copy(out, offset);
    }
    return out;
  };
  const trainingBytes = bytes(training, "t");
  const holdout = bytes(held, "h");
  const data = Buffer.concat([trainingBytes, holdout]);
  return {
    version: 1,
    sha256: sha(data),
    data,
    holdout,
    holdoutSha256: sha(holdout),
    training: trainingBytes,
  };
}

const secret = Buffer.alloc(32, 7);

describe("an epoch's stream", () => {
  const corpus = pool(1 << 20, 64 << 10);

  it("is the same bytes for every run of an epoch, and other bytes in the next epoch", () => {
    const a = epochStream(corpus, epochSeed(secret, 100), 16384, 1024);
    const again = epochStream(corpus, epochSeed(secret, 100), 16384, 1024);
    const next = epochStream(corpus, epochSeed(secret, 101), 16384, 1024);
    expect(again.streamSha256).toBe(a.streamSha256);
    expect(a.stream.length).toBe(16384);
    expect(next.streamSha256).not.toBe(a.streamSha256);
    // Windows from anywhere in the pool, never overlapping each other.
    const sorted = [...a.windows].sort((x, y) => x - y);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(1024);
    expect(new Set(a.windows.map((start) => start >> 18)).size).toBeGreaterThan(1);
  });

  it("is not the pool's first bytes (what a bundle memorising the old stream carried)", () => {
    const { stream, windows } = epochStream(corpus, epochSeed(secret, 5), 65536, 1024);
    expect(stream.subarray(0, 1024).equals(corpus.training.subarray(0, 1024))).toBe(false);
    expect(windows).toHaveLength(64);
    windows.forEach((start, index) => {
      expect(stream.subarray(index * 1024, (index + 1) * 1024)).toEqual(
        corpus.training.subarray(start, start + 1024),
      );
    });
  });

  it("depends on the secret: without it, an epoch's windows cannot be drawn", () => {
    const other = Buffer.alloc(32, 8);
    expect(epochStream(corpus, epochSeed(other, 100), 8192).streamSha256).not.toBe(
      epochStream(corpus, epochSeed(secret, 100), 8192).streamSha256,
    );
    expect(epochSeed(secret, 1)).not.toEqual(epochSeed(secret, 2));
    expect(() => epochSeed(secret, -1)).toThrow(RangeError);
  });

  it("refuses a pool too small to draw from", () => {
    expect(() => epochStream(pool(4096, 1024), epochSeed(secret, 1), 4096)).toThrow(/too few/);
  });

  it("draws windows uniformly over the pool", () => {
    // 2,000 windows over 8 eighths of the pool: each eighth gets its share within 5 sigma.
    const draws = new SeededDraws(epochSeed(secret, 9));
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 2000; i++) counts[Math.floor(draws.below(8 * 1000) / 1000)]++;
    for (const count of counts)
      expect(Math.abs(count - 250)).toBeLessThan(5 * Math.sqrt(250 * (7 / 8)));
  });
});

describe("a run's holdout", () => {
  const corpus = pool(1 << 20, 64 << 10);

  it("is drawn anew for every run, as rows of the held-out part", () => {
    const one = runHoldout(corpus, 8192, 128);
    const two = runHoldout(corpus, 8192, 128);
    expect(one.holdout.length).toBe(8192);
    expect(one.holdoutSha256).not.toBe(two.holdoutSha256);
    for (let row = 0; row < 64; row++) {
      const bytes = one.holdout.subarray(row * 128, (row + 1) * 128);
      expect(corpus.holdout.indexOf(bytes)).toBeGreaterThanOrEqual(0);
      expect(corpus.training.indexOf(bytes)).toBe(-1);
    }
  });

  it("never touches the stream: the stream is the epoch's, the holdout the run's", () => {
    const seed = epochSeed(secret, 3);
    const options = { tokenBudget: 8192, holdoutBytes: 4096, rowBytes: 128 };
    const a = scoredBytes(corpus, seed, options);
    const b = scoredBytes(corpus, seed, options);
    expect(a.streamSha256).toBe(b.streamSha256);
    expect(a.holdoutSha256).not.toBe(b.holdoutSha256);
  });
});
