import { waitReady } from "@polkadot/wasm-crypto";

let ready: Promise<void> | undefined;

/** Loads the sr25519 WebAssembly module; await it once before any key, sign or verify call. */
export function initCrypto(): Promise<void> {
  ready ??= waitReady().then((ok) => {
    if (!ok) {
      ready = undefined;
      throw new Error("@polkadot/wasm-crypto failed to initialise");
    }
  });
  return ready;
}
