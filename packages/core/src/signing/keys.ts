import { pbkdf2 } from "@noble/hashes/pbkdf2.js";
import { sha512 } from "@noble/hashes/sha2.js";
import {
  generateMnemonic as bip39Generate,
  mnemonicToEntropy,
  validateMnemonic,
} from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";
import { parseHex } from "./_bytes.js";
import { cryptoWasm } from "./_wasm.js";
import { encodeSs58, SS58_PREFIX } from "./ss58.js";

/** An sr25519 key pair with its ss58 address. */
export interface Sr25519Keypair {
  /** 32 bytes. */
  publicKey: Uint8Array;
  /** 64 bytes (schnorrkel key || nonce), the form the wasm signer takes. */
  secretKey: Uint8Array;
  /** ss58 encoding of `publicKey`. */
  address: string;
}

/** Options for deriving a key pair. */
export interface KeypairOptions {
  /** ss58 prefix of `address`; 42 (Bittensor/generic substrate) by default. */
  ss58Prefix?: number;
}

/** A new random BIP-39 English mnemonic of 12 (128-bit) or 24 (256-bit) words. */
export function generateMnemonic(words: 12 | 24 = 12): string {
  if (words !== 12 && words !== 24) throw new RangeError("a mnemonic has 12 or 24 words");
  return bip39Generate(wordlist, words === 12 ? 128 : 256);
}

/**
 * The key pair substrate, polkadot-js and bittensor derive from a mnemonic (no derivation
 * path, no password): mini secret from the BIP-39 entropy, then sr25519 from that seed.
 * Requires `await initCrypto()`.
 */
export function keypairFromMnemonic(
  mnemonic: string,
  options: KeypairOptions = {},
): Sr25519Keypair {
  // The mini secret is derived from the entropy, not the text, so spacing and case are safe to fold.
  const phrase = mnemonic.trim().toLowerCase().split(/\s+/).join(" ");
  if (!validateMnemonic(phrase, wordlist)) {
    throw new Error("invalid mnemonic: not a BIP-39 English phrase with a valid checksum");
  }
  return keypairFromSeed(miniSecret(phrase), options);
}

// Substrate's mini secret (polkadot-js `mnemonicToMiniSecret`, no password): PBKDF2-SHA512 of
// the BIP-39 entropy (not of the phrase, as BIP-39's own seed is), salt "mnemonic", 2048 rounds,
// first 32 bytes.
function miniSecret(phrase: string): Uint8Array {
  const entropy = mnemonicToEntropy(phrase, wordlist);
  const salt = new TextEncoder().encode("mnemonic");
  return pbkdf2(sha512, entropy, salt, { c: 2048, dkLen: 64 }).slice(0, 32);
}

/** The key pair for a 32-byte mini secret seed (`0x`-hex or bytes). Requires `await initCrypto()`. */
export function keypairFromSeed(
  seed: string | Uint8Array,
  options: KeypairOptions = {},
): Sr25519Keypair {
  const bytes = typeof seed === "string" ? parseHex(seed, 32) : seed;
  if (bytes?.length !== 32) throw new TypeError("a seed is 32 bytes (64 hex characters)");
  const pair = cryptoWasm().sr25519KeypairFromSeed(bytes);
  const publicKey = pair.slice(64, 96);
  return {
    publicKey,
    secretKey: pair.slice(0, 64),
    address: encodeSs58(publicKey, options.ss58Prefix ?? SS58_PREFIX),
  };
}
