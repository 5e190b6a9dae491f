import { createDecipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { open, SEALED_BOX_OVERHEAD, SealedBoxError, seal } from "./sealed-box.js";

const key = randomBytes(32);
const aad = "submission:42:env:API_KEY";
const secret = "sk-live-0123456789";

function refusal(action: () => unknown): SealedBoxError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SealedBoxError);
    expect((error as SealedBoxError).code).toBe("sealed_box_invalid");
    return error as SealedBoxError;
  }
  throw new Error("expected the box to be refused");
}

describe("sealed boxes", () => {
  it("opens what it sealed, strings and bytes, empty included", () => {
    expect(open(key, seal(key, secret, aad), aad).toString("utf8")).toBe(secret);
    const bytes = randomBytes(4096);
    expect(open(key, seal(key, bytes, aad), aad).equals(bytes)).toBe(true);
    const empty = seal(key, "", aad);
    expect(empty).toHaveLength(SEALED_BOX_OVERHEAD);
    expect(open(key, empty, aad)).toHaveLength(0);
  });

  it("is v1 || 96-bit nonce || ciphertext || 128-bit tag, readable by plain AES-256-GCM", () => {
    const box = seal(key, secret, aad);
    expect(box[0]).toBe(1);
    expect(box).toHaveLength(1 + 12 + Buffer.byteLength(secret) + 16);
    expect(box.includes(Buffer.from(secret))).toBe(false);
    const decipher = createDecipheriv("aes-256-gcm", key, box.subarray(1, 13));
    decipher.setAAD(Buffer.concat([Buffer.from([1]), Buffer.from(aad)]));
    decipher.setAuthTag(box.subarray(box.length - 16));
    const plain = Buffer.concat([
      decipher.update(box.subarray(13, box.length - 16)),
      decipher.final(),
    ]);
    expect(plain.toString()).toBe(secret);
  });

  it("uses a fresh nonce per box, so equal secrets do not look equal", () => {
    const boxes = Array.from({ length: 64 }, () => seal(key, secret, aad).toString("hex"));
    expect(new Set(boxes).size).toBe(64);
    expect(new Set(boxes.map((box) => box.slice(2, 26))).size).toBe(64);
  });

  it("refuses a box moved to another row (wrong associated data)", () => {
    const box = seal(key, secret, aad);
    refusal(() => open(key, box, "submission:43:env:API_KEY"));
    refusal(() => open(key, box, "submission:42:env:API_KEY2"));
    refusal(() => open(key, box, ""));
  });

  it("refuses a box under another key", () => {
    refusal(() => open(randomBytes(32), seal(key, secret, aad), aad));
  });

  it("refuses any single flipped bit, in the version, nonce, ciphertext or tag", () => {
    const box = seal(key, secret, aad);
    for (let index = 0; index < box.length; index += 1) {
      for (const bit of [0x01, 0x80]) {
        const tampered = Buffer.from(box);
        tampered[index] = (tampered[index] ?? 0) ^ bit;
        refusal(() => open(key, tampered, aad));
      }
    }
  });

  it("refuses another version byte even when everything else is intact", () => {
    const box = seal(key, secret, aad);
    for (const version of [0, 2, 0xff]) {
      const other = Buffer.from(box);
      other[0] = version;
      expect(refusal(() => open(key, other, aad)).message).toContain("version");
    }
  });

  it("refuses truncation at every length (a dropped tag byte included)", () => {
    const box = seal(key, secret, aad);
    for (let length = 0; length < box.length; length += 1) {
      refusal(() => open(key, box.subarray(0, length), aad));
    }
  });

  it("refuses appended bytes and a box spliced from two boxes", () => {
    const box = seal(key, secret, aad);
    refusal(() => open(key, Buffer.concat([box, Buffer.from([0])]), aad));
    const other = seal(key, "another-value-here", aad);
    const spliced = Buffer.concat([box.subarray(0, 13), other.subarray(13)]);
    refusal(() => open(key, spliced, aad));
  });

  it("opens a box that is a view into a larger buffer (as read from a database page)", () => {
    const box = seal(key, secret, aad);
    const page = Buffer.concat([Buffer.alloc(7, 0xaa), box, Buffer.alloc(5, 0xbb)]);
    const view = new Uint8Array(page.buffer, page.byteOffset + 7, box.length);
    expect(open(key, view, aad).toString()).toBe(secret);
  });

  it("refuses a key that is not 32 bytes", () => {
    expect(() => seal(Buffer.alloc(16), secret, aad)).toThrow(RangeError);
    expect(() => open(Buffer.alloc(31), seal(key, secret, aad), aad)).toThrow(RangeError);
  });
});
