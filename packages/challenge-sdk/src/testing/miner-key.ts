import {
  generateMnemonic,
  initCrypto,
  keypairFromMnemonic,
  type Sr25519Keypair,
} from "@platform/core";

/** A miner's hotkey for tests: the key pair (usable with `signRequest`) and its mnemonic. */
export interface MinerKey extends Sr25519Keypair {
  mnemonic: string;
  /** The ss58 address (same as `address`). */
  hotkey: string;
}

/**
 * A fresh random miner hotkey, or the one of `mnemonic`. Initialises the crypto on first use.
 * @example const miner = await createMinerKey(); signRequest(miner, { method: "GET", url, slug });
 */
export async function createMinerKey(mnemonic?: string): Promise<MinerKey> {
  await initCrypto();
  const phrase = mnemonic ?? generateMnemonic();
  const pair = keypairFromMnemonic(phrase);
  return { ...pair, mnemonic: phrase, hotkey: pair.address };
}
