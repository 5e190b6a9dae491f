/**
 * A deterministic source of randomness for instance generators: HMAC-SHA256 of a 32-byte key in
 * counter mode, read 4 bytes at a time. The same key gives the same draws in every process and
 * version of Node (no Math.random, no engine-specific PRNG), which is what lets a replay audit
 * regenerate a run's instances exactly.
 */
import { createHmac } from "node:crypto";

/** What a generator draws from (also the contract of an operator's family). */
export interface SeededRandom {
  /** A uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** One element of `items`, uniformly. */
  pick<T>(items: readonly T[]): T;
  /** A shuffled copy of `items` (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[];
  /** A word of `min`..`max` letters from `alphabet` (lower-case a-z by default). */
  word(min: number, max: number, alphabet?: string): string;
}

const LOWER = "abcdefghijklmnopqrstuvwxyz";

export function seededRandom(key: Buffer): SeededRandom {
  let counter = 0;
  let block = Buffer.alloc(0);
  let offset = 0;
  const uint32 = (): number => {
    if (offset + 4 > block.length) {
      const index = Buffer.alloc(8);
      index.writeBigUInt64BE(BigInt(counter++));
      block = createHmac("sha256", key).update(index).digest();
      offset = 0;
    }
    const value = block.readUInt32BE(offset);
    offset += 4;
    return value;
  };
  const int = (min: number, max: number): number => {
    if (!Number.isInteger(min) || !Number.isInteger(max) || max < min || max - min >= 2 ** 32) {
      throw new RangeError(`int(${min}, ${max}): not a range of integers`);
    }
    const span = max - min + 1;
    // Rejection sampling: no modulo bias, so every value of the range is equally likely.
    const limit = 2 ** 32 - (2 ** 32 % span);
    let value = uint32();
    while (value >= limit) value = uint32();
    return min + (value % span);
  };
  const random: SeededRandom = {
    int,
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list");
      return items[int(0, items.length - 1)] as (typeof items)[number];
    },
    shuffle: (items) => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i -= 1) {
        const j = int(0, i);
        [copy[i], copy[j]] = [copy[j]!, copy[i]!];
      }
      return copy;
    },
    word: (min, max, alphabet = LOWER) => {
      let text = "";
      for (let n = int(min, max); n > 0; n -= 1) text += alphabet[int(0, alphabet.length - 1)];
      return text;
    },
  };
  return random;
}
