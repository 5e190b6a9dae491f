// Figure: the master's resident memory under sustained proxy load (issue 11, deliverable 3):
// the master (its own process, embedded database) proxies small JSON requests from 32 keep-alive
// connections to the bench upstream for BENCH_RSS_MINUTES (default 10), and its RSS is read from
// /proc/<pid>/status at the start, after a one-minute warm-up and at the end of every minute.
// `ratio` is the RSS at the end of the first measured minute over the RSS at the end: 1 is flat,
// below 1 is growth (a leak would keep falling with the minutes). The warm-up is not the
// baseline: the process starts large (tsx, the embedded database's WebAssembly) and the
// collector gives much of that back during the first minutes. Linux only.
import { readFileSync } from "node:fs";
import { type Figure, round } from "../_figure.js";
import { loadTest } from "../_load.js";
import { startTsProcess, stopProcess } from "../_processes.js";
import { READY_URL } from "./_nginx.js";

const MINUTE_MS = 60_000;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1]);
  return round(kb / 1024, 1);
}

export const masterRssFigure: Figure = {
  name: "master-rss",
  async run() {
    const minutes = Number(process.env.BENCH_RSS_MINUTES ?? "10");
    if (!Number.isFinite(minutes) || minutes < 1) throw new Error("BENCH_RSS_MINUTES must be >= 1");
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const master = await startTsProcess("./servers/master.ts", [upstream.match[1]!], READY_URL);
    const masterUrl = master.match[1]!;
    const pid = master.child.pid!;
    try {
      const atStart = rssMb(pid);
      const load = (ms: number) =>
        loadTest(masterUrl, "/challenges/bench/items?a=1", { durationMs: ms, warmupMs: 0 });
      const warm = await load(MINUTE_MS);
      const afterWarmup = rssMb(pid);
      const samples: number[] = [];
      let requests = Math.round(warm.rps * 60);
      let errors = warm.errors;
      for (let minute = 0; minute < minutes; minute++) {
        const run = await load(MINUTE_MS);
        requests += Math.round(run.rps * 60);
        errors += run.errors;
        samples.push(rssMb(pid));
      }
      const end = samples.at(-1)!;
      return {
        baseline:
          "the master's RSS after the first measured minute of load (32 connections, small JSON)",
        ratio: round(samples[0]! / end, 3),
        rss_at_start_mb: atStart,
        rss_after_warmup_mb: afterWarmup,
        rss_end_mb: end,
        rss_max_mb: Math.max(...samples),
        rss_per_minute_mb: samples.join(" "),
        minutes,
        requests,
        errors,
      };
    } finally {
      await stopProcess(master.child);
      await stopProcess(upstream.child);
    }
  },
};
