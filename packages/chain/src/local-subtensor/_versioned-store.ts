import { blake2_256Stream, fromHex } from "./_bytes.js";

/**
 * A value computed on its first read and kept: for values that cost real work to produce and
 * that few readers ever ask for (a drand pulse's BLS signature). `digest` stands for the value
 * in the block's state digest, so producing a block never forces it.
 */
export interface DeferredValue {
  readonly digest: Uint8Array;
  value(): Uint8Array;
}

type Stored = Uint8Array | DeferredValue | null;

interface History {
  blocks: number[];
  values: Stored[];
}

const isDeferred = (value: Stored): value is DeferredValue =>
  value !== null && !(value instanceof Uint8Array);

/** Wraps `compute` so it runs once, on the first read. */
export function deferredValue(digest: Uint8Array, compute: () => Uint8Array): DeferredValue {
  let cached: Uint8Array | undefined;
  return {
    digest,
    value() {
      cached ??= compute();
      return cached;
    },
  };
}

/**
 * The chain's key-value state with an append-only history per key, so a read at any of the
 * last `keep` blocks sees that block's state. Writes belong to the block opened by `begin`;
 * a block costs only the keys it writes, never a copy of the whole state.
 */
export class VersionedStore {
  readonly #history = new Map<string, History>();
  readonly #keep: number;
  #sorted: string[] = [];
  #unsorted = false;
  #block = 0;
  #written = new Set<string>();
  #sinceSweep = 0;

  /** Keeps enough history to read any of the last `keep` blocks. */
  constructor(keep: number) {
    this.#keep = Math.max(1, keep);
  }

  /** The block later writes belong to. */
  get block(): number {
    return this.#block;
  }

  /** Opens `block` for writing (it must be newer than every block written so far). */
  begin(block: number): void {
    if (block < this.#block) throw new Error(`block ${block} is older than ${this.#block}`);
    this.#block = block;
    this.#written = new Set();
    this.#sinceSweep += 1;
    if (this.#sinceSweep >= this.#keep) {
      this.#sinceSweep = 0;
      this.#sweep();
    }
  }

  /** 32 bytes that depend on every key the open block wrote and its value now. */
  writesDigest(): Uint8Array {
    // Each key once, with its final value: a block writing one big value many times (4,096
    // registrations growing LastUpdate) hashes it once.
    const hash = blake2_256Stream();
    for (const key of [...this.#written].sort()) {
      hash.update(fromHex(key, "storage key"));
      const value = this.#raw(key, this.#block);
      hash.update(
        value === null ? new Uint8Array([0]) : new Uint8Array([isDeferred(value) ? 2 : 1]),
      );
      if (value !== null) hash.update(isDeferred(value) ? value.digest : value);
    }
    return hash.digest();
  }

  /** Sets `key` (0x-hex) to `value` in the open block; `null` deletes it. */
  set(key: string, value: Uint8Array | DeferredValue | null): void {
    this.#written.add(key);
    let history = this.#history.get(key);
    if (!history) {
      if (value === null) return;
      history = { blocks: [], values: [] };
      this.#history.set(key, history);
      this.#sorted.push(key);
      this.#unsorted = true;
    }
    const last = history.blocks.length - 1;
    if (last >= 0 && history.blocks[last] === this.#block) {
      history.values[last] = value;
    } else {
      history.blocks.push(this.#block);
      history.values.push(value);
    }
    this.#trim(history);
  }

  /** The value of `key` at block `at` (default: the open block), or null when absent. */
  get(key: string, at = this.#block): Uint8Array | null {
    const value = this.#raw(key, at);
    return isDeferred(value) ? value.value() : value;
  }

  /** Whether `key` exists at block `at`, without computing a deferred value. */
  has(key: string, at = this.#block): boolean {
    return this.#raw(key, at) !== null;
  }

  #raw(key: string, at: number): Stored {
    const history = this.#history.get(key);
    if (!history) return null;
    const { blocks, values } = history;
    // Last entry written at or before `at`.
    let lo = 0;
    let hi = blocks.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((blocks[mid] as number) <= at) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? null : (values[found] ?? null);
  }

  /**
   * Up to `count` keys that start with `prefix`, exist at block `at` and sort after `startKey`
   * (byte order), as `state_getKeysPaged` pages them.
   */
  keysPaged(prefix: string, count: number, startKey: string | undefined, at: number): string[] {
    if (this.#unsorted) {
      this.#sorted.sort();
      this.#unsorted = false;
    }
    const sorted = this.#sorted;
    const from = startKey !== undefined && startKey > prefix ? startKey : prefix;
    // First key >= from; skip `startKey` itself (pages resume after it).
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((sorted[mid] as string) < from) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < sorted.length && out.length < count; i++) {
      const key = sorted[i] as string;
      if (!key.startsWith(prefix)) break;
      if (key === startKey) continue;
      if (this.has(key, at)) out.push(key);
    }
    return out;
  }

  /** Number of keys with any retained history (for tests and status). */
  get size(): number {
    return this.#history.size;
  }

  // Drops entries no retained block can read: everything before the newest entry at or
  // before the oldest retained block.
  #trim(history: History): void {
    const horizon = this.#block - this.#keep;
    let drop = 0;
    while (drop + 1 < history.blocks.length && (history.blocks[drop + 1] as number) <= horizon) {
      drop += 1;
    }
    if (drop > 0) {
      history.blocks.splice(0, drop);
      history.values.splice(0, drop);
    }
  }

  #sweep(): void {
    const horizon = this.#block - this.#keep;
    let removed = false;
    for (const [key, history] of this.#history) {
      this.#trim(history);
      if (
        history.blocks.length === 1 &&
        history.values[0] === null &&
        (history.blocks[0] as number) <= horizon
      ) {
        this.#history.delete(key);
        removed = true;
      }
    }
    if (removed) this.#sorted = this.#sorted.filter((k) => this.#history.has(k));
  }
}
