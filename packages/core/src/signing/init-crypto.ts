import { loadCryptoWasm } from "./_wasm.js";

let ready: Promise<void> | undefined;

/** Loads the sr25519 WebAssembly module; await it once before any key, sign or verify call. */
export function initCrypto(): Promise<void> {
  ready ??= loadCryptoWasm().then(
    (ok) => {
      if (!ok) {
        ready = undefined;
        throw new Error("@polkadot/wasm-crypto failed to initialise");
      }
    },
    (error: unknown) => {
      ready = undefined;
      throw error;
    },
  );
  return ready;
}
