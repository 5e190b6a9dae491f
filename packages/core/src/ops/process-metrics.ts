// The process's own metrics, read when scraped. Not prom-client's `collectDefaultMetrics`: its
// `gc` PerformanceObserver (and the rest it keeps running) cost the master's proxy about a fifth
// of its CPU per request on the 2-core bench machine (docs/performance.md, "Metrics and tracing on
// the proxy"); everything here is read at scrape time, except the event loop's delay, which
// node samples on its own timer (`monitorEventLoopDelay`, 20 ms resolution).
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, type Registry } from "prom-client";

const NS_PER_SECOND = 1e9;

/** Registers the process metrics on `registry`; each value is read on scrape. */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const delay = monitorEventLoopDelay({ resolution: 20 });
  // Its timer is node's own and unreferenced: it keeps no process alive.
  delay.enable();
  const started = Date.now() / 1000 - process.uptime();

  new Counter({
    name: "process_cpu_user_seconds_total",
    help: "User CPU time spent, in seconds",
    registers,
    collect() {
      this.reset();
      this.inc(process.cpuUsage().user / 1e6);
    },
  });
  new Counter({
    name: "process_cpu_system_seconds_total",
    help: "System CPU time spent, in seconds",
    registers,
    collect() {
      this.reset();
      this.inc(process.cpuUsage().system / 1e6);
    },
  });
  new Counter({
    name: "process_cpu_seconds_total",
    help: "User and system CPU time spent, in seconds",
    registers,
    collect() {
      const usage = process.cpuUsage();
      this.reset();
      this.inc((usage.user + usage.system) / 1e6);
    },
  });
  new Gauge({
    name: "process_start_time_seconds",
    help: "Start time of the process since the Unix epoch, in seconds",
    registers,
    collect() {
      this.set(started);
    },
  });
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size, in bytes",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  const heap = (name: string, help: string, read: (m: NodeJS.MemoryUsage) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(process.memoryUsage()));
      },
    });
  heap("nodejs_heap_size_total_bytes", "V8 heap size, in bytes", (m) => m.heapTotal);
  heap("nodejs_heap_size_used_bytes", "V8 heap used, in bytes", (m) => m.heapUsed);
  heap(
    "nodejs_external_memory_bytes",
    "Memory of C++ objects bound to JS objects, in bytes",
    (m) => m.external,
  );
  const lag = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const value = read();
        this.set(Number.isFinite(value) ? value / NS_PER_SECOND : 0);
      },
    });
  lag(
    "nodejs_eventloop_lag_mean_seconds",
    "Mean event loop delay since the last scrape, in seconds",
    () => delay.mean,
  );
  lag(
    "nodejs_eventloop_lag_p50_seconds",
    "Median event loop delay since the last scrape, in seconds",
    () => delay.percentile(50),
  );
  lag(
    "nodejs_eventloop_lag_p99_seconds",
    "99th percentile event loop delay since the last scrape, in seconds",
    () => delay.percentile(99),
  );
  lag(
    "nodejs_eventloop_lag_max_seconds",
    "Largest event loop delay since the last scrape, in seconds",
    () => {
      const max = delay.max;
      // Each scrape reports the window since the previous one.
      queueMicrotask(() => delay.reset());
      return max;
    },
  );
  new Gauge({
    name: "nodejs_version_info",
    help: "Node.js version",
    labelNames: ["version"],
    registers,
    collect() {
      this.set({ version: process.version }, 1);
    },
  });
}
