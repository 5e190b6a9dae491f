import { isReady } from "@polkadot/wasm-crypto";

// Signing and verification are synchronous on purpose (hot path); the price is one await at boot.
export function assertCryptoReady(): void {
  if (!isReady()) {
    throw new Error("sr25519 is not initialised: call `await initCrypto()` once before signing");
  }
}
