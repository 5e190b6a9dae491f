/**
 * The service's one master secret and the purpose keys derived from it. One file to protect and
 * back up; a key leaked from one use (say, cursor signing) reveals nothing about another (the
 * review-token MAC or the env encryption), because each is HKDF output under its own label.
 */
import { hkdfSync, randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { link, mkdir, open, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "@platform/challenge-sdk";

/** Bytes of the master key and of every derived key (256-bit HMAC and AES keys). */
export const SECRET_KEY_BYTES = 32;

/** The file generated in the data directory when no SECRET_KEY_FILE is set (development only). */
export const GENERATED_KEY_FILE_NAME = "agent-eval-secret.key";

/**
 * One HKDF label per use of a derived key. Changing a label changes the key: every stored token
 * hash, cursor and ciphertext made under the old one stops verifying, so labels carry a version.
 */
export const KeyLabel = {
  /** MAC of review assignment tokens (REVIEW_SESSION_TOKEN). */
  reviewToken: "agent-eval/review-token/v1",
  /** MAC of eval run tokens (EVAL_RUN_TOKEN). */
  runToken: "agent-eval/run-token/v1",
  /** MAC of eval attempt tokens (the events route's per-attempt bearer). */
  attemptToken: "agent-eval/attempt-token/v1",
  /** MAC of paging cursors. */
  cursor: "agent-eval/cursor/v1",
  /** AES-256-GCM key of the miner environment values at rest. */
  envEncryption: "agent-eval/env-encryption/v1",
  /** AES-256-GCM key of review evidence objects at rest. */
  evidenceEncryption: "agent-eval/evidence-encryption/v1",
  /** MAC of telemetry session ids. */
  telemetry: "agent-eval/telemetry/v1",
  /** HMAC deriving each eval run's instance seed (the secret its task instances come from). */
  instanceSeed: "agent-eval/instance-seed/v1",
  /** The replay-audit sampler's default seed (unpredictable without the key). */
  replayAuditSeed: "agent-eval/replay-audit-seed/v1",
} as const;

/** One of the {@link KeyLabel} values. */
export type KeyLabel = (typeof KeyLabel)[keyof typeof KeyLabel];

// RFC 5869 allows a fixed, non-secret salt; fixing it keeps derivation deterministic (the same
// master file gives the same keys after a restart) and separates this service's keys from any
// other HKDF use of the same master.
const HKDF_SALT = Buffer.from("platform/agent-eval-challenge/hkdf-salt/v1", "utf8");

/** Where the master key comes from. */
export interface SecretKeySource {
  /** SECRET_KEY_FILE: a file holding the key. Empty or undefined means "not set". */
  path?: string | undefined;
  /** The service's data directory, where a development key is generated when no file is set. */
  dataDir: string;
  /** In production a missing SECRET_KEY_FILE is a configuration error, never a generated key. */
  production: boolean;
}

// The longest accepted encoding is 64 hex characters plus a little surrounding whitespace; the
// read stops after this many bytes so a wrong path (/dev/zero, a log file) costs nothing.
const MAX_KEY_FILE_BYTES = 256;

/**
 * The master key: read from `path` (32 raw bytes, 64 hex characters, or base64/base64url of 32
 * bytes; surrounding whitespace allowed in the text forms); without a path and outside
 * production, generated once in `dataDir` and reused.
 * @throws ConfigError naming SECRET_KEY_FILE and the file, never its content.
 */
export async function loadSecretKey(source: SecretKeySource): Promise<Buffer> {
  if (source.path !== undefined && source.path !== "") {
    return readKeyFile(source.path);
  }
  if (source.production) {
    throw keyFileError(
      "must be set in production: the path of a file holding one 32-byte key (32 raw bytes, 64 hex characters or base64); a generated development key is never used in production",
    );
  }
  return generateOrReuseKey(source.dataDir);
}

/**
 * The key for one use, derived from the master key with HKDF-SHA256 (RFC 5869). Deterministic:
 * the same master and label always give the same 32 bytes.
 */
export function deriveKey(master: Uint8Array, label: KeyLabel): Buffer {
  if (master.length !== SECRET_KEY_BYTES) {
    throw new RangeError(`the master key must be ${SECRET_KEY_BYTES} bytes, got ${master.length}`);
  }
  return Buffer.from(hkdfSync("sha256", master, HKDF_SALT, label, SECRET_KEY_BYTES));
}

async function readKeyFile(path: string): Promise<Buffer> {
  let content: Buffer;
  try {
    const handle = await open(path, "r");
    try {
      const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
      let length = 0;
      // A pipe or a special file may answer in several short reads.
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      content = buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw keyFileError(`cannot read ${path} (${reason})`, error);
  }
  const key = decodeKey(content);
  if (key === null) {
    throw keyFileError(
      `${path} does not hold a 32-byte key: expected exactly 32 raw bytes, 64 hex characters, or the base64 of 32 bytes (got ${content.length > MAX_KEY_FILE_BYTES ? `more than ${MAX_KEY_FILE_BYTES}` : content.length} bytes)`,
    );
  }
  if (key.every((byte) => byte === 0)) {
    throw keyFileError(`${path} holds an all-zero key, which is a placeholder, not a secret`);
  }
  return key;
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
// 32 bytes are 43 base64 characters (the last carries 4 bits) and one "=" of padding.
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=?$/;
const BASE64URL_KEY = /^[A-Za-z0-9_-]{43}=?$/;

/** The key `content` encodes, or null. */
function decodeKey(content: Buffer): Buffer | null {
  // Exactly 32 bytes is the raw form, whatever the bytes (a random key may look like text).
  if (content.length === SECRET_KEY_BYTES) return Buffer.from(content);
  if (content.length > MAX_KEY_FILE_BYTES) return null;
  const text = content.toString("latin1").replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "");
  if (HEX_KEY.test(text)) return Buffer.from(text, "hex");
  if (BASE64_KEY.test(text) || BASE64URL_KEY.test(text)) {
    const unpadded = text.replace(/=$/, "");
    const key = Buffer.from(unpadded, BASE64_KEY.test(text) ? "base64" : "base64url");
    // Node's decoder ignores non-zero spare bits: demand the one canonical spelling.
    const again = key.toString(BASE64_KEY.test(text) ? "base64" : "base64url").replace(/=$/, "");
    if (key.length === SECRET_KEY_BYTES && again === unpadded) return key;
  }
  return null;
}

/**
 * Creates the development key once, atomically, and reuses it. The key is written to a private
 * temporary file (O_EXCL, mode 0600) and published with link(2), which fails if the name exists:
 * a reader never sees a half-written key, a crash leaves no empty key file behind, and of two
 * processes starting together exactly one key wins and both load it.
 */
async function generateOrReuseKey(dataDir: string): Promise<Buffer> {
  const finalPath = join(dataDir, GENERATED_KEY_FILE_NAME);
  try {
    // The usual case after the first start: the key exists, nothing is written.
    await stat(finalPath);
    return await readKeyFile(finalPath);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    // Missing (or not yet visible): create it below; link(2) settles any race.
  }
  try {
    await publishNewKey(dataDir, finalPath);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "failed";
    throw keyFileError(
      `is not set, and a development key could not be created in ${dataDir} (${reason}); set SECRET_KEY_FILE or make the data directory writable`,
      error,
    );
  }
  return readKeyFile(finalPath);
}

async function publishNewKey(dataDir: string, finalPath: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const temporaryPath = `${finalPath}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(
    temporaryPath,
    fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL,
    0o600,
  );
  try {
    try {
      // Hex, so a developer can copy the file's content into a SECRET_KEY_FILE later.
      await handle.writeFile(`${randomBytes(SECRET_KEY_BYTES).toString("hex")}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporaryPath, finalPath);
    } catch (error) {
      // Another process (or an earlier run) published first: its key is the key.
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  } finally {
    await unlink(temporaryPath).catch(() => undefined);
  }
}

function keyFileError(message: string, cause?: unknown): ConfigError {
  const error = new ConfigError(
    [{ variable: "SECRET_KEY_FILE", message }],
    "secret key configuration",
  );
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause });
  return error;
}
