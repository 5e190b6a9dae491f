import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Bytes in a master key (HMAC-SHA256 key for derived tokens and admin sessions). */
export const MASTER_KEY_BYTES = 32;

/** Where the key came from: an operator setting, or a file the master made itself. */
export interface MasterKey {
  key: Buffer;
  source: "PLATFORM_MASTER_KEY" | "PLATFORM_MASTER_KEY_FILE" | "generated" | "data-dir";
  path?: string;
}

function parseKey(text: string, origin: string): Buffer {
  const value = text.trim();
  const key =
    /^[0-9a-f]+$/i.test(value) && value.length % 2 === 0
      ? Buffer.from(value, "hex")
      : Buffer.from(value, "base64");
  if (key.length < MASTER_KEY_BYTES) {
    throw new Error(
      `${origin} must hold at least ${MASTER_KEY_BYTES} bytes (64 hex characters or base64)`,
    );
  }
  return key;
}

/**
 * The master key: PLATFORM_MASTER_KEY (hex or base64), or the file named by
 * PLATFORM_MASTER_KEY_FILE, or `<dataDir>/master.key`, created (mode 0600) on first start.
 * Every replica of one master must share it: challenge tokens are derived from it.
 */
export function loadMasterKey(
  dataDir: string,
  env: Record<string, string | undefined> = process.env,
): MasterKey {
  if (env.PLATFORM_MASTER_KEY)
    return {
      key: parseKey(env.PLATFORM_MASTER_KEY, "PLATFORM_MASTER_KEY"),
      source: "PLATFORM_MASTER_KEY",
    };
  const file = env.PLATFORM_MASTER_KEY_FILE;
  if (file) {
    if (!existsSync(file)) throw new Error(`PLATFORM_MASTER_KEY_FILE ${file} does not exist`);
    return {
      key: parseKey(readFileSync(file, "utf8"), `PLATFORM_MASTER_KEY_FILE ${file}`),
      source: "PLATFORM_MASTER_KEY_FILE",
      path: file,
    };
  }
  const path = join(dataDir, "master.key");
  if (existsSync(path))
    return { key: parseKey(readFileSync(path, "utf8"), path), source: "data-dir", path };
  mkdirSync(dirname(path), { recursive: true });
  const key = randomBytes(MASTER_KEY_BYTES);
  writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
  return { key, source: "generated", path };
}
