import { describe, expect, it } from "vitest";
import { SealedBoxError } from "./sealed-box.js";
import { openFromKey, sealToKey, x25519KeyPair, x25519PublicKey } from "./sealed-to-key.js";

describe("sealing to an X25519 key", () => {
  const label = "test/label/v1";
  const secret = Buffer.from("the run's instance seed");

  it("opens with the recipient's key only, under the same label only", () => {
    const recipient = x25519KeyPair();
    const sealed = sealToKey(recipient.publicKey, secret, label);
    expect(openFromKey(recipient, sealed, label)).toEqual(secret);
    expect(sealed.box).not.toContain(secret.toString("base64url"));
    const stranger = x25519KeyPair();
    expect(() => openFromKey(stranger, sealed, label)).toThrow(SealedBoxError);
    expect(() => openFromKey(recipient, sealed, "other/label/v1")).toThrow(SealedBoxError);
    // Each seal uses a fresh ephemeral key: the same secret never seals to the same bytes.
    expect(sealToKey(recipient.publicKey, secret, label).box).not.toBe(sealed.box);
  });

  it("refuses a public key that is not 32 raw bytes in base64url", () => {
    expect(() => x25519PublicKey("short")).toThrow(RangeError);
    expect(() => sealToKey("A".repeat(44), secret, label)).toThrow(RangeError);
  });
});
