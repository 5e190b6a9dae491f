/** LOG_LEVEL values `platform dev` passes on. */
const LEVELS = new Set(["debug", "info", "warn", "error", "silent"]);

function without(
  env: Record<string, string | undefined>,
  keys: readonly string[],
): Record<string, string | undefined> {
  const copy = { ...env };
  for (const key of keys) delete copy[key];
  return copy;
}

/**
 * Log levels: progress lines are the console, so logs add only what needs attention: the
 * challenges' warnings (their authors want them) and the master's errors. LOG_LEVEL sets both.
 */
export function devLogLevels(env: Record<string, string | undefined>): {
  challenges: string;
  master: "debug" | "info" | "warn" | "error" | "silent";
} {
  const chosen = LEVELS.has(env.LOG_LEVEL ?? "") ? env.LOG_LEVEL : undefined;
  return {
    challenges: chosen ?? "warn",
    master: (chosen ?? "error") as "debug" | "info" | "warn" | "error" | "silent",
  };
}

/**
 * The master's environment: the user's, without DATABASE_URL (dev keeps its own embedded
 * database), collecting weights every 30 s and reaping only at start unless the user says.
 */
export function devMasterEnv(
  env: Record<string, string | undefined>,
): Record<string, string | undefined> {
  return {
    ...without(env, ["DATABASE_URL"]),
    PLATFORM_WEIGHTS_INTERVAL_SECONDS: env.PLATFORM_WEIGHTS_INTERVAL_SECONDS ?? "30",
    PLATFORM_BROKER_REAPER_SECONDS: env.PLATFORM_BROKER_REAPER_SECONDS ?? "0",
  };
}

/**
 * A challenge's environment: the user's, without what would point it at another database,
 * folder, address or the master's admin token, plus what the master would set in production.
 */
export function devChallengeEnv(
  env: Record<string, string | undefined>,
  settings: {
    slug: string;
    masterUrl: string;
    challengeToken: string;
    brokerToken: string;
    logLevel: string;
  },
): Record<string, string | undefined> {
  return {
    ...without(env, [
      "DATABASE_URL",
      "DATA_DIR",
      "PORT",
      "HOST",
      "ADMIN_TOKEN",
      "ADMIN_TOKEN_FILE",
    ]),
    CHALLENGE_TOKEN: settings.challengeToken,
    BROKER_TOKEN: settings.brokerToken,
    PLATFORM_CHALLENGE_SLUG: settings.slug,
    PLATFORM_MASTER_URL: settings.masterUrl,
    LOG_LEVEL: settings.logLevel,
  };
}
