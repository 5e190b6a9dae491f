import { describe, expect, it, vi } from "vitest";

// Importing @polkadot/util-crypto starts the wasm load on its own, so "not ready yet" is only
// reachable deterministically by pretending.
vi.mock("@polkadot/wasm-crypto", () => ({ isReady: () => false }));

const { assertCryptoReady } = await import("./_wasm.js");

describe("assertCryptoReady", () => {
  it("tells the caller how to fix a call made before initCrypto", () => {
    expect(assertCryptoReady).toThrow(/await initCrypto\(\)/);
  });
});
