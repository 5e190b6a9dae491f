// A master for the bench figures, on the embedded database in a temporary folder, with one
// active challenge ("bench") pointing at the upstream given as argv[2] (or none). Prints one
// JSON line: its URL, its admin listener's URL (`adminUrl`), the challenge's broker token (the broker figure calls the broker) and
// its challenge token (what a real challenge behind it must be started with).
// BENCH_METRICS=off records no metrics (the `proxy` figure's baseline); tracing follows the
// standard OTEL_* variables, as in production (off without OTEL_EXPORTER_OTLP_ENDPOINT).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@platform/core";
import { createMaster, loadMasterConfig } from "@platform/master";

const upstream = process.argv[2] || null;
const adminToken = "bench-admin-token-0123456789";
const dataDir = mkdtempSync(join(tmpdir(), "bench-master-"));
const config = loadMasterConfig(
  { dataDir, port: 0 },
  {
    ...process.env,
    ADMIN_TOKEN: adminToken,
    PLATFORM_WEIGHTS_INTERVAL_SECONDS: "0",
    // The bench's challenges are in-process upstreams, not containers the master runs.
    PLATFORM_RECONCILER: "false",
    PLATFORM_BROKER_IMAGES: process.env.PLATFORM_BROKER_IMAGES ?? "platform-test/",
  },
);
const master = await createMaster(config, {
  logger: createLogger({ name: "bench-master", level: "error" }),
  metrics: process.env.BENCH_METRICS !== "off",
});
const server = await master.listen({ host: "127.0.0.1", port: 0 });
const created = await fetch(`${server.admin.url}/v1/admin/challenges`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-admin-token": adminToken },
  body: JSON.stringify({
    slug: "bench",
    name: "bench",
    image: "ghcr.io/bench/bench:1",
    version: "1",
    status: "active",
    internal_base_url: upstream,
  }),
});
if (created.status !== 201)
  throw new Error(
    `registering the bench challenge failed: ${created.status} ${await created.text()}`,
  );
const { docker_broker_token: brokerToken, challenge_token: challengeToken } =
  (await created.json()) as { docker_broker_token: string; challenge_token: string };
console.log(
  JSON.stringify({ url: server.url, adminUrl: server.admin.url, brokerToken, challengeToken }),
);

// Exit cleanly on SIGTERM so `--cpu-prof` can write its profile.
process.once("SIGTERM", async () => {
  await master.close();
  process.exit(0);
});
