import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Backend, createLogger, type Sql } from "@platform/core";
import { createTestDatabase } from "@platform/core/testing";
import { loadMasterConfig, type MasterConfig } from "../src/config.js";
import { createMaster, type Master, type MasterServer } from "../src/master.js";

/** Paths the admin listener serves (and the public one does not). */
export const ADMIN_PATH = /^\/(?:admin(?:\/|$|\?)|v1\/admin\/|v1\/docker\/)/;

/** A master on a fresh test database, with a known admin token. */
export interface TestMaster {
  master: Master;
  adminToken: string;
  /** Headers that authorise the admin API. */
  admin: Record<string, string>;
  /**
   * Answer a request in-process, on the listener that serves `path`: the admin one for
   * /admin, /v1/admin and the broker (/v1/docker), the public one for everything else.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Answer a request in-process on the public listener only, whatever the path. */
  publicFetch(path: string, init?: RequestInit): Promise<Response>;
  /** Answer a request in-process on the admin listener only, whatever the path. */
  adminFetch(path: string, init?: RequestInit): Promise<Response>;
  /** The master's database, for assertions on what it stored. */
  sql: Sql;
  /** Start both listeners on real loopback sockets (`.url` public, `.admin.url` admin). */
  listen(): Promise<MasterServer>;
  close(): Promise<void>;
}

/** What a test may pin instead of the fresh values each master gets. */
export interface TestMasterOptions {
  /** The master key, to play one deployment restarted (e.g. after its admin token was rotated). */
  masterKey?: Buffer;
}

/**
 * Start a master for a test: its own database on `backend`, its own data dir and (unless
 * `options.masterKey`) its own key. `configure` may change the config, the admin token included.
 */
export async function startTestMaster(
  backend: Backend,
  configure: (config: MasterConfig) => void = () => {},
  options: TestMasterOptions = {},
): Promise<TestMaster> {
  const dataDir = mkdtempSync(join(tmpdir(), "platform-master-"));
  const config = loadMasterConfig(
    { dataDir, port: 0 },
    { ADMIN_TOKEN: `admin-${randomBytes(12).toString("hex")}` },
  );
  config.imagePolicy = {
    allowedPrefixes: ["ghcr.io/", "registry.test/"],
    requireTagOrDigest: true,
    forbidLatest: true,
  };
  config.weights.intervalSeconds = 0;
  // Most suites register challenges whose images do not exist: the reconciler's suites turn it on.
  config.reconciler.enabled = false;
  configure(config);
  const adminToken = config.adminToken;
  const database = await createTestDatabase({ backend });
  const master = await createMaster(config, {
    database,
    masterKey: options.masterKey ?? randomBytes(32),
    logger: createLogger({ name: "test-master", level: "silent" }),
  });
  return {
    master,
    adminToken,
    admin: { "x-admin-token": adminToken },
    fetch: (path, init) =>
      (ADMIN_PATH.test(path) ? master.adminApp : master.app).fetch(
        new Request(`http://master.test${path}`, init),
      ),
    publicFetch: (path, init) => master.app.fetch(new Request(`http://master.test${path}`, init)),
    adminFetch: (path, init) =>
      master.adminApp.fetch(new Request(`http://master.test${path}`, init)),
    sql: database.sql,
    listen: () => master.listen({ host: "127.0.0.1", port: 0, adminHost: "127.0.0.1" }),
    async close() {
      await master.close();
      await database.close();
    },
  };
}

/** A JSON request init. */
export function jsonInit(
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): RequestInit {
  return {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}
