import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError as CoreConfigError, createLogger } from "@platform/core";
import { describe, expect, it } from "vitest";
import { ConfigError, loadMasterConfig } from "./config.js";

const ADMIN_TOKEN = "a".repeat(32);

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadMasterConfig", () => {
  it("defaults every setting but the admin token", () => {
    const config = loadMasterConfig({}, { ADMIN_TOKEN });
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      dataDir: resolve(".platform"),
      adminToken: ADMIN_TOKEN,
      network: "platform",
      apiVersion: "1.0",
      masterUid: 0,
      imagePolicy: { allowedPrefixes: ["ghcr.io/"], requireTagOrDigest: true, forbidLatest: true },
      proxy: { timeoutMs: 30_000, uploadLimitBytes: 2_000_000, activeCacheMs: 1000 },
      weights: {
        intervalSeconds: 300,
        timeoutMs: 10_000,
        retries: 2,
        failurePolicy: "burn",
        concurrency: 8,
        keepSnapshots: 2016,
      },
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.weights.metagraph).toBeUndefined();
  });

  it("puts the admin listener on loopback at the public port plus one, unless told otherwise", () => {
    expect(loadMasterConfig({}, { ADMIN_TOKEN })).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      adminHost: "127.0.0.1",
      adminPort: 8081,
    });
    expect(
      loadMasterConfig({ port: 9000 }, { ADMIN_TOKEN, PLATFORM_HOST: "0.0.0.0" }),
    ).toMatchObject({ host: "0.0.0.0", adminHost: "127.0.0.1", adminPort: 9001 });
    // Port 0 (any free port) gives the admin listener any free port too, never the same one.
    expect(loadMasterConfig({ port: 0 }, { ADMIN_TOKEN }).adminPort).toBe(0);
    const env = { ADMIN_TOKEN, PLATFORM_ADMIN_HOST: "10.0.0.2", PLATFORM_ADMIN_PORT: "7000" };
    expect(loadMasterConfig({}, env)).toMatchObject({ adminHost: "10.0.0.2", adminPort: 7000 });
    expect(loadMasterConfig({ adminHost: "127.0.0.2", adminPort: "7100" }, env)).toMatchObject({
      adminHost: "127.0.0.2",
      adminPort: 7100,
    });
  });

  it("refuses an admin port equal to the public one, or past 65535 by default", () => {
    const same = configError(() =>
      loadMasterConfig({ port: 9000, adminPort: 9000 }, { ADMIN_TOKEN }),
    );
    expect(same.issues).toEqual([
      { variable: "--admin-port", message: "must differ from the public port" },
    ]);
    const past = configError(() => loadMasterConfig({}, { ADMIN_TOKEN, PLATFORM_PORT: "65535" }));
    expect(past.issues.map((issue) => issue.variable)).toEqual(["PLATFORM_ADMIN_PORT"]);
    expect(
      configError(() => loadMasterConfig({}, { ADMIN_TOKEN, PLATFORM_ADMIN_PORT: "70000" }))
        .issues[0]?.variable,
    ).toBe("PLATFORM_ADMIN_PORT");
  });

  it("reads the environment, and flags win over it", () => {
    const config = loadMasterConfig(
      { port: "9000", dataDir: "/srv/master" },
      {
        ADMIN_TOKEN,
        PLATFORM_PORT: "7000",
        PLATFORM_HOST: "0.0.0.0",
        DATABASE_URL: "postgresql://u@db:5432/master",
        PLATFORM_NETWORK: "testnet",
        PLATFORM_MASTER_UID: "3",
        PLATFORM_IMAGE_ALLOWLIST: "ghcr.io/org/, registry.example/",
        PLATFORM_IMAGE_REQUIRE_TAG: "false",
        PLATFORM_IMAGE_ALLOW_LATEST: "true",
        PLATFORM_WEIGHTS_FAILURE_POLICY: "redistribute",
        PLATFORM_WEIGHTS_INTERVAL_SECONDS: "0",
        PLATFORM_METAGRAPH: "https://chain.example/metagraph.json",
      },
    );
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 9000,
      dataDir: "/srv/master",
      databaseUrl: "postgresql://u@db:5432/master",
      network: "testnet",
      masterUid: 3,
      imagePolicy: {
        allowedPrefixes: ["ghcr.io/org/", "registry.example/"],
        requireTagOrDigest: false,
        forbidLatest: false,
      },
      weights: {
        intervalSeconds: 0,
        failurePolicy: "redistribute",
        metagraph: "https://chain.example/metagraph.json",
      },
    });
  });

  it("reports EVERY bad setting at once, flags by their flag, and never a value", () => {
    const error = configError(() =>
      loadMasterConfig(
        { port: "eighty" },
        {
          PLATFORM_MASTER_UID: "-1",
          DATABASE_URL: "mysql://root:hunter2@db/x",
          PLATFORM_IMAGE_REQUIRE_TAG: "yes",
          PLATFORM_WEIGHTS_FAILURE_POLICY: "share-it",
          PLATFORM_BROKER_CPUS: "lots",
          PLATFORM_DOCKER_NETWORK: "../host",
          PLATFORM_MASTER_URL: "ftp://master",
        },
      ),
    );
    expect(error.issues.map((issue) => issue.variable)).toEqual([
      "ADMIN_TOKEN",
      "--port",
      "DATABASE_URL",
      "PLATFORM_MASTER_UID",
      "PLATFORM_IMAGE_REQUIRE_TAG",
      "PLATFORM_WEIGHTS_FAILURE_POLICY",
      "PLATFORM_BROKER_CPUS",
      "PLATFORM_DOCKER_NETWORK",
      "PLATFORM_MASTER_URL",
    ]);
    expect(error.message).toMatch(
      /^Invalid master configuration:\n {2}- ADMIN_TOKEN: No admin token/,
    );
    expect(error.message).toContain(
      'PLATFORM_WEIGHTS_FAILURE_POLICY: must be one of "burn", "redistribute"',
    );
    for (const value of ["hunter2", "share-it", "lots", "../host", "ftp://master", "eighty"]) {
      expect(error.message).not.toContain(value);
    }
  });

  it("reports an admin token that is too short or a token file that cannot be read", () => {
    const short = configError(() => loadMasterConfig({}, { ADMIN_TOKEN: "short" }));
    expect(short.issues).toEqual([
      { variable: "ADMIN_TOKEN", message: expect.stringContaining("shorter than 16") },
    ]);
    expect(short.message).not.toContain("short\n");
    const missing = configError(() =>
      loadMasterConfig({}, { ADMIN_TOKEN_FILE: "/nonexistent/platform-admin-token" }),
    );
    expect(missing.issues).toEqual([
      { variable: "ADMIN_TOKEN_FILE", message: expect.stringContaining("cannot be read") },
    ]);
    const file = join(mkdtempSync(join(tmpdir(), "master-config-")), "token");
    writeFileSync(file, `${ADMIN_TOKEN}\n`);
    expect(loadMasterConfig({}, { ADMIN_TOKEN_FILE: file }).adminToken).toBe(ADMIN_TOKEN);
  });

  it("throws core's ConfigError, the one class every package and the CLI check", () => {
    expect(ConfigError).toBe(CoreConfigError);
    expect(configError(() => loadMasterConfig({}, {}))).toBeInstanceOf(CoreConfigError);
  });

  it("reads the chain settings: endpoints in order, the netuid, the metagraph from the chain, the validator's key", () => {
    const config = loadMasterConfig(
      {},
      {
        ADMIN_TOKEN,
        PLATFORM_CHAIN_ENDPOINTS: "wss://a.example:443, ws://127.0.0.1:9944",
        PLATFORM_NETUID: "7",
        PLATFORM_METAGRAPH: "chain",
        PLATFORM_VALIDATOR_HOTKEY_FILE: "keys/validator.json",
      },
    );
    expect(config.chain).toEqual({
      endpoints: ["wss://a.example:443", "ws://127.0.0.1:9944"],
      netuid: 7,
      metagraphFromChain: true,
      metagraphCacheSeconds: 300,
      validatorHotkeyFile: resolve("keys/validator.json"),
      allowBurn: false,
      callTimeoutMs: 10_000,
      blockTimeMs: 12_000,
      healthGateGrace: 3,
      overrideHealthGate: false,
    });
    // `chain` is not a file: the file/URL metagraph stays unset.
    expect(config.weights.metagraph).toBeUndefined();
    expect(loadMasterConfig({}, { ADMIN_TOKEN }).chain).toBeUndefined();
  });

  it("reads the commit-reveal settings: the drand key, the health gate's grace and its override", () => {
    const key = `0x${"ab".repeat(96)}`;
    const config = loadMasterConfig(
      {},
      {
        ADMIN_TOKEN,
        PLATFORM_CHAIN_ENDPOINTS: "ws://127.0.0.1:9944",
        PLATFORM_NETUID: "1",
        PLATFORM_DRAND_PUBLIC_KEY: ` ${key} `,
        PLATFORM_HEALTH_GATE_GRACE: "0",
        PLATFORM_HEALTH_GATE_OVERRIDE: "true",
      },
    );
    expect(config.chain).toMatchObject({
      drandPublicKey: key,
      healthGateGrace: 0,
      overrideHealthGate: true,
    });
    const error = configError(() =>
      loadMasterConfig(
        {},
        {
          ADMIN_TOKEN,
          PLATFORM_CHAIN_ENDPOINTS: "ws://127.0.0.1:9944",
          PLATFORM_NETUID: "1",
          PLATFORM_DRAND_PUBLIC_KEY: "ab".repeat(95),
        },
      ),
    );
    expect(error.issues.map((issue) => issue.variable)).toEqual(["PLATFORM_DRAND_PUBLIC_KEY"]);
  });

  it("refuses chain settings that cannot work together, naming each variable", () => {
    const error = configError(() =>
      loadMasterConfig(
        {},
        { ADMIN_TOKEN, PLATFORM_METAGRAPH: "chain", PLATFORM_VALIDATOR_HOTKEY_FILE: "k" },
      ),
    );
    const messages = error.issues.map((issue) => `${issue.variable}: ${issue.message}`);
    expect(messages).toContain(
      "PLATFORM_METAGRAPH: needs PLATFORM_CHAIN_ENDPOINTS (the chain to use)",
    );
    expect(messages).toContain(
      "PLATFORM_VALIDATOR_HOTKEY_FILE: needs PLATFORM_NETUID (the subnet)",
    );
    const scheme = configError(() =>
      loadMasterConfig(
        {},
        { ADMIN_TOKEN, PLATFORM_CHAIN_ENDPOINTS: "https://a.example", PLATFORM_NETUID: "1" },
      ),
    );
    expect(scheme.issues).toEqual([
      {
        variable: "PLATFORM_CHAIN_ENDPOINTS",
        message: "every endpoint must be a ws:// or wss:// URL",
      },
    ]);
    const root = configError(() =>
      loadMasterConfig(
        {},
        { ADMIN_TOKEN, PLATFORM_CHAIN_ENDPOINTS: "ws://x:1", PLATFORM_NETUID: "0" },
      ),
    );
    expect(root.issues[0]?.variable).toBe("PLATFORM_NETUID");
    const noNetuid = configError(() =>
      loadMasterConfig({}, { ADMIN_TOKEN, PLATFORM_CHAIN_ENDPOINTS: "ws://x:1" }),
    );
    expect(noNetuid.issues).toEqual([
      { variable: "PLATFORM_NETUID", message: "is required with PLATFORM_CHAIN_ENDPOINTS" },
    ]);
  });

  describe("the database URL, from the environment or from secret files", () => {
    const secretFile = (name: string, content: string) => {
      const file = join(mkdtempSync(join(tmpdir(), "master-config-db-")), name);
      writeFileSync(file, content);
      return file;
    };
    const URL_PASSWORD = "url-pa55word-0123";

    it("reads DATABASE_URL_FILE (trimmed), and waits 60 s for the server unless told", () => {
      const file = secretFile("database_url", `postgres://app:${URL_PASSWORD}@db:5432/app\n`);
      const config = loadMasterConfig({}, { ADMIN_TOKEN, DATABASE_URL_FILE: file });
      expect(config.databaseUrl).toBe(`postgres://app:${URL_PASSWORD}@db:5432/app`);
      expect(config.databaseWaitSeconds).toBe(60);
      const told = { ADMIN_TOKEN, PLATFORM_DATABASE_WAIT_SECONDS: "5" };
      expect(loadMasterConfig({}, told).databaseWaitSeconds).toBe(5);
    });

    it("refuses DATABASE_URL (or --database-url) and DATABASE_URL_FILE at once, without either value", () => {
      const file = secretFile("database_url", `postgres://app:${URL_PASSWORD}@db/app\n`);
      const both = configError(() =>
        loadMasterConfig(
          {},
          {
            ADMIN_TOKEN,
            DATABASE_URL: "postgres://app:other-secret@db/app",
            DATABASE_URL_FILE: file,
          },
        ),
      );
      expect(both.issues).toEqual([
        {
          variable: "DATABASE_URL_FILE",
          message: expect.stringContaining("set together with DATABASE_URL: set only one"),
        },
      ]);
      expect(both.message).not.toContain(URL_PASSWORD);
      expect(both.message).not.toContain("other-secret");
      const flag = configError(() =>
        loadMasterConfig(
          { databaseUrl: "postgres://app@db/app" },
          { ADMIN_TOKEN, DATABASE_URL_FILE: file },
        ),
      );
      expect(flag.issues[0]?.message).toContain("set together with --database-url");
    });

    it("refuses a URL file that cannot be read or holds no postgres URL, never printing its content", () => {
      const missing = configError(() =>
        loadMasterConfig({}, { ADMIN_TOKEN, DATABASE_URL_FILE: "/nonexistent/database_url" }),
      );
      expect(missing.issues).toEqual([
        {
          variable: "DATABASE_URL_FILE",
          message: "/nonexistent/database_url cannot be read (ENOENT)",
        },
      ]);
      const junk = secretFile("database_url", `mysql://root:${URL_PASSWORD}@db/app\n`);
      const wrong = configError(() =>
        loadMasterConfig({}, { ADMIN_TOKEN, DATABASE_URL_FILE: junk }),
      );
      expect(wrong.issues[0]).toMatchObject({
        variable: "DATABASE_URL_FILE",
        message: expect.stringContaining("does not hold a postgres:// or postgresql:// URL"),
      });
      expect(wrong.message).not.toContain(URL_PASSWORD);
    });

    it("puts DATABASE_PASSWORD_FILE's first line, percent-encoded, into a URL given without a password", () => {
      const password = "p@ss:/w?rd#%";
      const file = secretFile("postgres_password", `${password}\nignored second line\n`);
      for (const source of [
        { DATABASE_URL: "postgres://platform@postgres:5432/platform" },
        { DATABASE_URL_FILE: secretFile("url", "postgres://platform@postgres:5432/platform\n") },
      ]) {
        const config = loadMasterConfig(
          {},
          { ADMIN_TOKEN, ...source, DATABASE_PASSWORD_FILE: file },
        );
        const url = new URL(config.databaseUrl ?? "");
        expect(decodeURIComponent(url.password)).toBe(password);
        expect(url).toMatchObject({ username: "platform", hostname: "postgres", port: "5432" });
        expect(url.pathname).toBe("/platform");
      }
      // Read from a file, the password is also one the logger cuts out of every line.
      const lines: string[] = [];
      const log = createLogger({ name: "config-test", write: (line) => lines.push(line) });
      log.error("a driver said", { detail: `password ${password} refused` });
      expect(lines.join("\n")).not.toContain(password);
    });

    it("refuses DATABASE_PASSWORD_FILE without a URL, with a URL that has a password, or empty", () => {
      const file = secretFile("postgres_password", "s3cret-password\n");
      const issue = (env: Record<string, string>) =>
        configError(() =>
          loadMasterConfig({}, { ADMIN_TOKEN, DATABASE_PASSWORD_FILE: file, ...env }),
        ).issues;
      expect(issue({})).toEqual([
        {
          variable: "DATABASE_PASSWORD_FILE",
          message: expect.stringContaining("needs DATABASE_URL"),
        },
      ]);
      expect(issue({ DATABASE_URL: "postgres://platform:other@postgres/platform" })).toEqual([
        {
          variable: "DATABASE_PASSWORD_FILE",
          message: "is set but DATABASE_URL carries a password too: keep only the file",
        },
      ]);
      expect(issue({ DATABASE_URL: "postgres://postgres/platform" })[0]?.variable).toBe(
        "DATABASE_URL",
      );
      const empty = secretFile("postgres_password", "\n");
      expect(
        configError(() =>
          loadMasterConfig(
            {},
            {
              ADMIN_TOKEN,
              DATABASE_URL: "postgres://platform@db/p",
              DATABASE_PASSWORD_FILE: empty,
            },
          ),
        ).issues,
      ).toEqual([{ variable: "DATABASE_PASSWORD_FILE", message: `${empty} is empty` }]);
    });
  });
});
