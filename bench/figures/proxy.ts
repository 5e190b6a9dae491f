// Figure: requests per second and p50/p99 latency through the master's proxy, directly to the
// same upstream, through nginx proxying the same upstream, and through the floor of a Node.js
// proxy (servers/bare-proxy.ts: node's server and undici with none of the master's rules), all
// in one run. The master runs six times: with metrics and tracing off (the `proxied_*` fields,
// comparable with the figures before metrics existed), with metrics only (the default
// deployment), and with both on under four samplers (TRACED below: tracing on but nothing
// sampled at the master, one trace in a hundred, one in ten, every request; spans batched and
// exported over OTLP/HTTP to a receiver of its own). Every master that records metrics has
// its /metrics scraped every second while it is loaded (15x Prometheus' usual rate). The
// upstream, each master, the receiver, the bare proxy and nginx run in their own processes; the
// load generator (and the scraper) is this process. Beside the rates, each master's CPU time per
// request (from /proc, the least disturbed round): on a machine shared with other work it moves
// less than a rate does, so `*_cpu_ratio` is the steadier measure of what observability costs.
import { type Figure, round } from "../_figure.js";
import { type LoadResult, loadTest } from "../_load.js";
import { processCpuMs, startTsProcess, stopProcess } from "../_processes.js";
import { nginxBinary, READY_URL, startNginx } from "./_nginx.js";

const MASTER_URLS = /"url":"(http:\/\/[^"]+)","adminUrl":"(http:\/\/[^"]+)"/;
// bench/servers/master.ts's admin token.
const ADMIN_TOKEN = "bench-admin-token-0123456789";

/** Scrape `adminUrl`/metrics every `ms` until stopped (what Prometheus does, but 15x as often). */
function scraper(adminUrl: string, ms = 1000) {
  let scrapes = 0;
  let failures = 0;
  const timer = setInterval(async () => {
    try {
      const res = await fetch(`${adminUrl}/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      await res.arrayBuffer();
      if (res.status === 200) scrapes++;
      else failures++;
    } catch {
      failures++;
    }
  }, ms);
  return {
    stop() {
      clearInterval(timer);
      return { scrapes, failures };
    },
  };
}

/** A load test of a server process, with the CPU time it spent per request (µs). */
async function measured(
  pid: number | undefined,
  origin: string,
  path: string,
): Promise<LoadResult & { cpuUs: number }> {
  const before = processCpuMs(pid);
  const result = await loadTest(origin, path);
  return { ...result, cpuUs: ((processCpuMs(pid) - before) * 1000) / result.requests };
}

const ROUNDS = 4;

/** The traced masters: field prefix and sampler (OTEL_TRACES_SAMPLER, its argument). */
const TRACED = [
  { prefix: "unsampled", sampler: "parentbased_always_off" },
  { prefix: "sampled_1pct", sampler: "parentbased_traceidratio", arg: "0.01" },
  { prefix: "sampled", sampler: "parentbased_traceidratio", arg: "0.1" },
  { prefix: "observed", sampler: "parentbased_always_on" },
] as const;

export const proxyFigure: Figure = {
  name: "proxy",
  async run() {
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const upstreamUrl = upstream.match[1]!;
    const sink = await startTsProcess("./servers/otlp-sink.ts", [], READY_URL);
    const sinkUrl = sink.match[1]!;
    const off = { BENCH_METRICS: "off", OTEL_EXPORTER_OTLP_ENDPOINT: "" };
    const master = await startTsProcess("./servers/master.ts", [upstreamUrl], MASTER_URLS, off);
    const masterUrl = master.match[1]!;
    const metricsOnly = await startTsProcess("./servers/master.ts", [upstreamUrl], MASTER_URLS, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
    });
    const tracing = {
      OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_SERVICE_NAME: "bench-master",
    };
    const traced = [];
    for (const { prefix, sampler, ...rest } of TRACED) {
      const env = { ...tracing, OTEL_TRACES_SAMPLER: sampler };
      if ("arg" in rest) Object.assign(env, { OTEL_TRACES_SAMPLER_ARG: rest.arg });
      const started = await startTsProcess("./servers/master.ts", [upstreamUrl], MASTER_URLS, env);
      traced.push({ prefix, started, runs: [] as (LoadResult & { cpuUs: number })[] });
    }
    const bare = await startTsProcess("./servers/bare-proxy.ts", [upstreamUrl], READY_URL);
    const bareUrl = bare.match[1]!;
    const nginx = nginxBinary() ? await startNginx(upstreamUrl) : null;
    try {
      const path = "/items?a=1";
      const target = `/challenges/bench${path}`;
      // Interleave targets so drift on this small machine hits all of them alike.
      const direct: LoadResult[] = [];
      const proxied: (LoadResult & { cpuUs: number })[] = [];
      const withMetrics: (LoadResult & { cpuUs: number })[] = [];
      const viaNginx: LoadResult[] = [];
      const viaBare: LoadResult[] = [];
      let scraped = { scrapes: 0, failures: 0 };
      for (let i = 0; i < ROUNDS; i++) {
        direct.push(await loadTest(upstreamUrl, path));
        proxied.push(await measured(master.child.pid, masterUrl, target));
        // Metrics on means scraped: each master that records them is scraped while loaded.
        const scrapeMetrics = scraper(metricsOnly.match[2]!);
        withMetrics.push(await measured(metricsOnly.child.pid, metricsOnly.match[1]!, target));
        scrapeMetrics.stop();
        for (const { started, runs } of traced) {
          const scrape = scraper(started.match[2]!);
          runs.push(await measured(started.child.pid, started.match[1]!, target));
          const { scrapes, failures } = scrape.stop();
          scraped = { scrapes: scraped.scrapes + scrapes, failures: scraped.failures + failures };
        }
        viaBare.push(await loadTest(bareUrl, target));
        if (nginx) viaNginx.push(await loadTest(nginx.url, target));
      }
      // What the traced master sent its receiver: proof the spans were really exported.
      await new Promise((resolve) => setTimeout(resolve, 6000)); // one batch delay (5 s)
      const exported = (await (await fetch(`${sinkUrl}/stats`)).json()) as {
        requests: number;
        bytes: number;
      };
      const best = <T extends LoadResult>(runs: T[]) =>
        runs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const leastCpu = (runs: { cpuUs: number }[]) => Math.min(...runs.map((run) => run.cpuUs));
      const d = best(direct);
      const p = best(proxied);
      const m = best(withMetrics);
      // Per traced master: its rate and CPU against off (both disabled) and against metrics only.
      const tracedFields: Record<string, number> = {};
      for (const { prefix, runs } of traced) {
        const t = best(runs);
        Object.assign(tracedFields, {
          [`${prefix}_rps`]: t.rps,
          [`${prefix}_p99_ms`]: t.p99_ms,
          [`${prefix}_errors`]: t.errors,
          [`${prefix}_vs_off`]: round(t.rps / p.rps, 2),
          [`${prefix}_cpu_us`]: round(leastCpu(runs)),
          [`${prefix}_cpu_ratio`]: round(leastCpu(proxied) / leastCpu(runs), 2),
          [`${prefix}_vs_metrics_cpu_ratio`]: round(leastCpu(withMetrics) / leastCpu(runs), 2),
        });
      }
      const n = viaNginx.length ? best(viaNginx) : null;
      const b = best(viaBare);
      return {
        baseline: "direct requests to the same upstream (32 keep-alive connections)",
        ratio: round(p.rps / d.rps, 2),
        direct_rps: d.rps,
        direct_p50_ms: d.p50_ms,
        direct_p99_ms: d.p99_ms,
        proxied_rps: p.rps,
        proxied_p50_ms: p.p50_ms,
        proxied_p99_ms: p.p99_ms,
        proxied_errors: p.errors,
        proxied_cpu_us: round(leastCpu(proxied)),
        metrics_rps: m.rps,
        metrics_p99_ms: m.p99_ms,
        metrics_vs_off: round(m.rps / p.rps, 2),
        metrics_cpu_us: round(leastCpu(withMetrics)),
        metrics_cpu_ratio: round(leastCpu(proxied) / leastCpu(withMetrics), 2),
        ...tracedFields,
        otlp_exports: exported.requests,
        otlp_bytes: exported.bytes,
        metrics_scrapes: scraped.scrapes,
        metrics_scrape_failures: scraped.failures,
        nginx_rps: n?.rps ?? "nginx not installed",
        nginx_p50_ms: n?.p50_ms ?? "n/a",
        nginx_p99_ms: n?.p99_ms ?? "n/a",
        nginx_ratio: n ? round(n.rps / d.rps, 2) : "n/a",
        proxied_vs_nginx: n ? round(p.rps / n.rps, 2) : "n/a",
        node_floor_rps: b.rps,
        node_floor_p99_ms: b.p99_ms,
        proxied_vs_node_floor: round(p.rps / b.rps, 2),
        node_floor_vs_nginx: n ? round(b.rps / n.rps, 2) : "n/a",
      };
    } finally {
      if (nginx) await stopProcess(nginx.child);
      await stopProcess(bare.child);
      for (const { started } of traced) await stopProcess(started.child);
      await stopProcess(metricsOnly.child);
      await stopProcess(master.child);
      await stopProcess(sink.child);
      await stopProcess(upstream.child);
    }
  },
};
