// Figure: requests per second and p50/p99 latency through the master's proxy, directly to the
// same upstream, and through nginx proxying the same upstream, all in one run. The upstream,
// the master and nginx each run in their own process; the load generator is this process.
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Figure, round } from "../_figure.js";
import { type LoadResult, loadTest } from "../_load.js";
import { spawnProcess, startTsProcess, stopProcess, waitForPort } from "../_processes.js";

const READY_URL = /(http:\/\/127\.0\.0\.1:\d+)/;

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function nginxBinary(): string | null {
  try {
    execFileSync("nginx", ["-v"], { stdio: "ignore" });
    return "nginx";
  } catch {
    return null;
  }
}

async function startNginx(upstream: string) {
  const prefix = mkdtempSync(join(tmpdir(), "bench-nginx-"));
  const port = await freePort();
  const config = `
worker_processes 1;
error_log ${prefix}/error.log error;
pid ${prefix}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;
  upstream challenge { server ${upstream.replace("http://", "")}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location /challenges/bench/ {
      proxy_pass http://challenge/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Platform-Proxy true;
      proxy_set_header X-Platform-Challenge-Slug bench;
    }
  }
}`;
  writeFileSync(join(prefix, "nginx.conf"), config);
  const child = spawnProcess("nginx", [
    "-p",
    prefix,
    "-c",
    `${prefix}/nginx.conf`,
    "-g",
    "daemon off;",
  ]);
  await waitForPort(port);
  return { child, url: `http://127.0.0.1:${port}` };
}

export const proxyFigure: Figure = {
  name: "proxy",
  async run() {
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const upstreamUrl = upstream.match[1]!;
    const master = await startTsProcess("./servers/master.ts", [upstreamUrl], READY_URL);
    const masterUrl = master.match[1]!;
    const nginx = nginxBinary() ? await startNginx(upstreamUrl) : null;
    try {
      const path = "/items?a=1";
      // Interleave targets so drift on this small machine hits all of them alike.
      const direct: LoadResult[] = [];
      const proxied: LoadResult[] = [];
      const viaNginx: LoadResult[] = [];
      for (let i = 0; i < 2; i++) {
        direct.push(await loadTest(upstreamUrl, path));
        proxied.push(await loadTest(masterUrl, `/challenges/bench${path}`));
        if (nginx) viaNginx.push(await loadTest(nginx.url, `/challenges/bench${path}`));
      }
      const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const d = best(direct);
      const p = best(proxied);
      const n = viaNginx.length ? best(viaNginx) : null;
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
        nginx_rps: n?.rps ?? "nginx not installed",
        nginx_p50_ms: n?.p50_ms ?? "n/a",
        nginx_p99_ms: n?.p99_ms ?? "n/a",
        nginx_ratio: n ? round(n.rps / d.rps, 2) : "n/a",
        proxied_vs_nginx: n ? round(p.rps / n.rps, 2) : "n/a",
      };
    } finally {
      if (nginx) await stopProcess(nginx.child);
      await stopProcess(master.child);
      await stopProcess(upstream.child);
    }
  },
};
