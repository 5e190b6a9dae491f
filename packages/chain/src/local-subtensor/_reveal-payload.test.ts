import { describe, expect, it } from "vitest";
import { encodeWeightsTlockPayload } from "../weights-tlock-payload.js";
import { readRevealPayload } from "./_reveal-payload.js";
import { concatBytes } from "./_runtime.js";

const ME = new Uint8Array(32).fill(7);
const OTHER = new Uint8Array(32).fill(8);

// LegacyWeightsTlockPayload {uids, values, version_key}, SCALE.
const legacy = (uids: number[], values: number[], versionKey: bigint) => {
  const u16s = (list: number[]) => [list.length << 2, ...list.flatMap((v) => [v & 0xff, v >> 8])];
  const key = new Uint8Array(8);
  new DataView(key.buffer).setBigUint64(0, versionKey, true);
  return concatBytes([Uint8Array.from([...u16s(uids), ...u16s(values)]), key]);
};

describe("reading a decrypted commit as the chain does", () => {
  it("takes what encodeWeightsTlockPayload writes, for its own hotkey only", () => {
    const bytes = encodeWeightsTlockPayload({
      hotkey: ME,
      uids: [0, 5],
      values: [1, 65535],
      versionKey: 9n,
    });
    expect(readRevealPayload(bytes, ME)).toEqual({
      ok: true,
      uids: [0, 5],
      values: [1, 65535],
      versionKey: 9n,
      format: "v4",
    });
    expect(readRevealPayload(bytes, OTHER)).toEqual({
      ok: false,
      reason: "hotkey mismatch in payload",
    });
  });

  it("is as lenient as parity-scale-codec: trailing bytes, a longer hotkey", () => {
    const bytes = encodeWeightsTlockPayload({ hotkey: ME, uids: [1], values: [2], versionKey: 3n });
    expect(readRevealPayload(concatBytes([bytes, new Uint8Array([1, 2, 3])]), ME)).toMatchObject({
      ok: true,
      uids: [1],
    });
    // A 33-byte hotkey: the AccountId32 is its first 32 bytes.
    const long = concatBytes([Uint8Array.of(33 << 2), ME, Uint8Array.of(0), bytes.subarray(33)]);
    expect(readRevealPayload(long, ME)).toMatchObject({ ok: true, uids: [1], values: [2] });
  });

  it("falls back to the legacy payload, and drops what is neither", () => {
    const old = legacy([0, 1, 2], [10, 20, 30], 4n);
    expect(readRevealPayload(old, ME)).toEqual({
      ok: true,
      uids: [0, 1, 2],
      values: [10, 20, 30],
      versionKey: 4n,
      format: "legacy",
    });
    expect(readRevealPayload(new Uint8Array([1, 2]), ME)).toEqual({
      ok: false,
      reason: "error deserializing both payload formats",
    });
    // A v4 payload whose hotkey is too short for an account id, and no legacy reading either.
    const short = concatBytes([
      Uint8Array.of(4 << 2),
      new Uint8Array(4),
      Uint8Array.of(0, 0),
      new Uint8Array(8),
    ]);
    expect(readRevealPayload(short, ME)).toEqual({
      ok: false,
      reason: "error deserializing hotkey",
    });
  });

  it("refuses a non-canonical compact length, as the codec does", () => {
    // Length 1 written in the two-byte mode.
    const bytes = concatBytes([Uint8Array.of(0b101, 0), new Uint8Array(1), new Uint8Array(12)]);
    expect(readRevealPayload(bytes, ME).ok).toBe(false);
  });
});
