// A closed-loop HTTP load generator: `connections` keep-alive connections each sending the next
// request as soon as the previous answer is read, for a fixed time. Latency is per request.
import { Pool } from "undici";
import { round } from "./_figure.js";

/** Throughput and latency of one target. */
export interface LoadResult {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  /** Requests answered in all, the warm-up's included (to divide a server's CPU time by). */
  requests: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Load `origin + path` for `durationMs` after a short warm-up (GET, or POST of `body`). */
export async function loadTest(
  origin: string,
  path: string,
  options: { connections?: number; durationMs?: number; warmupMs?: number; body?: Buffer } = {},
): Promise<LoadResult> {
  const connections = options.connections ?? 32;
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let requests = 0;
  const run = async (ms: number, record: boolean) => {
    const latencies: number[] = [];
    let errors = 0;
    const end = performance.now() + ms;
    const lane = async () => {
      while (performance.now() < end) {
        const start = performance.now();
        try {
          const res = await pool.request(
            options.body
              ? {
                  method: "POST",
                  path,
                  body: options.body,
                  headers: { "content-type": "application/octet-stream" },
                }
              : { method: "GET", path },
          );
          await res.body.dump();
          if (res.statusCode !== 200) errors++;
        } catch {
          errors++;
        }
        requests++;
        if (record) latencies.push(performance.now() - start);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: connections }, lane));
    return { latencies, errors, seconds: (performance.now() - started) / 1000 };
  };
  try {
    await run(options.warmupMs ?? 1000, false);
    const { latencies, errors, seconds } = await run(options.durationMs ?? 4000, true);
    latencies.sort((a, b) => a - b);
    return {
      rps: round(latencies.length / seconds),
      p50_ms: round(percentile(latencies, 50), 2),
      p99_ms: round(percentile(latencies, 99), 2),
      errors,
      requests,
    };
  } finally {
    await pool.close();
  }
}
