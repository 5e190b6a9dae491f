// Figure: a trivial container run through the master's broker versus `docker run --rm` of the
// same image from the Docker CLI, sequentially (latency per run), and throughput with N runs
// in flight (broker quota N) versus N parallel `docker run --rm` loops, all in one run.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Pool } from "undici";
import { type Figure, median, round } from "../_figure.js";
import { startTsProcess, stopProcess } from "../_processes.js";

const run = promisify(execFile);
const IMAGE = "platform-test/busybox:1";
const SEQUENTIAL = 6;
const CONCURRENCY = 4;
const TOTAL = 16;

async function dockerCliRun(): Promise<void> {
  // The broker's defaults, so both sides pay for the same isolation.
  await run("docker", [
    "run",
    "--rm",
    "--network",
    "none",
    "--read-only",
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--init",
    "--pids-limit",
    "512",
    "--memory",
    "4g",
    "--tmpfs",
    "/tmp:rw,noexec,nosuid,size=256m",
    "--user",
    "65534:65534",
    IMAGE,
    "true",
  ]);
}

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

async function inParallel(
  total: number,
  lanes: number,
  one: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < total) await one(next++);
    }),
  );
  return (total * 1000) / (performance.now() - start);
}

export const brokerFigure: Figure = {
  name: "broker",
  async run() {
    try {
      await run("docker", ["image", "inspect", IMAGE]);
    } catch {
      throw new Error(`${IMAGE} is missing: run bash .ci/test-images.sh (needs a Docker engine)`);
    }
    const master = await startTsProcess("./servers/master.ts", [], /(\{.*"brokerToken".*\})/);
    const { url, brokerToken } = JSON.parse(master.match[1]!) as {
      url: string;
      brokerToken: string;
    };
    const pool = new Pool(url, { connections: CONCURRENCY });
    let job = 0;
    const brokerRun = async () => {
      const res = await pool.request({
        method: "POST",
        path: "/v1/docker/run",
        headers: {
          authorization: `Bearer ${brokerToken}`,
          "x-platform-challenge-slug": "bench",
          "content-type": "application/json",
        },
        body: JSON.stringify({
          job_id: `bench-${process.pid}-${job++}`,
          image: IMAGE,
          command: ["true"],
          timeout_seconds: 60,
        }),
      });
      const body = (await res.body.json()) as { returncode?: number };
      if (res.statusCode !== 200 || body.returncode !== 0)
        throw new Error(`broker run failed: ${res.statusCode} ${JSON.stringify(body)}`);
    };
    try {
      await brokerRun(); // warm-up: image layers, the files volume path, connections
      await dockerCliRun();
      const brokerMs: number[] = [];
      const cliMs: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        brokerMs.push(await timed(brokerRun));
        cliMs.push(await timed(dockerCliRun));
      }
      const brokerThroughput = await inParallel(TOTAL, CONCURRENCY, brokerRun);
      const cliThroughput = await inParallel(TOTAL, CONCURRENCY, dockerCliRun);
      const b = median(brokerMs);
      const c = median(cliMs);
      return {
        baseline: "docker run --rm of the same image with the same hardening, from the CLI",
        ratio: round(c / b, 2),
        broker_ms_per_run: round(b),
        docker_cli_ms_per_run: round(c),
        concurrency: CONCURRENCY,
        broker_runs_per_s: round(brokerThroughput, 2),
        docker_cli_runs_per_s: round(cliThroughput, 2),
        throughput_ratio: round(brokerThroughput / cliThroughput, 2),
      };
    } finally {
      await pool.close();
      await stopProcess(master.child);
    }
  },
};
