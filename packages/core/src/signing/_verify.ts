import { wrapBytes } from "./_bytes.js";
import { cryptoWasm } from "./_wasm.js";

// sr25519 check of `message` or of its `<Bytes>…</Bytes>` wrapping (what polkadot-js extensions sign).
export function verifyBytes(
  message: Uint8Array,
  signature: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  const { sr25519Verify } = cryptoWasm();
  try {
    return (
      sr25519Verify(signature, message, publicKey) ||
      sr25519Verify(signature, wrapBytes(message), publicKey)
    );
  } catch {
    return false; // a public key that is not a valid point
  }
}
