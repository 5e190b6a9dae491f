// Run by weights-routes.test.ts in a child process: start a master with scheduled collection
// against the challenge at argv[2], wait for a scheduled snapshot, close, and then simply
// return. The parent asserts that the process exits by itself: no timer, socket or pool left.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { loadMasterConfig } from "../../src/config.js";
import { createMaster } from "../../src/master.js";

const challengeUrl = process.argv[2];
const database = await createTestDatabase({ backend: "pglite" });
const config = loadMasterConfig(
  { dataDir: mkdtempSync(join(tmpdir(), "platform-exit-")), port: 0 },
  { ADMIN_TOKEN: randomBytes(16).toString("hex") },
);
config.weights.intervalSeconds = 1;
config.weights.timeoutMs = 2_000;
const master = await createMaster(config, {
  database,
  masterKey: randomBytes(32),
  logger: createLogger({ name: "exit-test", level: "silent" }),
});
await master.store.create({
  slug: "alpha",
  name: "Alpha",
  image: "ghcr.io/org/alpha:1.0.0",
  version: "1.0.0",
  emission_percent: 100,
  status: "active",
  api_version: "1.0",
  internal_base_url: challengeUrl!,
});
// The fake challenge accepts only this token; tell the parent which one to expect.
const row = await master.store.get("alpha");
process.stdout.write(`token ${master.store.challengeToken(row)}\n`);
await master.listen({ host: "127.0.0.1", port: 0 });
const deadline = Date.now() + 15_000;
for (;;) {
  const [found] = await database.sql`select id from weight_snapshots limit 1`;
  if (found) break;
  if (Date.now() > deadline) throw new Error("no scheduled snapshot within 15 s");
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await master.close();
await database.close();
process.stdout.write("closed\n");
