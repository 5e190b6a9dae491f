import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { CliError } from "./_shared.js";

/** Where `--config` points when it is not given. */
export const DEFAULT_CONFIG_PATH = "config/master.example.yaml";

/** What the admin commands need: where the master is and the admin token. */
export interface AdminConnection {
  /** The master's public listener (registry, proxy). */
  registryUrl: string;
  /** The master's admin listener, where the admin commands post (admin API, broker). */
  adminUrl: string;
  adminToken: string;
}

interface ConfigFile {
  master?: { registry_url?: unknown; admin_url?: unknown };
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
 * The admin listener's default address: the public one's with the port plus one, as
 * `platform master serve` defaults it (http://h:8080 -> http://h:8081; no port: 80 or 443, plus one).
 */
export function defaultAdminUrl(registryUrl: string): string {
  const url = new URL(registryUrl);
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  url.port = String(port + 1);
  return url.origin;
}

/**
 * Read the master URLs and admin token: the YAML config (`master.registry_url`,
 * `master.admin_url`, `security.admin_token` or `security.admin_token_file`), overridden by
 * PLATFORM_MASTER_URL, PLATFORM_ADMIN_URL, ADMIN_TOKEN and ADMIN_TOKEN_FILE. Without an admin
 * URL, the registry URL with the port plus one (the master's default). A missing default config
 * is fine when the environment says everything; a missing explicit one is an error.
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
  if (!/^https?:\/\/[^/?#\s]/.test(registryUrl) || !URL.canParse(registryUrl))
    throw new CliError(`master URL must start with http:// or https://, got "${registryUrl}"`);
  const adminUrl =
    env.PLATFORM_ADMIN_URL ||
    (typeof file.master?.admin_url === "string" ? file.master.admin_url : "") ||
    defaultAdminUrl(registryUrl);
  if (!/^https?:\/\/[^/?#\s]/.test(adminUrl) || !URL.canParse(adminUrl))
    throw new CliError(`admin URL must start with http:// or https://, got "${adminUrl}"`);
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
  return {
    registryUrl: registryUrl.replace(/\/+$/, ""),
    adminUrl: adminUrl.replace(/\/+$/, ""),
    adminToken,
  };
}
