import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import {
  initCrypto,
  keypairFromMnemonic,
  keypairFromSeed,
  type Sr25519Keypair,
  signMessage,
  verifySignature,
} from "@platform/core";
import { CliError } from "./_shared.js";

/** A key as stored on disk (the mnemonic is the secret: the file is mode 0600). */
interface StoredKey {
  name: string;
  ss58Address: string;
  publicKey: string;
  mnemonic?: string;
  seed?: string;
  createdAt: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Where the CLI keeps its files: PLATFORM_HOME, else ~/.platform. */
export function platformHome(env: Record<string, string | undefined> = process.env): string {
  return env.PLATFORM_HOME || join(homedir(), ".platform");
}

function keyPath(name: string): string {
  if (!NAME.test(name))
    throw new CliError(`key name "${name}" must be letters, digits, '.', '_' or '-'`);
  return join(platformHome(), "keys", `${name}.json`);
}

const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;

/** Save a keypair under `name`; refuses to overwrite unless `force`. */
export function saveKey(
  name: string,
  pair: Sr25519Keypair,
  secret: { mnemonic?: string; seed?: string },
  force = false,
): string {
  const path = keyPath(name);
  if (existsSync(path) && !force)
    throw new CliError(
      `a key named "${name}" exists already (${path}); pass --force to replace it`,
    );
  mkdirSync(join(platformHome(), "keys"), { recursive: true, mode: 0o700 });
  const stored: StoredKey = {
    name,
    ss58Address: pair.address,
    publicKey: hex(pair.publicKey),
    ...secret,
    createdAt: new Date().toISOString(),
  };
  writeFileSync(path, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** Load the keypair saved under `name`. */
export async function loadKey(name: string): Promise<Sr25519Keypair> {
  const path = keyPath(name);
  if (!existsSync(path))
    throw new CliError(
      `no key named "${name}" (${path}); create one with: platform keys new --name ${name}`,
    );
  const stored = JSON.parse(readFileSync(path, "utf8")) as StoredKey;
  await initCrypto();
  if (stored.mnemonic) return keypairFromMnemonic(stored.mnemonic);
  if (stored.seed) return keypairFromSeed(stored.seed);
  throw new CliError(`${path} holds no mnemonic or seed`);
}

/** Public facts of every saved key. */
export function listKeys(): { name: string; ss58Address: string }[] {
  const dir = join(platformHome(), "keys");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .map((file) => JSON.parse(readFileSync(join(dir, file), "utf8")) as StoredKey)
    .map(({ name, ss58Address }) => ({ name, ss58Address }));
}

/** The public facts of the key saved under `name`, without loading its secret. */
export function showKey(name: string): {
  name: string;
  ss58Address: string;
  publicKey: string;
  path: string;
} {
  const path = keyPath(name);
  if (!existsSync(path)) throw new CliError(`no key named "${name}" (${path})`);
  const { ss58Address, publicKey } = JSON.parse(readFileSync(path, "utf8")) as StoredKey;
  return { name, ss58Address, publicKey, path };
}

interface BittensorHotkeyFile {
  secretPhrase?: string;
  secretSeed?: string;
  ss58Address?: string;
}

/**
 * Read a Bittensor wallet hotkey file (~/.bittensor/wallets/NAME/hotkeys/HOTKEY): its
 * secretPhrase or secretSeed gives the keypair, and the derived address must match the file's.
 */
export async function readBittensorHotkey(
  wallet: string,
  hotkey: string,
  walletsDir = join(homedir(), ".bittensor", "wallets"),
): Promise<{ pair: Sr25519Keypair; mnemonic?: string; seed?: string; path: string }> {
  const path = join(walletsDir, wallet, "hotkeys", hotkey);
  if (!existsSync(path)) throw new CliError(`no Bittensor hotkey file at ${path}`);
  const text = readFileSync(path, "utf8");
  let file: BittensorHotkeyFile;
  try {
    file = JSON.parse(text) as BittensorHotkeyFile;
  } catch {
    throw new CliError(
      `${path} is not a plain JSON hotkey file (encrypted hotkeys are not supported: import the mnemonic instead)`,
    );
  }
  await initCrypto();
  let pair: Sr25519Keypair;
  let secret: { mnemonic?: string; seed?: string };
  if (file.secretPhrase) {
    pair = keypairFromMnemonic(file.secretPhrase);
    secret = { mnemonic: file.secretPhrase };
  } else if (file.secretSeed) {
    pair = keypairFromSeed(file.secretSeed);
    secret = { seed: file.secretSeed };
  } else {
    throw new CliError(`${path} has neither secretPhrase nor secretSeed`);
  }
  if (file.ss58Address && file.ss58Address !== pair.address) {
    throw new CliError(
      `${path}: the secret derives ${pair.address} but the file says ${file.ss58Address}`,
    );
  }
  // A last check that the pair signs what it claims before anyone submits with it.
  if (
    !verifySignature("platform-key-check", signMessage(pair, "platform-key-check"), pair.address)
  ) {
    throw new CliError(`${path}: the key does not produce valid signatures`);
  }
  return { pair, ...secret, path };
}
