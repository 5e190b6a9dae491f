// Figure: server-sent-events fan-out through the master's proxy (issue 11, deliverable 3): 1,000
// subscribers hold `GET /events` of the upstream open, directly and then through the master, and
// every 100 ms the upstream writes one event carrying the wall-clock time it was written to all
// of them. The delay of each delivery (time read here minus time written there, one machine, one
// clock) over about 30 events; `ratio` is direct p99 / proxied p99 (below 1: the proxy adds
// delay). The subscribers are plain node:http requests, one socket each.
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type Figure, round } from "../_figure.js";
import { startTsProcess, stopProcess } from "../_processes.js";
import { READY_URL } from "./_nginx.js";

const SUBSCRIBERS = 1000;
const LISTEN_MS = 3000;

interface FanOut {
  p50_ms: number;
  p99_ms: number;
  deliveries: number;
  connected: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function fanOut(url: string): Promise<FanOut> {
  const delays: number[] = [];
  const requests: ReturnType<typeof request>[] = [];
  let connected = 0;
  let recording = false;
  await Promise.all(
    Array.from(
      { length: SUBSCRIBERS },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = request(url, { agent: false }, (res) => {
            if (res.statusCode !== 200) {
              reject(new Error(`${url} answered ${res.statusCode}`));
              return;
            }
            connected++;
            resolve();
            let buffer = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => {
              buffer += chunk;
              let end = buffer.indexOf("\n\n");
              while (end >= 0) {
                const frame = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                if (recording && frame.startsWith("data: ")) {
                  delays.push(performance.timeOrigin + performance.now() - Number(frame.slice(6)));
                }
                end = buffer.indexOf("\n\n");
              }
            });
            res.on("error", () => {});
          });
          req.on("error", reject);
          req.end();
          requests.push(req);
        }),
    ),
  );
  await sleep(500); // every subscriber settled before the clock starts
  recording = true;
  await sleep(LISTEN_MS);
  recording = false;
  for (const req of requests) req.destroy();
  delays.sort((a, b) => a - b);
  return {
    p50_ms: round(percentile(delays, 50), 2),
    p99_ms: round(percentile(delays, 99), 2),
    deliveries: delays.length,
    connected,
  };
}

export const proxySseFigure: Figure = {
  name: "proxy-sse",
  async run() {
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const upstreamUrl = upstream.match[1]!;
    const master = await startTsProcess("./servers/master.ts", [upstreamUrl], READY_URL);
    const masterUrl = master.match[1]!;
    try {
      const direct = await fanOut(`${upstreamUrl}/events`);
      await sleep(500);
      const proxied = await fanOut(`${masterUrl}/challenges/bench/events`);
      return {
        baseline: `${SUBSCRIBERS} subscribers of the same upstream stream, directly`,
        ratio: round(direct.p99_ms / proxied.p99_ms, 2),
        subscribers: SUBSCRIBERS,
        direct_p50_ms: direct.p50_ms,
        direct_p99_ms: direct.p99_ms,
        direct_deliveries: direct.deliveries,
        proxied_p50_ms: proxied.p50_ms,
        proxied_p99_ms: proxied.p99_ms,
        proxied_deliveries: proxied.deliveries,
      };
    } finally {
      await stopProcess(master.child);
      await stopProcess(upstream.child);
    }
  },
};
