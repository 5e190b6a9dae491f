import { Keyring } from "@polkadot/api";
import type { IKeyringPair } from "@polkadot/types/types";
import { hexToU8a, isHex, u8aToHex } from "@polkadot/util";
import { cryptoWaitReady } from "@polkadot/util-crypto";
import { publicKeyHex } from "./subnet-rules.js";

/**
 * Where a validator's sr25519 key comes from: a keypair already loaded (a `KeyringPair` from
 * @polkadot/keyring or @polkadot/api's `Keyring` satisfies `IKeyringPair`), a BIP-39 mnemonic,
 * a 32-byte mini-secret seed (a Bittensor wallet hotkey file's `secretSeed`), a secret URI
 * (`//Alice`, `mnemonic//hard/soft`), or a 64-byte sr25519 secret key with its public key (a
 * hotkey file's `privateKey` and `publicKey`).
 */
export type ValidatorKeySource =
  | IKeyringPair
  | { mnemonic: string }
  | { seed: string | Uint8Array }
  | { uri: string }
  | { secretKey: string | Uint8Array; publicKey: string | Uint8Array };

const bytes = (value: string | Uint8Array) =>
  typeof value === "string" ? (isHex(value) ? hexToU8a(value) : hexToU8a(`0x${value}`)) : value;

/**
 * The sr25519 keypair the submitter signs with, from any {@link ValidatorKeySource}. With
 * `expectedAddress` (a wallet file's `ss58Address`), a key that does not match is refused.
 */
export async function validatorKeypair(
  source: ValidatorKeySource,
  options: { expectedAddress?: string } = {},
): Promise<IKeyringPair> {
  await cryptoWaitReady();
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let pair: IKeyringPair;
  if ("sign" in source) pair = source;
  else if ("mnemonic" in source) pair = keyring.addFromMnemonic(source.mnemonic.trim());
  else if ("uri" in source) pair = keyring.addFromUri(source.uri);
  else if ("seed" in source) {
    const seed = bytes(source.seed);
    if (seed.length !== 32) throw new Error("an sr25519 seed is 32 bytes");
    pair = keyring.addFromSeed(seed);
  } else {
    pair = keyring.addFromPair({
      publicKey: bytes(source.publicKey),
      secretKey: bytes(source.secretKey),
    });
  }
  if (options.expectedAddress !== undefined) {
    const expected = publicKeyHex(options.expectedAddress);
    if (expected === undefined || expected !== u8aToHex(pair.publicKey)) {
      throw new Error("the key does not match the wallet's ss58Address");
    }
  }
  return pair;
}
