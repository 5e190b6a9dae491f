/**
 * What a run is scored on, drawn so that no bundle can know it when it is written
 * (docs/challenges/scoring.md, "What a miner can know in advance"). Two samples, built alike:
 *
 * - the STREAM, charged prequentially and handed to the bundle batch by batch;
 * - the HOLDOUT, never handed to the bundle: the scorer evaluates it beside the batches with the
 *   same model at the same moment (run.py).
 *
 * Both are the same for every run of an epoch (so scores within an epoch compare) and drawn at
 * places only the epoch's seed decides, HMAC-SHA256(the challenge's secret, epoch id): nothing
 * outside the service knows them before the epoch, and the next epoch draws anew. A window is one
 * row (sequence_length − 1 bytes by default), so an honest model predicts both samples alike:
 * neither gives it a passage to adapt to as it reads. A bundle that carries the stream (its bytes
 * leaked from an earlier run of the epoch, through an error message) predicts it far better than
 * the holdout, which never leaves the scorer: score.ts counts the worse of the two.
 *
 * The pool must be far larger than anything a bundle can carry; the ratio is in the docs.
 */
import { createHash, createHmac } from "node:crypto";
import { type Corpus, CorpusError, type CorpusSlices, sha256Hex } from "./corpus.js";
import { DEFAULT_SEQUENCE_LENGTH } from "./harness-task.js";

/** Bytes of one window: one row of the default length (rows overlap by a byte). */
export const DEFAULT_WINDOW_BYTES = DEFAULT_SEQUENCE_LENGTH - 1;

const SEED_DOMAIN = "platform-scoring-windows-v2";

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

/** A sample of the pool: its bytes and where each window was taken from (for audits). */
export interface DrawnSample {
  bytes: Buffer;
  /** Offsets into the part of the pool it was drawn from, in order. */
  windows: number[];
}

// Draws that land on a window already taken are drawn again, this many times at most: a pool
// that small is a development pool, and a repeated passage there changes nothing.
const OVERLAP_REDRAWS = 32;

/**
 * `total` bytes of consecutive windows of `windowBytes` from `part`, at places drawn from `seed`,
 * none overlapping another when the part allows.
 */
export function drawWindows(
  part: Buffer,
  seed: Uint8Array,
  total: number,
  windowBytes: number = DEFAULT_WINDOW_BYTES,
): DrawnSample {
  if (!Number.isSafeInteger(total) || total < 2) {
    throw new CorpusError(`a sample must be a whole number of bytes >= 2, got ${total}`);
  }
  if (!Number.isSafeInteger(windowBytes) || windowBytes < 2) {
    throw new CorpusError(`the window must be a whole number of bytes >= 2, got ${windowBytes}`);
  }
  if (part.length < Math.max(windowBytes, 2 * total)) {
    throw new CorpusError(
      `${part.length} bytes of the pool are too few to draw ${total} bytes from (at least twice that is needed)`,
    );
  }
  const draws = new SeededDraws(seed);
  const places = part.length - windowBytes + 1;
  const windows: number[] = [];
  const pieces: Buffer[] = [];
  for (let filled = 0; filled < total; filled += windowBytes) {
    let start = draws.below(places);
    for (
      let redraw = 0;
      redraw < OVERLAP_REDRAWS && overlaps(windows, start, windowBytes);
      redraw++
    ) {
      start = draws.below(places);
    }
    windows.push(start);
    pieces.push(part.subarray(start, start + Math.min(windowBytes, total - filled)));
  }
  return { bytes: Buffer.concat(pieces), windows };
}

function overlaps(taken: number[], start: number, length: number): boolean {
  return taken.some((other) => start < other + length && other < start + length);
}

/**
 * What every run of the epoch whose seed is `seed` is scored on: `tokenBudget` bytes of stream and
 * `holdoutBytes` of holdout, from one draw of non-overlapping windows over the whole pool (the
 * manifest's held-out range included: no part of the pool is special any more), the first windows
 * the stream's and the rest the holdout's. The two samples are exchangeable: an honest model's
 * cost on one is its cost on the other, up to sampling noise.
 */
export function scoredBytes(
  corpus: Corpus,
  seed: Uint8Array,
  options: { tokenBudget: number; holdoutBytes: number; windowBytes?: number },
): CorpusSlices & { streamWindows: number[]; holdoutWindows: number[] } {
  const width = options.windowBytes ?? DEFAULT_WINDOW_BYTES;
  const streamWindows = Math.ceil(options.tokenBudget / width);
  const holdoutWindows = Math.ceil(options.holdoutBytes / width);
  let drawn: DrawnSample;
  try {
    drawn = drawWindows(corpus.data, seed, (streamWindows + holdoutWindows) * width, width);
  } catch (error) {
    if (!(error instanceof CorpusError)) throw error;
    throw new CorpusError(`${error.message} (corpus version ${corpus.version})`);
  }
  const stream = drawn.bytes.subarray(0, options.tokenBudget);
  const holdoutStart = streamWindows * width;
  const holdout = drawn.bytes.subarray(holdoutStart, holdoutStart + options.holdoutBytes);
  return {
    stream,
    streamSha256: sha256Hex(stream),
    streamWindows: drawn.windows.slice(0, streamWindows),
    holdout,
    holdoutSha256: sha256Hex(holdout),
    holdoutWindows: drawn.windows.slice(streamWindows),
  };
}
