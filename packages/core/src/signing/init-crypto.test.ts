import { describe, expect, it } from "vitest";
import { initCrypto } from "./init-crypto.js";
import { keypairFromSeed } from "./keys.js";

describe("initCrypto", () => {
  it("is idempotent and makes the synchronous API usable", async () => {
    const first = initCrypto();
    expect(initCrypto()).toBe(first);
    await first;
    expect(keypairFromSeed(`0x${"00".repeat(32)}`).publicKey).toHaveLength(32);
  });
});
