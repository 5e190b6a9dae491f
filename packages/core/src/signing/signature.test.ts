import { u8aWrapBytes } from "@polkadot/util";
import { signatureVerify, sr25519Sign } from "@polkadot/util-crypto";
import { sr25519Verify } from "@polkadot/wasm-crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { initCrypto } from "./init-crypto.js";
import { keypairFromMnemonic, keypairFromSeed } from "./keys.js";
import { signMessage, verifySignature } from "./signature.js";
import { encodeSs58 } from "./ss58.js";

const DEV_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk";
const DEV_ADDRESS = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";
// The documented POST vector and a signature of it by the dev key (sr25519 signing is
// randomised, so this is one valid signature among many, fixed here and in the docs).
const MESSAGE =
  "platform-request-v1\nPOST\n/challenges/agent-eval/submissions?a=b%20c&a=~x&empty=&z=1\n" +
  "agent-eval\n1795262400\nn0nce-0123456789abcdef\n" +
  "d7d234f759ec34fd6298b7e32318614760070aaef9f4e92ced928324b49a0602";
const SIGNATURE =
  "0x1edf490d5c9f54dbac01dc1b16be0d8c4345c82c882603dd2c868a1019bd735c" +
  "1ac50cd8ec5e121c03ca1e6c4abf9fbef75354987093a2d042bf3cc40b316a87";

const bytes = (text: string) => new TextEncoder().encode(text);

beforeAll(initCrypto);

describe("signMessage / verifySignature", () => {
  it("verifies the documented fixed signature", () => {
    expect(verifySignature(MESSAGE, SIGNATURE, DEV_ADDRESS)).toBe(true);
    expect(verifySignature(bytes(MESSAGE), SIGNATURE.slice(2), DEV_ADDRESS)).toBe(true);
    expect(verifySignature(MESSAGE, SIGNATURE.toUpperCase().replace("0X", "0x"), DEV_ADDRESS)).toBe(
      true,
    );
  });

  it("signs what it verifies, and polkadot-js agrees both ways", () => {
    const pair = keypairFromMnemonic(DEV_PHRASE);
    const signature = signMessage(pair, MESSAGE);
    expect(signature).toMatch(/^0x[0-9a-f]{128}$/);
    expect(verifySignature(MESSAGE, signature, pair.address)).toBe(true);
    expect(signatureVerify(MESSAGE, signature, pair.address)).toMatchObject({
      isValid: true,
      crypto: "sr25519",
    });
    const theirs = sr25519Sign(bytes(MESSAGE), pair);
    expect(verifySignature(MESSAGE, `0x${Buffer.from(theirs).toString("hex")}`, pair.address)).toBe(
      true,
    );
  });

  it("rejects a signature over a different message", () => {
    expect(verifySignature(`${MESSAGE} `, SIGNATURE, DEV_ADDRESS)).toBe(false);
    expect(verifySignature(MESSAGE.replace("POST", "PUT"), SIGNATURE, DEV_ADDRESS)).toBe(false);
    const flipped = SIGNATURE.slice(0, -1) + (SIGNATURE.endsWith("7") ? "8" : "7");
    expect(verifySignature(MESSAGE, flipped, DEV_ADDRESS)).toBe(false);
  });

  it("rejects the right signature under the wrong hotkey", () => {
    const other = keypairFromSeed(`0x${"11".repeat(32)}`);
    expect(verifySignature(MESSAGE, SIGNATURE, other.address)).toBe(false);
  });

  it("accepts the <Bytes>-wrapped form polkadot-js extensions sign", () => {
    const pair = keypairFromMnemonic(DEV_PHRASE);
    const wrapped = sr25519Sign(u8aWrapBytes(bytes(MESSAGE)), pair);
    // Proves the wrapped path is what accepts it: the bare check alone fails.
    expect(sr25519Verify(wrapped, bytes(MESSAGE), pair.publicKey)).toBe(false);
    expect(verifySignature(MESSAGE, Buffer.from(wrapped).toString("hex"), DEV_ADDRESS)).toBe(true);
    expect(verifySignature(`${MESSAGE}x`, Buffer.from(wrapped).toString("hex"), DEV_ADDRESS)).toBe(
      false,
    );
  });

  it("answers false, never throws, on malformed signature or address", () => {
    expect(verifySignature(MESSAGE, "0x1234", DEV_ADDRESS)).toBe(false);
    expect(verifySignature(MESSAGE, `0x${"zz".repeat(64)}`, DEV_ADDRESS)).toBe(false);
    expect(verifySignature(MESSAGE, `${SIGNATURE}00`, DEV_ADDRESS)).toBe(false);
    expect(verifySignature(MESSAGE, SIGNATURE, "not-an-address")).toBe(false);
    expect(verifySignature(MESSAGE, SIGNATURE, `${DEV_ADDRESS.slice(0, -1)}a`)).toBe(false);
    // A 32-byte value that is not a curve point.
    expect(verifySignature(MESSAGE, SIGNATURE, encodeSs58(new Uint8Array(32).fill(255)))).toBe(
      false,
    );
  });
});
