// /readyz through a real database outage: a PostgreSQL server of this test's own (never the
// machine's shared one, which other suites use) is stopped under a running master and a running
// SDK challenge, then started again. Each must answer 503 naming the database on the first probe
// once its last report is stale (reports live 1 s; each check has 2 s: the 5 s budget of the
// spec by construction), and 200 again once the server is back.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { defineChallenge, type RunningChallenge } from "@platform/challenge-sdk";
import { createLogger } from "@platform/core";
import {
  findPostgresBinaries,
  isCi,
  type PrivatePostgres,
  startPrivatePostgres,
} from "@platform/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadMasterConfig } from "../../src/config.js";
import { createMaster, type Master, type MasterServer } from "../../src/master.js";

const binaries = findPostgresBinaries();
if (!binaries.ok) {
  if (isCi())
    throw new Error(`CI but no PostgreSQL binaries for a private server: ${binaries.reason}`);
  const bar = "!".repeat(78);
  console.warn(
    `\n${bar}\n!! readiness-through-an-outage tests SKIPPED: ${binaries.reason}\n!! CI makes this an error.\n${bar}\n`,
  );
}

/** Reports are reused for 1 s (HealthChecks' cacheMs): wait past it before the probe that counts. */
const REPORT_MS = 1000;

describe.skipIf(!binaries.ok)("readiness through a database outage (a private PostgreSQL)", () => {
  let pg: PrivatePostgres;
  let master: Master;
  let server: MasterServer;
  let running: RunningChallenge;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    const config = loadMasterConfig(
      { dataDir: mkdtempSync(join(tmpdir(), "platform-readiness-")), port: 0 },
      {
        ADMIN_TOKEN: `admin-${randomBytes(12).toString("hex")}`,
        DATABASE_URL: pg.url,
        // The outage under test is the database's alone (the reconciler's check reads it too).
        PLATFORM_RECONCILER: "false",
      },
    );
    config.weights.intervalSeconds = 0;
    master = await createMaster(config, {
      masterKey: randomBytes(32),
      logger: createLogger({ name: "readiness-master", level: "silent" }),
    });
    server = await master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" });
    running = await defineChallenge({ slug: "outage", version: "1", weights: () => ({}) }).start({
      host: "127.0.0.1",
      port: 0,
      databaseUrl: pg.url,
      env: { CHALLENGE_TOKEN: `challenge-${randomBytes(12).toString("hex")}`, LOG_LEVEL: "silent" },
    });
  }, 120_000);
  afterAll(async () => {
    await running?.close().catch(() => {});
    await master?.close().catch(() => {});
    await pg?.close();
  });

  // The Docker engine is the machine's, not this test's: the master's probe leaves it out.
  const probes = () => ({
    "master (public)": `${server.url}/readyz?exclude=docker`,
    "master (admin)": `${server.admin.url}/readyz?exclude=docker`,
    challenge: `${running.url}/readyz`,
  });
  const probe = async (url: string) => {
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as { failing: string[] } };
  };

  it("answers 503 naming the database while it is down, and 200 once it is back", async () => {
    for (const [who, url] of Object.entries(probes())) {
      expect([who, (await probe(url)).status]).toEqual([who, 200]);
    }

    await pg.stop();
    const stopped = performance.now();
    await sleep(REPORT_MS + 100);
    // The first probe once the last report is stale: no retry, no second chance.
    for (const [who, url] of Object.entries(probes())) {
      const { status, body } = await probe(url);
      expect([who, status, body.failing]).toEqual([who, 503, ["database"]]);
    }
    console.info(
      `readiness: 503 from all three ${Math.round(performance.now() - stopped)} ms after the server stopped`,
    );

    await pg.start();
    const back = performance.now();
    await sleep(REPORT_MS + 100);
    for (const [who, url] of Object.entries(probes())) {
      // A pool reconnects on its next query: a few probes at most (each a fresh report).
      let result = await probe(url);
      for (let attempt = 0; attempt < 5 && result.status !== 200; attempt++) {
        await sleep(REPORT_MS + 100);
        result = await probe(url);
      }
      expect([who, result.status]).toEqual([who, 200]);
    }
    console.info(
      `readiness: 200 again ${Math.round(performance.now() - back)} ms after the restart`,
    );
  });
});
