import type * as WasmCrypto from "@polkadot/wasm-crypto";

// The sr25519 WebAssembly module is loaded by `initCrypto()`, not when the package is imported:
// parsing and compiling it costs about 0.3 CPU-seconds, which every process importing
// @platform/core paid even when it never signs (a `platform --help`, a refusal at its flags,
// a challenge that only reads). Signing and verification stay synchronous (hot path): they use
// the module `initCrypto()` left here.
let loaded: typeof WasmCrypto | undefined;

/** Imports and initialises the module once; resolves false when its WebAssembly failed. */
export async function loadCryptoWasm(): Promise<boolean> {
  const wasm = await import("@polkadot/wasm-crypto");
  const ok = await wasm.waitReady();
  if (ok) loaded = wasm;
  return ok;
}

/** The initialised module; throws the fix when `initCrypto()` has not run (or not finished). */
export function cryptoWasm(): typeof WasmCrypto {
  if (loaded === undefined || !loaded.isReady()) {
    throw new Error("sr25519 is not initialised: call `await initCrypto()` once before signing");
  }
  return loaded;
}
