// Figure: requests per second and p50/p99 latency through the master's proxy, directly to the
// same upstream, through nginx proxying the same upstream, and through the floor of a Node.js
// proxy (servers/bare-proxy.ts: node's server and undici with none of the master's rules), all
// in one run. The upstream, the master, the bare proxy and nginx each run in their own process;
// the load generator is this process.
import { type Figure, round } from "../_figure.js";
import { type LoadResult, loadTest } from "../_load.js";
import { startTsProcess, stopProcess } from "../_processes.js";
import { nginxBinary, READY_URL, startNginx } from "./_nginx.js";

export const proxyFigure: Figure = {
  name: "proxy",
  async run() {
    const upstream = await startTsProcess("./servers/upstream.ts", [], READY_URL);
    const upstreamUrl = upstream.match[1]!;
    const master = await startTsProcess("./servers/master.ts", [upstreamUrl], READY_URL);
    const masterUrl = master.match[1]!;
    const bare = await startTsProcess("./servers/bare-proxy.ts", [upstreamUrl], READY_URL);
    const bareUrl = bare.match[1]!;
    const nginx = nginxBinary() ? await startNginx(upstreamUrl) : null;
    try {
      const path = "/items?a=1";
      // Interleave targets so drift on this small machine hits all of them alike.
      const direct: LoadResult[] = [];
      const proxied: LoadResult[] = [];
      const viaNginx: LoadResult[] = [];
      const viaBare: LoadResult[] = [];
      for (let i = 0; i < 2; i++) {
        direct.push(await loadTest(upstreamUrl, path));
        proxied.push(await loadTest(masterUrl, `/challenges/bench${path}`));
        viaBare.push(await loadTest(bareUrl, `/challenges/bench${path}`));
        if (nginx) viaNginx.push(await loadTest(nginx.url, `/challenges/bench${path}`));
      }
      const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const d = best(direct);
      const p = best(proxied);
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
      await stopProcess(master.child);
      await stopProcess(upstream.child);
    }
  },
};
