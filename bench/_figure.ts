// The contract every figure module meets, and the helpers that keep their numbers comparable.
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** What a figure reports: the baseline it is measured against, the ratio, and raw rates. */
export interface FigureResult {
  /** The thing the ratio divides by, measured in the same run. */
  baseline: string;
  /** candidate / baseline; > 1 means the candidate is faster. */
  ratio: number;
  [raw: string]: number | string;
}

/** One benchmark figure, kept in its own module under bench/figures/. */
export interface Figure {
  /** Stable kebab-case name: the `figure` field of the JSON line and the CLI filter. */
  name: string;
  run(): Promise<FigureResult>;
}

/** Prints the one JSON line a figure produces. */
export function printFigure(name: string, result: FigureResult): void {
  console.log(JSON.stringify({ figure: name, ...result }));
}

/**
 * Runs `work` and reports the share of the machine's CPU that OTHER processes used meanwhile
 * (0..1, from /proc/stat; undefined off Linux), so a noisy run can be told from a slow one.
 */
export async function withOtherLoad<T>(work: () => Promise<T>): Promise<[T, number | undefined]> {
  const before = cpuTicks();
  const ours = process.cpuUsage();
  const start = performance.now();
  const result = await work();
  const after = cpuTicks();
  if (!before || !after) return [result, undefined];
  const used = process.cpuUsage(ours);
  const wallMs = performance.now() - start;
  const busyShare = 1 - (after.idle - before.idle) / (after.total - before.total);
  const ourShare = (used.user + used.system) / 1000 / wallMs / availableParallelism();
  return [result, Math.max(0, round(busyShare - ourShare, 2))];
}

function cpuTicks(): { idle: number; total: number } | undefined {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1);
    const ticks = fields.map(Number);
    // idle + iowait count as idle.
    return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

/** Operations per second of a synchronous operation, run for about `ms` milliseconds. */
export function syncRate(op: () => unknown, ms: number): number {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  // Check the clock every 16 calls: cheap next to a signature check, fine-grained enough.
  while (elapsed < ms) {
    for (let i = 0; i < 16; i++) op();
    count += 16;
    elapsed = performance.now() - start;
  }
  return (count * 1000) / elapsed;
}

/** Completions per second of an async operation kept `concurrency` deep for about `ms`. */
export async function asyncRate(
  op: () => Promise<unknown>,
  ms: number,
  concurrency: number,
): Promise<number> {
  let count = 0;
  const start = performance.now();
  const lane = async () => {
    while (performance.now() - start < ms) {
      await op();
      count++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return (count * 1000) / (performance.now() - start);
}

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rounds for the JSON line: integers for rates, two decimals for ratios. */
export function round(value: number, decimals = 0): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}
