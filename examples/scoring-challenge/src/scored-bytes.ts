/**
 * What a run is scored on, drawn so that no bundle can know it when it is written
 * (docs/challenges/scoring.md, "What a miner can know in advance"):
 *
 * - the STREAM (charged prequentially, handed to the bundle batch by batch) is the same for every
 *   run of an epoch, so scores within an epoch compare: `windowBytes`-sized windows of the pool's
 *   training part at places drawn from the epoch's seed, HMAC-SHA256(the challenge's secret,
 *   epoch id). Nothing outside the service knows the secret, so nothing knows the places before
 *   the epoch; after it, the bytes are worthless (the next epoch draws anew);
 * - the HOLDOUT (never handed to the bundle: the scorer evaluates its rows beside each charged
 *   batch) is drawn fresh for every run from the pool's held-out part with the OS's randomness:
 *   bytes a bundle saw in an earlier run of the epoch, and leaked out through its error message,
 *   say nothing about the holdout of the next run. The gap between the two is what score.ts
 *   checks (the memorisation gap).
 *
 * The pool must be far larger than anything a bundle can carry; the ratio is in the docs.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { type Corpus, CorpusError, type CorpusSlices } from "./corpus.js";

/** Bytes of one stream window: eight rows of the default 128, so a window is a short passage. */
export const DEFAULT_WINDOW_BYTES = 1024;

const SEED_DOMAIN = "platform-scoring-windows-v1";

/** The epoch's seed: HMAC-SHA256(secret, domain || epoch id). */
export function epochSeed(secret: Uint8Array, epochId: number): Buffer {
  if (!Number.isSafeInteger(epochId) || epochId < 0) {
    throw new RangeError(`an epoch id is a whole number >= 0, got ${epochId}`);
  }
  return createHmac("sha256", secret).update(`${SEED_DOMAIN}\0${epochId}`).digest();
}

/**
 * A deterministic source of uniform integers from a seed: SHAKE-256(seed || counter) blocks,
 * read 48 bits at a time, with rejection so every value in [0, n) is equally likely.
 */
export class SeededDraws {
  private block = Buffer.alloc(0);
  private offset = 0;
  private counter = 0;

  constructor(private readonly seed: Uint8Array) {}

  /** A uniform integer in [0, n), n at most 2^48. */
  below(n: number): number {
    if (!Number.isSafeInteger(n) || n < 1 || n > 2 ** 48) {
      throw new RangeError(`draws are from 1..2^48 values, got ${n}`);
    }
    const limit = 2 ** 48 - (2 ** 48 % n);
    for (;;) {
      const value = this.next48();
      if (value < limit) return value % n;
    }
  }

  private next48(): number {
    if (this.offset + 6 > this.block.length) {
      const counter = Buffer.alloc(8);
      counter.writeBigUInt64BE(BigInt(this.counter++));
      this.block = createHash("shake256", { outputLength: 1536 })
        .update(this.seed)
        .update(counter)
        .digest();
      this.offset = 0;
    }
    const value = this.block.readUIntBE(this.offset, 6);
    this.offset += 6;
    return value;
  }
}

/** An epoch's stream: its bytes and where each window was taken from (for audits). */
export interface EpochStream {
  stream: Buffer;
  streamSha256: string;
  /** Offsets into the pool's training bytes, in stream order. */
  windows: number[];
}

// Draws that land on a window already taken are drawn again, this many times at most: a pool
// that small is a development pool, and a repeated passage there changes nothing.
const OVERLAP_REDRAWS = 32;

/**
 * The `tokenBudget` bytes of the stream for the epoch whose seed is `seed`: consecutive windows of
 * `windowBytes` from the pool's training part, none overlapping another when the pool allows.
 */
export function epochStream(
  corpus: Corpus,
  seed: Uint8Array,
  tokenBudget: number,
  windowBytes: number = DEFAULT_WINDOW_BYTES,
): EpochStream {
  if (!Number.isSafeInteger(tokenBudget) || tokenBudget < 2) {
    throw new CorpusError(`the token budget must be a whole number >= 2, got ${tokenBudget}`);
  }
  if (!Number.isSafeInteger(windowBytes) || windowBytes < 2) {
    throw new CorpusError(`the window must be a whole number of bytes >= 2, got ${windowBytes}`);
  }
  const training = corpus.training;
  if (training.length < Math.max(windowBytes, 2 * tokenBudget)) {
    throw new CorpusError(
      `the corpus's ${training.length} training bytes are too few to draw a stream of ${tokenBudget} ` +
        `bytes from (at least twice that is needed; corpus version ${corpus.version})`,
    );
  }
  const draws = new SeededDraws(seed);
  const places = training.length - windowBytes + 1;
  const taken: number[] = [];
  const windows: number[] = [];
  const parts: Buffer[] = [];
  for (let filled = 0; filled < tokenBudget; filled += windowBytes) {
    let start = draws.below(places);
    for (
      let redraw = 0;
      redraw < OVERLAP_REDRAWS && overlaps(taken, start, windowBytes);
      redraw++
    ) {
      start = draws.below(places);
    }
    taken.push(start);
    windows.push(start);
    parts.push(training.subarray(start, start + Math.min(windowBytes, tokenBudget - filled)));
  }
  const stream = Buffer.concat(parts);
  return { stream, streamSha256: sha256Hex(stream), windows };
}

function overlaps(taken: number[], start: number, length: number): boolean {
  return taken.some((other) => start < other + length && other < start + length);
}

/**
 * A run's holdout: `floor(holdoutBytes / rowBytes)` rows of `rowBytes`, each from a place in the
 * pool's held-out part drawn with `random` (the OS's randomness by default), laid end to end.
 * The scorer reads it as rows of `rowBytes` (run.json's sequence_length).
 */
export function runHoldout(
  corpus: Corpus,
  holdoutBytes: number,
  rowBytes: number,
  random: (size: number) => Buffer = randomBytes,
): { holdout: Buffer; holdoutSha256: string } {
  const held = corpus.holdout;
  if (!Number.isSafeInteger(rowBytes) || rowBytes < 2 || held.length < rowBytes) {
    throw new CorpusError(
      `the corpus's ${held.length} held-out bytes cannot give rows of ${rowBytes} bytes`,
    );
  }
  const count = Math.max(1, Math.floor(holdoutBytes / rowBytes));
  const draws = new SeededDraws(random(32));
  const rows: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const start = draws.below(held.length - rowBytes + 1);
    rows.push(held.subarray(start, start + rowBytes));
  }
  const holdout = Buffer.concat(rows);
  return { holdout, holdoutSha256: sha256Hex(holdout) };
}

/** What one run of an epoch is scored on: the epoch's stream and a fresh holdout. */
export function scoredBytes(
  corpus: Corpus,
  seed: Uint8Array,
  options: { tokenBudget: number; holdoutBytes: number; rowBytes: number; windowBytes?: number },
): CorpusSlices {
  const { stream, streamSha256 } = epochStream(
    corpus,
    seed,
    options.tokenBudget,
    options.windowBytes,
  );
  return {
    stream,
    streamSha256,
    ...runHoldout(corpus, options.holdoutBytes, options.rowBytes),
  };
}

function sha256Hex(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}
