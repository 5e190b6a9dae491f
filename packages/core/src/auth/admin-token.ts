import { readFileSync } from "node:fs";

/** Where an admin token came from, for a startup log line that never shows the value. */
export type AdminTokenSource = "ADMIN_TOKEN" | "ADMIN_TOKEN_FILE";

/** The configured admin token and its origin. */
export interface AdminTokenConfig {
  token: string;
  source: AdminTokenSource;
}

/** Admin tokens shorter than this are refused: they can be guessed. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * Read the admin token from ADMIN_TOKEN, or from the file named by ADMIN_TOKEN_FILE (trimmed,
 * for Docker/Kubernetes secrets). Returns null when neither is set; throws a clear error for a
 * missing or unreadable file, an empty value, or one too short to be safe. Never puts the
 * token itself in a message.
 */
export function loadAdminToken(
  env: Record<string, string | undefined> = process.env,
): AdminTokenConfig | null {
  const direct = env.ADMIN_TOKEN;
  const file = env.ADMIN_TOKEN_FILE;
  let config: AdminTokenConfig;
  if (direct !== undefined && direct !== "") {
    config = { token: direct.trim(), source: "ADMIN_TOKEN" };
  } else if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
      throw new Error(`ADMIN_TOKEN_FILE ${file} cannot be read (${reason})`);
    }
    config = { token: text.trim(), source: "ADMIN_TOKEN_FILE" };
  } else {
    return null;
  }
  if (config.token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `the admin token from ${config.source} is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters`,
    );
  }
  return config;
}
