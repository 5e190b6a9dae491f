import { parseHex, toBytes, toHex } from "./_bytes.js";
import { verifyBytes } from "./_verify.js";
import { cryptoWasm } from "./_wasm.js";
import type { Sr25519Keypair } from "./keys.js";
import { decodeSs58Account } from "./ss58.js";

/** Signs `message` (a string is UTF-8 encoded) and returns the 64-byte signature as `0x`-hex. */
export function signMessage(pair: Sr25519Keypair, message: Uint8Array | string): string {
  return `0x${toHex(cryptoWasm().sr25519Sign(pair.publicKey, pair.secretKey, toBytes(message)))}`;
}

/**
 * True when `signatureHex` (64 bytes, `0x` optional) is `ss58`'s sr25519 signature of `message`
 * or of `<Bytes>` + message + `</Bytes>`. Malformed input is false, never an exception.
 * Requires `await initCrypto()`.
 */
export function verifySignature(
  message: Uint8Array | string,
  signatureHex: string,
  ss58: string,
): boolean {
  cryptoWasm(); // before initCrypto a call is a programming error, thrown whatever the input
  const signature = parseHex(signatureHex, 64);
  if (!signature) return false;
  let publicKey: Uint8Array;
  try {
    publicKey = decodeSs58Account(ss58).publicKey;
  } catch {
    return false;
  }
  return verifyBytes(toBytes(message), signature, publicKey);
}
