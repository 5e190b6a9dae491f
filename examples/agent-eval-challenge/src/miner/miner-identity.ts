/**
 * The miner's hotkey: from PLATFORM_MNEMONIC, or a key file holding the mnemonic (never a flag,
 * which would land in the shell's history and the process list). The mnemonic stays in this
 * process: workers get a signed grant, never the key.
 */
import { readFileSync, statSync } from "node:fs";
import {
  initCrypto,
  keypairFromMnemonic,
  type Sr25519Keypair,
} from "@platform/challenge-sdk/signing";
import { MinerError } from "./challenge-client.js";

export async function minerKeypair(input: {
  keyFile: string | undefined;
  env: NodeJS.ProcessEnv;
}): Promise<Sr25519Keypair> {
  await initCrypto();
  let mnemonic: string;
  let source: string;
  if (input.keyFile) {
    try {
      mnemonic = readFileSync(input.keyFile, "utf8");
    } catch (error) {
      throw new MinerError(
        `cannot read the key file ${input.keyFile}: ${(error as NodeJS.ErrnoException).code}`,
      );
    }
    if ((statSync(input.keyFile).mode & 0o077) !== 0) {
      console.log(`miner: warning: ${input.keyFile} is readable by others (chmod 600 it)`);
    }
    source = input.keyFile;
  } else if (input.env.PLATFORM_MNEMONIC?.trim()) {
    mnemonic = input.env.PLATFORM_MNEMONIC;
    source = "PLATFORM_MNEMONIC";
  } else {
    throw new MinerError(
      "no hotkey: set PLATFORM_MNEMONIC or pass --key-file <file holding the mnemonic>",
    );
  }
  try {
    return keypairFromMnemonic(mnemonic);
  } catch {
    // Never echo the text: it may be most of a real mnemonic.
    throw new MinerError(`${source} does not hold a valid BIP-39 mnemonic`);
  }
}
