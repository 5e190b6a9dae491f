// Figure: the HTTP app kit (createApp + serve: web Request/Response, routing, validation, request
// ids) answering a small JSON body, against a bare node:http handler writing the same bytes.
// Both servers and the load generator share this process, so they see the same conditions.
import { createServer } from "node:http";
import { createApp, createLogger, serve } from "@platform/core";
import { type Figure, round } from "../_figure.js";
import { type LoadResult, loadTest } from "../_load.js";

export const httpKitFigure: Figure = {
  name: "http-kit",
  async run() {
    const body = JSON.stringify({ service: "bench", version: "1" });
    const bare = createServer((_req, res) => {
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    });
    await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
    const bareUrl = `http://127.0.0.1:${(bare.address() as { port: number }).port}`;
    const app = createApp({
      name: "bench",
      version: "1",
      logger: createLogger({ name: "bench", level: "error" }),
    });
    app.route({
      method: "GET",
      path: "/version",
      handler: () => ({ service: "bench", version: "1" }),
    });
    const kit = await serve(app.fetch, { log: app.log });
    try {
      const bareRuns: LoadResult[] = [];
      const kitRuns: LoadResult[] = [];
      for (let i = 0; i < 3; i++) {
        bareRuns.push(await loadTest(bareUrl, "/version", { connections: 16, durationMs: 2000 }));
        kitRuns.push(await loadTest(kit.url, "/version", { connections: 16, durationMs: 2000 }));
      }
      const best = (runs: LoadResult[]) => runs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const b = best(bareRuns);
      const k = best(kitRuns);
      return {
        baseline: "bare node:http handler writing the same JSON (same process)",
        ratio: round(k.rps / b.rps, 2),
        kit_rps: k.rps,
        kit_p50_ms: k.p50_ms,
        kit_p99_ms: k.p99_ms,
        bare_rps: b.rps,
        bare_p50_ms: b.p50_ms,
        bare_p99_ms: b.p99_ms,
      };
    } finally {
      await kit.close();
      await new Promise((resolve) => bare.close(resolve));
    }
  },
};
