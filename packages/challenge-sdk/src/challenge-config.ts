import { ConfigError, type ConfigIssue, type LogLevel, readEnvironment } from "@platform/core";
import type { Static, TObject, TSchema } from "@sinclair/typebox";

/** The settings every challenge reads from its environment (the master sets the platform ones). */
export interface ChallengeSettings {
  /** PORT (default 8000). */
  port: number;
  /** HOST (default 0.0.0.0; 127.0.0.1 in development without a token). */
  host: string;
  /** DATABASE_URL: PostgreSQL; null means the embedded PGlite. */
  databaseUrl: string | null;
  /** DATA_DIR: where the embedded PGlite keeps its files (default .platform/pglite). */
  dataDir: string | null;
  /** CHALLENGE_TOKEN: the bearer the master presents on internal routes; null only in development. */
  challengeToken: string | null;
  /** The challenge slug (PLATFORM_CHALLENGE_SLUG, when set, must equal it). */
  slug: string;
  /** PLATFORM_MASTER_URL: the master as this container reaches it (broker calls). */
  masterUrl: string | null;
  /** BROKER_TOKEN: the bearer of the master's container broker. */
  brokerToken: string | null;
  /** LOG_LEVEL (default info). */
  logLevel: LogLevel;
  /** VERIFY_POOL_SIZE: worker threads that verify miner signatures; 0 (default) verifies inline. */
  verifyPoolSize: number;
}

/** The environment variables of {@link ChallengeSettings}; an author's `config` may not reuse them. */
export const BASE_SETTING_VARIABLES = [
  "PORT",
  "HOST",
  "DATABASE_URL",
  "DATA_DIR",
  "CHALLENGE_TOKEN",
  "PLATFORM_CHALLENGE_SLUG",
  "PLATFORM_MASTER_URL",
  "BROKER_TOKEN",
  "LOG_LEVEL",
  "VERIFY_POOL_SIZE",
] as const;

/** Most verify threads a challenge may ask for (more than the cores only adds switching). */
export const MAX_VERIFY_POOL_SIZE = 64;

/** Shortest CHALLENGE_TOKEN accepted: the master issues 46 characters. */
export const MIN_CHALLENGE_TOKEN_LENGTH = 16;

// One ConfigError for every package (core's): `instanceof` holds wherever it was thrown, and a
// CLI recognises a challenge's, the master's and its own the same way.
export { ConfigError, type ConfigIssue };

/** What {@link loadChallengeConfig} reads. Explicit options win over the environment. */
export interface LoadChallengeConfigOptions<C extends TObject | undefined = undefined> {
  slug: string;
  /** The environment (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** The author's extra settings: a TypeBox object keyed by environment variable name. */
  config?: C;
  port?: number;
  host?: string;
  databaseUrl?: string;
  dataDir?: string;
  /** Development only: run without CHALLENGE_TOKEN (internal routes then need no bearer). */
  allowNoToken?: boolean;
  /** Wins over VERIFY_POOL_SIZE. */
  verifyPoolSize?: number;
}

/** The author's config type: the static type of the `config` schema, or `{}` without one. */
export type ConfigOf<C> = C extends TSchema ? Static<C> : Record<string, never>;

const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function isUrl(value: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/**
 * Read and check a challenge's settings and the author's `config` from the environment. Every
 * problem is collected, then thrown together as one {@link ConfigError}.
 * @example const { settings, config } = loadChallengeConfig({ slug: "my-challenge", config: Type.Object({ MODEL: Type.String() }) });
 */
export function loadChallengeConfig<C extends TObject | undefined = undefined>(
  options: LoadChallengeConfigOptions<C>,
): { settings: ChallengeSettings; config: ConfigOf<C> } {
  const env = options.env ?? process.env;
  const issues: ConfigIssue[] = [];
  const bad = (variable: string, message: string) => issues.push({ variable, message });

  let port = options.port ?? 8000;
  const portText = options.port === undefined ? nonEmpty(env["PORT"]) : undefined;
  if (portText !== undefined) {
    if (/^\d{1,5}$/.test(portText) && Number(portText) <= 65_535) port = Number(portText);
    else bad("PORT", "must be an integer from 0 to 65535");
  } else if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    bad("PORT", "must be an integer from 0 to 65535");
  }

  const production = env["NODE_ENV"] === "production";
  const allowNoToken = options.allowNoToken === true;
  if (allowNoToken && production) {
    bad(
      "CHALLENGE_TOKEN",
      "allowNoToken is for development and is refused when NODE_ENV=production",
    );
  }
  const token = nonEmpty(env["CHALLENGE_TOKEN"]);
  if (token === undefined && !allowNoToken) {
    bad("CHALLENGE_TOKEN", "required: the bearer token the master issued for this challenge");
  } else if (token !== undefined && token.length < MIN_CHALLENGE_TOKEN_LENGTH) {
    bad("CHALLENGE_TOKEN", `must be at least ${MIN_CHALLENGE_TOKEN_LENGTH} characters`);
  } else if (token !== undefined && /\s/.test(token)) {
    bad("CHALLENGE_TOKEN", "must not contain whitespace");
  }

  // Without a token this is a development server: keep it off the network unless asked.
  const host = options.host ?? nonEmpty(env["HOST"]) ?? (token ? "0.0.0.0" : "127.0.0.1");

  const databaseUrl = options.databaseUrl ?? nonEmpty(env["DATABASE_URL"]) ?? null;
  if (databaseUrl !== null && !isUrl(databaseUrl, ["postgres:", "postgresql:"])) {
    bad("DATABASE_URL", "must be a postgres:// or postgresql:// URL");
  }
  const dataDir = options.dataDir ?? nonEmpty(env["DATA_DIR"]) ?? null;

  const slugFromEnv = nonEmpty(env["PLATFORM_CHALLENGE_SLUG"]);
  if (slugFromEnv !== undefined && slugFromEnv !== options.slug) {
    bad(
      "PLATFORM_CHALLENGE_SLUG",
      `names another challenge; this image serves "${options.slug}" (register it under that slug)`,
    );
  }

  const masterUrl = nonEmpty(env["PLATFORM_MASTER_URL"]) ?? null;
  if (masterUrl !== null && !isUrl(masterUrl, ["http:", "https:"])) {
    bad("PLATFORM_MASTER_URL", "must be an http:// or https:// URL");
  }
  const brokerToken = nonEmpty(env["BROKER_TOKEN"]) ?? null;

  const levelText = nonEmpty(env["LOG_LEVEL"])?.toLowerCase() ?? "info";
  const logLevel = LOG_LEVELS.includes(levelText as LogLevel) ? (levelText as LogLevel) : "info";
  if (!LOG_LEVELS.includes(levelText as LogLevel)) {
    bad("LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}`);
  }

  let verifyPoolSize = options.verifyPoolSize ?? 0;
  const poolText =
    options.verifyPoolSize === undefined ? nonEmpty(env["VERIFY_POOL_SIZE"]) : undefined;
  const poolProblem = `must be an integer from 0 (verify inline) to ${MAX_VERIFY_POOL_SIZE}`;
  if (poolText !== undefined) {
    if (/^\d{1,2}$/.test(poolText) && Number(poolText) <= MAX_VERIFY_POOL_SIZE) {
      verifyPoolSize = Number(poolText);
    } else bad("VERIFY_POOL_SIZE", poolProblem);
  } else if (
    !Number.isInteger(verifyPoolSize) ||
    verifyPoolSize < 0 ||
    verifyPoolSize > MAX_VERIFY_POOL_SIZE
  ) {
    bad("VERIFY_POOL_SIZE", poolProblem);
  }

  const config = readAuthorConfig(options.config, env, bad);
  if (issues.length > 0) throw new ConfigError(issues, "challenge configuration");
  return {
    settings: {
      port,
      host,
      databaseUrl,
      dataDir,
      challengeToken: token ?? null,
      slug: options.slug,
      masterUrl,
      brokerToken,
      logLevel,
      verifyPoolSize,
    },
    config: config as ConfigOf<C>,
  };
}

function readAuthorConfig(
  schema: TObject | undefined,
  env: Record<string, string | undefined>,
  bad: (variable: string, message: string) => void,
): unknown {
  if (!schema) return {};
  const result = readEnvironment(schema, env);
  if (result.ok) return result.value;
  for (const issue of result.issues) bad(issue.variable, issue.message);
  return undefined;
}

/** Throws if an author's `config` schema is unusable (not an object, or reuses a base variable). */
export function checkConfigSchema(schema: TSchema | undefined): void {
  if (schema === undefined) return;
  if (schema.type !== "object" || typeof schema.properties !== "object") {
    throw new TypeError("defineChallenge: `config` must be a Type.Object keyed by variable name");
  }
  for (const name of Object.keys(schema.properties as object)) {
    if ((BASE_SETTING_VARIABLES as readonly string[]).includes(name)) {
      throw new TypeError(`defineChallenge: \`config\` may not redefine ${name}; the SDK reads it`);
    }
  }
}
