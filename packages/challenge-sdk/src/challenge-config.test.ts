import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ConfigError, checkConfigSchema, loadChallengeConfig } from "./challenge-config.js";

const TOKEN = "ct_0123456789abcdefghijklmnopqrstuvwxyz";
const slug = "my-challenge";

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadChallengeConfig", () => {
  it("reads the base settings with their defaults", () => {
    const { settings, config } = loadChallengeConfig({ slug, env: { CHALLENGE_TOKEN: TOKEN } });
    expect(settings).toEqual({
      port: 8000,
      host: "0.0.0.0",
      databaseUrl: null,
      dataDir: null,
      challengeToken: TOKEN,
      slug,
      masterUrl: null,
      brokerToken: null,
      logLevel: "info",
      verifyPoolSize: 0,
    });
    expect(config).toEqual({});
  });

  it("reads every variable the master and the operator set", () => {
    const { settings } = loadChallengeConfig({
      slug,
      env: {
        PORT: "9001",
        HOST: "127.0.0.1",
        DATABASE_URL: "postgresql://u:p@db:5432/x",
        DATA_DIR: "/data",
        CHALLENGE_TOKEN: TOKEN,
        PLATFORM_CHALLENGE_SLUG: slug,
        PLATFORM_MASTER_URL: "http://master:8080",
        BROKER_TOKEN: "bt_secret",
        LOG_LEVEL: "DEBUG",
      },
    });
    expect(settings).toMatchObject({
      port: 9001,
      host: "127.0.0.1",
      databaseUrl: "postgresql://u:p@db:5432/x",
      dataDir: "/data",
      masterUrl: "http://master:8080",
      brokerToken: "bt_secret",
      logLevel: "debug",
    });
  });

  it("lets explicit options win over the environment", () => {
    const { settings } = loadChallengeConfig({
      slug,
      env: { CHALLENGE_TOKEN: TOKEN, PORT: "not a port", HOST: "0.0.0.0", DATABASE_URL: "nope" },
      port: 0,
      host: "::1",
      databaseUrl: "postgres://localhost/x",
    });
    expect(settings).toMatchObject({ port: 0, host: "::1", databaseUrl: "postgres://localhost/x" });
  });

  it("reads VERIFY_POOL_SIZE (0 to 64), an explicit option winning", () => {
    const env = { CHALLENGE_TOKEN: TOKEN, VERIFY_POOL_SIZE: "2" };
    expect(loadChallengeConfig({ slug, env }).settings.verifyPoolSize).toBe(2);
    expect(loadChallengeConfig({ slug, env, verifyPoolSize: 0 }).settings.verifyPoolSize).toBe(0);
    for (const value of ["-1", "65", "1.5", "two"]) {
      const error = configError(() =>
        loadChallengeConfig({ slug, env: { ...env, VERIFY_POOL_SIZE: value } }),
      );
      expect(error.issues).toEqual([
        { variable: "VERIFY_POOL_SIZE", message: expect.stringContaining("0 (verify inline)") },
      ]);
    }
  });

  it("lists EVERY bad variable at once, and never a value", () => {
    const error = configError(() =>
      loadChallengeConfig({
        slug,
        env: {
          PORT: "70000",
          CHALLENGE_TOKEN: "short-secret",
          DATABASE_URL: "mysql://root:hunter2@db/x",
          PLATFORM_CHALLENGE_SLUG: "someone-else",
          PLATFORM_MASTER_URL: "ftp://master",
          LOG_LEVEL: "loud",
        },
      }),
    );
    expect(error.issues.map((issue) => issue.variable)).toEqual([
      "PORT",
      "CHALLENGE_TOKEN",
      "DATABASE_URL",
      "PLATFORM_CHALLENGE_SLUG",
      "PLATFORM_MASTER_URL",
      "LOG_LEVEL",
    ]);
    for (const secret of [
      "short-secret",
      "hunter2",
      "someone-else",
      "ftp://master",
      "loud",
      "70000",
    ]) {
      expect(error.message).not.toContain(secret);
    }
    expect(error.message).toMatch(/^Invalid challenge configuration:\n {2}- PORT: /);
  });

  it("requires CHALLENGE_TOKEN unless allowNoToken, which also keeps the host on loopback", () => {
    expect(configError(() => loadChallengeConfig({ slug, env: {} })).issues).toEqual([
      { variable: "CHALLENGE_TOKEN", message: expect.stringContaining("required") },
    ]);
    const { settings } = loadChallengeConfig({ slug, env: {}, allowNoToken: true });
    expect(settings).toMatchObject({ challengeToken: null, host: "127.0.0.1" });
  });

  it("refuses allowNoToken in production", () => {
    const error = configError(() =>
      loadChallengeConfig({ slug, env: { NODE_ENV: "production" }, allowNoToken: true }),
    );
    expect(error.issues[0]?.message).toMatch(/production/);
  });

  it("treats blank variables as unset and refuses a token with whitespace", () => {
    const blank = configError(() => loadChallengeConfig({ slug, env: { CHALLENGE_TOKEN: "   " } }));
    expect(blank.issues[0]?.variable).toBe("CHALLENGE_TOKEN");
    const inner = configError(() =>
      loadChallengeConfig({ slug, env: { CHALLENGE_TOKEN: "abcdefgh ijklmnopq" } }),
    );
    expect(inner.issues[0]?.message).toMatch(/whitespace/);
  });

  it("reads the author's config: converted, defaulted, and checked with the base settings", () => {
    const schema = Type.Object({
      MAX_BYTES: Type.Integer({ minimum: 1, default: 1024 }),
      STRICT: Type.Boolean({ default: false }),
      MODEL: Type.String({ minLength: 1 }),
      API_KEY: Type.String({ minLength: 20 }),
    });
    const ok = loadChallengeConfig({
      slug,
      config: schema,
      env: { CHALLENGE_TOKEN: TOKEN, STRICT: "true", MODEL: "m1", API_KEY: "k".repeat(20) },
    });
    expect(ok.config).toEqual({
      MAX_BYTES: 1024,
      STRICT: true,
      MODEL: "m1",
      API_KEY: "k".repeat(20),
    });

    const error = configError(() =>
      loadChallengeConfig({
        slug,
        config: schema,
        env: { MAX_BYTES: "lots", API_KEY: "sk-short-but-secret" },
      }),
    );
    expect(error.issues.map((issue) => issue.variable).sort()).toEqual([
      "API_KEY",
      "CHALLENGE_TOKEN",
      "MAX_BYTES",
      "MODEL",
    ]);
    expect(error.issues.find((issue) => issue.variable === "MODEL")?.message).toBe("required");
    expect(error.message).not.toContain("sk-short-but-secret");
    expect(error.message).not.toContain("lots");
  });
});

describe("checkConfigSchema", () => {
  it("refuses a schema that is not an object or redefines a base variable", () => {
    expect(() => checkConfigSchema(Type.String())).toThrow(/Type.Object/);
    expect(() => checkConfigSchema(Type.Object({ PORT: Type.Integer() }))).toThrow(/PORT/);
    expect(() => checkConfigSchema(Type.Object({ CHALLENGE_TOKEN: Type.String() }))).toThrow(
      /CHALLENGE_TOKEN/,
    );
    expect(() => checkConfigSchema(Type.Object({ MODEL: Type.String() }))).not.toThrow();
    expect(() => checkConfigSchema(undefined)).not.toThrow();
  });
});
