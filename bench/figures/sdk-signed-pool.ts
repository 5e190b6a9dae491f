// Figure: signed submissions per second through a real SDK challenge (signature over the exact
// bytes, nonce spent in its database, JSON validated), verifying on the event loop (baseline,
// VERIFY_POOL_SIZE=0) and on a verify pool of one thread per core. Each side is its own
// challenge process, started once; rounds alternate between them. Requests are signed before
// the clock starts, so the load generator spends no CPU on sr25519 while it measures.
import { availableParallelism } from "node:os";
import { initCrypto, keypairFromSeed, signRequest } from "@platform/core";
import { Pool } from "undici";
import { type Figure, median, round } from "../_figure.js";
import { startTsProcess, stopProcess } from "../_processes.js";

const PATH = "/v1/submissions";
const CONNECTIONS = 32;
const PER_ROUND = 1500;
const ROUNDS = 5;
const WORKERS = availableParallelism();

interface Signed {
  headers: Record<string, string>;
  body: string;
}

async function startChallenge(poolSize: number) {
  const started = await startTsProcess("./servers/signed-challenge.ts", [], /(http:\/\/\S+)/, {
    VERIFY_POOL_SIZE: String(poolSize),
  });
  return { url: started.match[1]!, stop: () => stopProcess(started.child) };
}

/** Sends every request once over `CONNECTIONS` keep-alive connections; requests per second. */
async function send(origin: string, requests: Signed[]) {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const lane = async () => {
    while (next < requests.length) {
      const { headers, body } = requests[next++]!;
      const start = performance.now();
      try {
        const res = await pool.request({ method: "POST", path: PATH, headers, body });
        await res.body.dump();
        if (res.statusCode !== 201) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - start);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, lane));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { rps: requests.length / seconds, p50: latencies[latencies.length >> 1]!, errors };
}

export const sdkSignedPoolFigure: Figure = {
  name: "sdk-signed-pool",
  async run() {
    await initCrypto();
    const miner = keypairFromSeed(`0x${"5b".repeat(32)}`);
    const body = JSON.stringify({ answer: "x".repeat(2048) });
    const sign = (n: number): Signed[] =>
      Array.from({ length: n }, () => ({
        body,
        headers: {
          "content-type": "application/json",
          ...(signRequest(miner, { method: "POST", url: PATH, body, slug: "bench" }) as Record<
            string,
            string
          >),
        },
      }));
    const inline = await startChallenge(0);
    const pooled = await startChallenge(WORKERS);
    try {
      // Warm both (JIT, wasm tiers, connection pools), then interleave equal rounds.
      await send(inline.url, sign(300));
      await send(pooled.url, sign(300));
      const inlineRuns: Awaited<ReturnType<typeof send>>[] = [];
      const poolRuns: Awaited<ReturnType<typeof send>>[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        inlineRuns.push(await send(inline.url, sign(PER_ROUND)));
        poolRuns.push(await send(pooled.url, sign(PER_ROUND)));
      }
      const inlineRps = median(inlineRuns.map((r) => r.rps));
      const poolRps = median(poolRuns.map((r) => r.rps));
      return {
        baseline: "the same challenge verifying on its event loop (VERIFY_POOL_SIZE=0)",
        ratio: round(poolRps / inlineRps, 2),
        pool_requests_per_s: round(poolRps),
        inline_requests_per_s: round(inlineRps),
        pool_p50_ms: round(median(poolRuns.map((r) => r.p50)), 2),
        inline_p50_ms: round(median(inlineRuns.map((r) => r.p50)), 2),
        errors: [...inlineRuns, ...poolRuns].reduce((sum, r) => sum + r.errors, 0),
        workers: WORKERS,
        cores: availableParallelism(),
      };
    } finally {
      await pooled.stop();
      await inline.stop();
    }
  },
};
