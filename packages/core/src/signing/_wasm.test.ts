import { describe, expect, it } from "vitest";
import { cryptoWasm } from "./_wasm.js";

// Isolated (vitest.config.ts): no file before it in this process has run initCrypto.
describe("cryptoWasm", () => {
  it("tells the caller how to fix a call made before initCrypto", () => {
    expect(cryptoWasm).toThrow(/await initCrypto\(\)/);
  });
});
