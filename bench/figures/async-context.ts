// Figure: what one entered AsyncLocalStorage costs a request on the Node line running the bench.
// Two copies of a small server with an async handler (servers/async-server.ts: awaited steps, a
// timer turn, a JSON answer), one with a storage entered at start and every request run inside
// it (what the OpenTelemetry SDK's context manager does), in their own processes, loaded in turn
// for four rounds; the CPU time per request of each from /proc, least disturbed round. Up to Node 22 the storage's propagation is an async_hooks init
// hook on every promise and async resource; from Node 24 it is AsyncContextFrame, carried with
// the continuation. The master passes its spans' parents explicitly (no storage) because of the
// former: this figure says whether the line it runs on still needs that.
import { type Figure, round } from "../_figure.js";
import { loadTest } from "../_load.js";
import { processCpuMs, startTsProcess, stopProcess } from "../_processes.js";
import { READY_URL } from "./_nginx.js";

const PATH = "/items?a=1";
const ROUNDS = 4;

async function cpuPerRequest(origin: string, pid: number | undefined) {
  const before = processCpuMs(pid);
  const result = await loadTest(origin, PATH, { durationMs: 3_000 });
  return { rps: result.rps, cpuUs: ((processCpuMs(pid) - before) * 1000) / result.requests };
}

export const asyncContextFigure: Figure = {
  name: "async-context",
  async run() {
    const plain = await startTsProcess("./servers/async-server.ts", [], READY_URL);
    const stored = await startTsProcess("./servers/async-server.ts", [], READY_URL, {
      BENCH_ASYNC_CONTEXT: "1",
    });
    try {
      const off: number[] = [];
      const on: number[] = [];
      const rates = { off: [] as number[], on: [] as number[] };
      for (let round_ = 0; round_ < ROUNDS; round_++) {
        const a = await cpuPerRequest(plain.match[1]!, plain.child.pid);
        const b = await cpuPerRequest(stored.match[1]!, stored.child.pid);
        off.push(a.cpuUs);
        on.push(b.cpuUs);
        rates.off.push(a.rps);
        rates.on.push(b.rps);
      }
      const offUs = Math.min(...off);
      const onUs = Math.min(...on);
      return {
        baseline: "the same server without an AsyncLocalStorage (CPU per request)",
        ratio: round(offUs / onUs, 2),
        node: process.version,
        off_cpu_us: round(offUs, 1),
        storage_cpu_us: round(onUs, 1),
        storage_extra_us: round(onUs - offUs, 1),
        off_rps: round(Math.max(...rates.off)),
        storage_rps: round(Math.max(...rates.on)),
      };
    } finally {
      await stopProcess(stored.child);
      await stopProcess(plain.child);
    }
  },
};
