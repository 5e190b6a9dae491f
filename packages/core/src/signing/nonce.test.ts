import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isValidNonce, newNonce } from "./nonce.js";

describe("nonce", () => {
  it("accepts 16 to 128 characters of [A-Za-z0-9_-]", () => {
    expect(isValidNonce("a".repeat(16))).toBe(true);
    expect(isValidNonce("Z".repeat(128))).toBe(true);
    expect(isValidNonce("aZ09_-aZ09_-aZ09")).toBe(true);
    expect(isValidNonce(randomUUID())).toBe(true);
    expect(isValidNonce(randomUUID().replaceAll("-", ""))).toBe(true);
  });

  it("refuses too short, too long and other characters", () => {
    for (const nonce of [
      "",
      "a".repeat(15),
      "a".repeat(129),
      "0123456789abcde=",
      "0123456789abcde.",
      "0123456789abcde ",
      "0123456789abcdé0",
      "0123456789abcdef\n",
    ]) {
      expect(isValidNonce(nonce), JSON.stringify(nonce)).toBe(false);
    }
  });

  it("newNonce is valid and does not repeat", () => {
    const seen = new Set(Array.from({ length: 1000 }, newNonce));
    expect(seen.size).toBe(1000);
    for (const nonce of seen) expect(isValidNonce(nonce)).toBe(true);
  });
});
