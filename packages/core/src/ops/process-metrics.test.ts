import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerProcessMetrics } from "./process-metrics.js";

const value = (text: string, name: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
};

describe("process metrics", () => {
  it("reads the process's CPU, memory, heap and event loop delay at scrape time", async () => {
    const registry = new Registry();
    registerProcessMetrics(registry);
    // Some work between scrapes, so the CPU counter has something to show.
    let spin = 0;
    for (let i = 0; i < 2e6; i++) spin += i % 7;
    expect(spin).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const text = await registry.metrics();
    expect(value(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(value(text, "process_cpu_seconds_total")).toBeCloseTo(
      (value(text, "process_cpu_user_seconds_total") ?? 0) +
        (value(text, "process_cpu_system_seconds_total") ?? 0),
      2,
    );
    expect(value(text, "process_resident_memory_bytes")).toBeGreaterThan(1 << 20);
    expect(value(text, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(value(text, "process_start_time_seconds")).toBeLessThanOrEqual(Date.now() / 1000);
    expect(value(text, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
    expect(text).toContain(`nodejs_version_info{version="${process.version}"} 1`);
    // Nothing that observes every GC: that is what made prom-client's defaults costly.
    expect(text).not.toContain("nodejs_gc_duration_seconds");
    // The counter follows the process, scrape after scrape.
    for (let i = 0; i < 2e6; i++) spin += i % 7;
    const later = await registry.metrics();
    expect(value(later, "process_cpu_seconds_total")).toBeGreaterThan(
      value(text, "process_cpu_seconds_total") ?? 0,
    );
  });
});
