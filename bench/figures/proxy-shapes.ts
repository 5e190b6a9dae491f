// Figure: the master's proxy against nginx on the same upstream, in one run, for the shapes of
// traffic beyond the 32-connection small JSON of `proxy` (issue 11, deliverable 3): 256
// keep-alive connections of small JSON, a 64 KiB response (32 connections), and a 1 MiB upload
// streamed through (8 connections). Each shape is measured direct, through the master and
// through nginx, interleaved twice (the best of each kept); `ratio` is the 256-connection
// proxied / nginx requests per second. Without nginx the nginx fields say so and `ratio` is
// proxied / direct.
import { type Figure, round } from "../_figure.js";
import { type LoadResult, loadTest } from "../_load.js";
import { startTsProcess, stopProcess } from "../_processes.js";
import { nginxBinary, READY_URL, startNginx } from "./_nginx.js";

interface Shape {
  name: string;
  path: string;
  connections: number;
  body?: Buffer;
}

const SHAPES: Shape[] = [
  { name: "c256", path: "/items?a=1", connections: 256 },
  { name: "64k", path: "/big", connections: 32 },
  { name: "upload_1m", path: "/upload", connections: 8, body: Buffer.alloc(1024 * 1024, "u") },
];

const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));

export const proxyShapesFigure: Figure = {
  name: "proxy-shapes",
  async run() {
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const upstreamUrl = upstream.match[1]!;
    const master = await startTsProcess("./servers/master.ts", [upstreamUrl], READY_URL);
    const masterUrl = master.match[1]!;
    const nginx = nginxBinary() ? await startNginx(upstreamUrl) : null;
    try {
      const result: Record<string, number | string> = {};
      let headline = Number.NaN;
      for (const shape of SHAPES) {
        const options = { connections: shape.connections, body: shape.body };
        const runs = {
          direct: [] as LoadResult[],
          proxied: [] as LoadResult[],
          nginx: [] as LoadResult[],
        };
        for (let i = 0; i < 2; i++) {
          runs.direct.push(await loadTest(upstreamUrl, shape.path, options));
          runs.proxied.push(await loadTest(masterUrl, `/challenges/bench${shape.path}`, options));
          if (nginx)
            runs.nginx.push(await loadTest(nginx.url, `/challenges/bench${shape.path}`, options));
        }
        const d = best(runs.direct);
        const p = best(runs.proxied);
        const n = runs.nginx.length ? best(runs.nginx) : null;
        const errors = p.errors + d.errors + (n?.errors ?? 0);
        if (errors > 0) throw new Error(`${shape.name}: ${errors} requests failed`);
        result[`${shape.name}_direct_rps`] = d.rps;
        result[`${shape.name}_proxied_rps`] = p.rps;
        result[`${shape.name}_proxied_p99_ms`] = p.p99_ms;
        result[`${shape.name}_nginx_rps`] = n?.rps ?? "nginx not installed";
        result[`${shape.name}_nginx_p99_ms`] = n?.p99_ms ?? "n/a";
        result[`${shape.name}_proxied_vs_nginx`] = n ? round(p.rps / n.rps, 2) : "n/a";
        result[`${shape.name}_p99_vs_nginx`] = n ? round(p.p99_ms / n.p99_ms, 2) : "n/a";
        if (shape.name === "c256") headline = n ? p.rps / n.rps : p.rps / d.rps;
      }
      return {
        baseline: nginx
          ? "nginx (one worker, upstream keep-alive) proxying the same upstream, 256 connections"
          : "direct requests to the same upstream, 256 connections (nginx not installed)",
        ratio: round(headline, 2),
        ...result,
      };
    } finally {
      if (nginx) await stopProcess(nginx.child);
      await stopProcess(master.child);
      await stopProcess(upstream.child);
    }
  },
};
