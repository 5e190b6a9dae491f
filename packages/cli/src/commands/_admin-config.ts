import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { CliError } from "./_shared.js";

/** Where `--config` points when it is not given. */
export const DEFAULT_CONFIG_PATH = "config/master.example.yaml";

/** What the admin commands need: where the master is and the admin token. */
export interface AdminConnection {
  registryUrl: string;
  adminToken: string;
}

interface ConfigFile {
  master?: { registry_url?: unknown };
  security?: { admin_token?: unknown; admin_token_file?: unknown };
}

function readTokenFile(path: string, from: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new CliError(
      `cannot read the admin token file ${path} (named by ${from}): ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

/**
 * Read the master URL and admin token: the YAML config (`master.registry_url`,
 * `security.admin_token` or `security.admin_token_file`), overridden by PLATFORM_MASTER_URL,
 * ADMIN_TOKEN and ADMIN_TOKEN_FILE. A missing default config is fine when the environment
 * says everything; a missing explicit one is an error.
 */
export function loadAdminConnection(
  configPath: string | undefined,
  env: Record<string, string | undefined> = process.env,
): AdminConnection {
  const path = resolve(configPath ?? DEFAULT_CONFIG_PATH);
  let file: ConfigFile = {};
  if (existsSync(path)) {
    try {
      file = (parse(readFileSync(path, "utf8")) ?? {}) as ConfigFile;
    } catch (error) {
      throw new CliError(`${path} is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
    }
  } else if (configPath) {
    throw new CliError(`config file ${path} does not exist`);
  }
  const registryUrl =
    env.PLATFORM_MASTER_URL ||
    (typeof file.master?.registry_url === "string" ? file.master.registry_url : "");
  if (!registryUrl) {
    throw new CliError(`no master URL: set master.registry_url in ${path} or PLATFORM_MASTER_URL`);
  }
  if (!/^https?:\/\//.test(registryUrl))
    throw new CliError(`master URL must start with http:// or https://, got "${registryUrl}"`);
  let adminToken = env.ADMIN_TOKEN || "";
  if (!adminToken && env.ADMIN_TOKEN_FILE)
    adminToken = readTokenFile(env.ADMIN_TOKEN_FILE, "ADMIN_TOKEN_FILE");
  if (!adminToken && typeof file.security?.admin_token === "string")
    adminToken = file.security.admin_token.trim();
  if (!adminToken && typeof file.security?.admin_token_file === "string") {
    adminToken = readTokenFile(
      resolve(dirname(path), file.security.admin_token_file),
      `security.admin_token_file in ${path}`,
    );
  }
  if (!adminToken) {
    throw new CliError(
      `no admin token: set security.admin_token_file (or admin_token) in ${path}, or ADMIN_TOKEN / ADMIN_TOKEN_FILE`,
    );
  }
  return { registryUrl: registryUrl.replace(/\/+$/, ""), adminToken };
}
