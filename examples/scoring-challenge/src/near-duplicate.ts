/**
 * Near-duplicate detection by token shingles over the code that can run. A bundle's fingerprint
 * is the set of hashed windows of SHINGLE_TOKENS tokens over the code of its Python files that
 * the harness's entry points can reach (python-reachability.ts): a module nothing imports, a
 * function nothing calls, statements after a `return`, are not in it, so padding a copy with
 * dead code does not dilute its similarity. Each window is normalised so that a consistent
 * rename leaves it unchanged: names are numbered by first appearance inside the window
 * (`x = x + y` and `total = total + step` are both `v0 = v0 + v1`), numbers and strings become
 * their kind, comments and whitespace are gone, and so are type annotations and docstrings
 * (python-cosmetics.ts). Numbering inside the window, not the file, keeps an inserted line from
 * shifting every later window. What a rewrite by hand changes (the structure itself) is past any
 * token measure: the behavioural check (behaviour-signature.ts) answers that copy.
 *
 * Two bundles are near-duplicates when the Jaccard similarity of their shingle sets is at least
 * NEAR_DUPLICATE_THRESHOLD. A MinHash signature, cut into LSH bands, finds the candidates
 * without reading every earlier bundle; the decision is always the exact Jaccard.
 *
 * Why Jaccard over the reachable code, and not each file against its best-matching file, or
 * containment (how much of the earlier bundle the new one holds): per file only stops padding
 * kept in other files (measured on `good` padded inside its own two files, per file scores
 * 0.29 to 0.54; after this pass, 1.0), and a copy escapes it by moving classes between files.
 * Containment ignores additions, so it would also refuse every honest bundle built on an
 * earlier one (the quickstart bundle plus a new layer holds all of the quickstart). Once dead
 * code is gone, what can still dilute is code that runs; Jaccard stays symmetric and keeps the
 * one threshold.
 */
import { cosmeticTokens } from "./python-cosmetics.js";
import { reachableCode } from "./python-reachability.js";
import type { PythonToken } from "./python-tokens.js";

/** Tokens per shingle. */
export const SHINGLE_TOKENS = 10;
/** Jaccard similarity from which a bundle is a copy of an earlier one. */
export const NEAR_DUPLICATE_THRESHOLD = 0.85;
/** MinHash functions, and how they are banded for lookup (BANDS x ROWS_PER_BAND). */
export const MINHASH_SIZE = 128;
export const BANDS = 32;
export const ROWS_PER_BAND = 4;
/**
 * Stored with every fingerprint: change it whenever anything above, the tokenizer or the
 * reachability pass changes. Version 1 shingled every line of every file; version 2 only the
 * reachable code; version 3 drops annotations and docstrings and keeps code a module-level
 * binding may hold (a registry, `setdefault`, a dict of classes). Older rows are recomputed
 * from their stored ZIP (fingerprint-store.ts, upgradeFingerprints).
 */
export const FINGERPRINT_VERSION = 3;

/** What is stored per bundle. */
export interface Fingerprint {
  version: number;
  /** Distinct shingle hashes, ascending. */
  shingles: Uint32Array;
  /** MINHASH_SIZE minima (0xffffffff when there are no shingles). */
  minhash: Uint32Array;
  /** One LSH bucket per band (band index mixed in, so buckets of different bands never meet). */
  bands: number[];
}

/** A file as the fingerprint reads it. */
export interface SourceFile {
  path: string;
  text: string;
}

/**
 * The fingerprint of the reachable code of a bundle's `.py` files (other files are data, not
 * code, and ignored).
 */
export function fingerprint(files: readonly SourceFile[]): Fingerprint {
  const hashes = new Set<number>();
  for (const file of reachableCode(files)) {
    for (const hash of shingleHashes(structuralTokens(file.source, file.kept))) hashes.add(hash);
  }
  return fingerprintOf(hashes);
}

/**
 * The tokens a fingerprint reads: those `kept` (that can run), minus annotations and docstrings
 * (python-cosmetics.ts), which a copy can delete without changing what the program computes.
 */
export function structuralTokens(tokens: readonly PythonToken[], kept?: Uint8Array): PythonToken[] {
  const cosmetic = cosmeticTokens(tokens);
  return tokens.filter((_, i) => cosmetic[i] === 0 && (kept === undefined || kept[i] === 1));
}

/** The fingerprint of a set of shingle hashes (what {@link fingerprint} stores). */
export function fingerprintOf(hashes: Iterable<number>): Fingerprint {
  const shingles = Uint32Array.from(new Set(hashes)).sort();
  const minhash = minhashOf(shingles);
  return { version: FINGERPRINT_VERSION, shingles, minhash, bands: bandsOf(minhash) };
}

/** Whether a similarity makes a near-duplicate: the threshold itself is one. */
export function isNearDuplicate(
  similarity: number,
  threshold: number = NEAR_DUPLICATE_THRESHOLD,
): boolean {
  return similarity >= threshold;
}

/** The hashed, rename-normalised shingles of one file's tokens (repeats included). */
export function shingleHashes(tokens: readonly PythonToken[]): number[] {
  if (tokens.length === 0) return [];
  // Names stay names (numbered per window below); everything else is its normalised text.
  const fixed = tokens.map((token) =>
    token.kind === "name"
      ? null
      : token.kind === "number"
        ? "N"
        : token.kind === "string"
          ? "S"
          : token.text,
  );
  const width = Math.min(SHINGLE_TOKENS, tokens.length);
  const out: number[] = [];
  for (let start = 0; start + width <= tokens.length; start++) {
    const seen = new Map<string, number>();
    let key = "";
    for (let i = start; i < start + width; i++) {
      let part = fixed[i];
      if (part === null || part === undefined) {
        const name = tokens[i]!.text;
        let index = seen.get(name);
        if (index === undefined) {
          index = seen.size;
          seen.set(name, index);
        }
        part = `v${index}`;
      }
      key += `${part}\u0001`;
    }
    out.push(hashString(key));
  }
  return out;
}

/** Exact Jaccard similarity of two ascending, distinct hash lists (1 when both are empty). */
export function jaccard(a: Uint32Array, b: Uint32Array): number {
  if (a.length === 0 && b.length === 0) return 1;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) {
      i++;
    } else {
      j++;
    }
  }
  return shared / (a.length + b.length - shared);
}

/** The share of equal MinHash minima: an estimate of the Jaccard similarity (±0.04 at 128). */
export function estimatedJaccard(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < MINHASH_SIZE; i++) if (a[i] === b[i]) same++;
  return same / MINHASH_SIZE;
}

// Seeds of the MinHash family: fixed forever (FINGERPRINT_VERSION guards any change).
const SEEDS = Uint32Array.from({ length: MINHASH_SIZE }, (_, i) => fmix32((i + 1) * 0x9e3779b9));

function minhashOf(shingles: Uint32Array): Uint32Array {
  const minima = new Uint32Array(MINHASH_SIZE).fill(0xffffffff);
  for (const shingle of shingles) {
    for (let i = 0; i < MINHASH_SIZE; i++) {
      const value = fmix32(shingle ^ SEEDS[i]!);
      if (value < minima[i]!) minima[i] = value;
    }
  }
  return minima;
}

function bandsOf(minhash: Uint32Array): number[] {
  const bands: number[] = [];
  for (let band = 0; band < BANDS; band++) {
    let hash = fmix32(band + 1);
    for (let row = 0; row < ROWS_PER_BAND; row++) {
      hash = fmix32(hash ^ minhash[band * ROWS_PER_BAND + row]!);
    }
    // A signed 32-bit value: stored in a Postgres integer[].
    bands.push(hash | 0);
  }
  return bands;
}

/** FNV-1a over UTF-16 code units, finished with fmix32: a fast, well-spread 32-bit hash. */
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return fmix32(hash);
}

/** MurmurHash3's 32-bit finaliser. */
function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
