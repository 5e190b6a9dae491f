import { readFile } from "node:fs/promises";
import {
  initCrypto,
  keypairFromMnemonic,
  keypairFromSeed,
  type Sr25519Keypair,
  signMessage,
  verifySignature,
} from "@platform/core";

/** A hotkey file that cannot be used; the message says why and never holds a secret. */
export class HotkeyFileError extends Error {
  override readonly name = "HotkeyFileError";
}

/** A validator's hotkey and the secret it came from (what a chain signer is built from). */
export interface ValidatorHotkey {
  pair: Sr25519Keypair;
  /** Exactly one of the two. */
  secret: { mnemonic: string } | { seed: string };
  path: string;
}

interface HotkeyFileShape {
  // A Bittensor wallet hotkey file (~/.bittensor/wallets/NAME/hotkeys/HOTKEY).
  secretPhrase?: unknown;
  secretSeed?: unknown;
  // A key saved by `platform keys` (~/.platform/keys/NAME.json).
  mnemonic?: unknown;
  seed?: unknown;
  ss58Address?: unknown;
}

/**
 * Read a validator's hotkey from `path`: a plain Bittensor wallet hotkey file (`secretPhrase` or
 * `secretSeed`) or a key saved by `platform keys` (`mnemonic` or `seed`). The address the file
 * states, when it states one, must be the one the secret derives, and the pair must sign.
 */
export async function readValidatorHotkey(path: string): Promise<ValidatorHotkey> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new HotkeyFileError(
      `cannot read the hotkey file ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  let file: HotkeyFileShape;
  try {
    file = JSON.parse(text) as HotkeyFileShape;
  } catch {
    throw new HotkeyFileError(
      `${path} is not a plain JSON hotkey file (an encrypted hotkey cannot be used: import its mnemonic with platform keys import)`,
    );
  }
  if (typeof file !== "object" || file === null)
    throw new HotkeyFileError(`${path} is not a JSON object`);
  await initCrypto();
  const phrase = [file.secretPhrase, file.mnemonic].find((v) => typeof v === "string" && v);
  const seed = [file.secretSeed, file.seed].find((v) => typeof v === "string" && v);
  let pair: Sr25519Keypair;
  let secret: ValidatorHotkey["secret"];
  try {
    if (typeof phrase === "string") {
      pair = keypairFromMnemonic(phrase);
      secret = { mnemonic: phrase };
    } else if (typeof seed === "string") {
      pair = keypairFromSeed(seed);
      secret = { seed };
    } else {
      throw new HotkeyFileError(
        `${path} holds no secretPhrase, secretSeed, mnemonic or seed (a coldkeypub or public-only file cannot sign)`,
      );
    }
  } catch (error) {
    if (error instanceof HotkeyFileError) throw error;
    // The library's message can quote the input; ours never does.
    throw new HotkeyFileError(`${path}: its secret is not a valid mnemonic or 32-byte seed`);
  }
  if (typeof file.ss58Address === "string" && file.ss58Address !== pair.address) {
    throw new HotkeyFileError(
      `${path}: the secret derives ${pair.address} but the file says ${file.ss58Address}`,
    );
  }
  if (!verifySignature("platform-key-check", signMessage(pair, "platform-key-check"), pair.address))
    throw new HotkeyFileError(`${path}: the key does not produce valid signatures`);
  return { pair, secret, path };
}
