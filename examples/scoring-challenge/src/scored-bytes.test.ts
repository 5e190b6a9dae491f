import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Corpus } from "./corpus.js";
import { drawWindows, epochSeed, SeededDraws, scoredBytes } from "./scored-bytes.js";

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

const options = { tokenBudget: 16384, holdoutBytes: 8192 };

describe("an epoch's scored bytes", () => {
  const corpus = pool(1 << 20, 64 << 10);

  it("are the same for every run of an epoch, and other bytes in the next epoch", () => {
    const a = scoredBytes(corpus, epochSeed(secret, 100), options);
    const again = scoredBytes(corpus, epochSeed(secret, 100), options);
    const next = scoredBytes(corpus, epochSeed(secret, 101), options);
    expect(again.streamSha256).toBe(a.streamSha256);
    expect(again.holdoutSha256).toBe(a.holdoutSha256);
    expect(a.stream.length).toBe(16384);
    expect(a.holdout.length).toBe(8192);
    expect(next.streamSha256).not.toBe(a.streamSha256);
    expect(next.holdoutSha256).not.toBe(a.holdoutSha256);
  });

  it("are windows of one row from anywhere in the pool, never overlapping", () => {
    const a = scoredBytes(corpus, epochSeed(secret, 5), options);
    expect(a.streamWindows).toHaveLength(Math.ceil(16384 / 127));
    const sorted = [...a.streamWindows].sort((x, y) => x - y);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(127);
    expect(new Set(a.streamWindows.map((start) => start >> 18)).size).toBeGreaterThanOrEqual(4);
    a.streamWindows.slice(0, -1).forEach((start, index) => {
      expect(a.stream.subarray(index * 127, (index + 1) * 127)).toEqual(
        corpus.data.subarray(start, start + 127),
      );
    });
    // Not the pool's first bytes (what a bundle memorising the old stream carried).
    expect(a.stream.subarray(0, 127).equals(corpus.training.subarray(0, 127))).toBe(false);
  });

  it("draw the stream and the holdout alike from the whole pool, never the same window", () => {
    const a = scoredBytes(corpus, epochSeed(secret, 6), options);
    const all = [...a.streamWindows, ...a.holdoutWindows].sort((x, y) => x - y);
    for (let i = 1; i < all.length; i++) expect(all[i]! - all[i - 1]!).toBeGreaterThanOrEqual(127);
    a.holdoutWindows.slice(0, -1).forEach((start, index) => {
      expect(a.holdout.subarray(index * 127, (index + 1) * 127)).toEqual(
        corpus.data.subarray(start, start + 127),
      );
    });
    // The held-out range is part of the pool like the rest: windows land in it too.
    const inHeld = (start: number) => start >= corpus.training.length;
    expect(all.some(inHeld)).toBe(true);
    expect(all.every(inHeld)).toBe(false);
  });

  it("depend on the secret: without it, an epoch's windows cannot be drawn", () => {
    const other = Buffer.alloc(32, 8);
    expect(scoredBytes(corpus, epochSeed(other, 100), options).streamSha256).not.toBe(
      scoredBytes(corpus, epochSeed(secret, 100), options).streamSha256,
    );
    expect(epochSeed(secret, 1)).not.toEqual(epochSeed(secret, 2));
    expect(() => epochSeed(secret, -1)).toThrow(RangeError);
  });

  it("refuse a pool too small to draw from, naming its version", () => {
    expect(() => scoredBytes(pool(16384, 4096), epochSeed(secret, 1), options)).toThrow(
      /too few to draw 24765 bytes .*corpus version 1/,
    );
    expect(() => drawWindows(Buffer.alloc(100), secret, 10, 1)).toThrow(
      /whole number of bytes >= 2/,
    );
  });

  it("draw windows uniformly over the pool", () => {
    // 2,000 draws over 8 eighths: each eighth gets its share within 5 sigma.
    const draws = new SeededDraws(epochSeed(secret, 9));
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 2000; i++) counts[Math.floor(draws.below(8 * 1000) / 1000)]++;
    for (const count of counts)
      expect(Math.abs(count - 250)).toBeLessThan(5 * Math.sqrt(250 * (7 / 8)));
  });
});
