import { bytesEqual } from "./_bytes.js";

// How the chain reads a decrypted commit (pallets/subtensor/src/coinbase/reveal_commits.rs,
// tag v3.3.13-393): `WeightsTlockPayload::decode`, then the hotkey bytes decoded as an
// AccountId32, falling back to `LegacyWeightsTlockPayload {uids, values, version_key}`.
// parity-scale-codec's `decode` (not `decode_all`) ignores trailing bytes, and an AccountId32
// decodes from the first 32 bytes of a longer hotkey; this reader does the same, so it is more
// lenient than `decodeWeightsTlockPayload` (which refuses both, as an encoder's check should).

/** The weights a commit reveals. */
export interface RevealedWeights {
  uids: number[];
  values: number[];
  versionKey: bigint;
  /** `v4`: WeightsTlockPayload with the committer's hotkey; `legacy`: no hotkey in it. */
  format: "v4" | "legacy";
}

/** The payload's weights, or why the chain drops the commit (it only logs the reason). */
export type RevealPayloadOutcome = ({ ok: true } & RevealedWeights) | { ok: false; reason: string };

class ScaleReader {
  #offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  // Compact<u32> as parity-scale-codec decodes it: the shortest encoding only.
  length(): number {
    const first = this.#take(1)[0] as number;
    switch (first & 3) {
      case 0:
        return first >> 2;
      case 1: {
        const value = (first | ((this.#take(1)[0] as number) << 8)) >> 2;
        if (value < 64) throw new Error("compact out of range");
        return value;
      }
      case 2: {
        const rest = this.#take(3);
        const value =
          (first |
            ((rest[0] as number) << 8) |
            ((rest[1] as number) << 16) |
            ((rest[2] as number) << 24)) >>>
          2;
        if (value < 2 ** 14) throw new Error("compact out of range");
        return value;
      }
      default: {
        // Big-integer mode: for a u32 only the 4-byte form, holding at least 2^30.
        if (first >> 2 !== 0) throw new Error("compact out of range");
        const value = new DataView(this.#take(4).slice().buffer).getUint32(0, true);
        if (value < 2 ** 30) throw new Error("compact out of range");
        return value;
      }
    }
  }

  byteVec(): Uint8Array {
    return this.#take(this.length());
  }

  u16s(): number[] {
    const count = this.length();
    const raw = this.#take(count * 2);
    return Array.from(
      { length: count },
      (_, i) => (raw[2 * i] as number) | ((raw[2 * i + 1] as number) << 8),
    );
  }

  u64(): bigint {
    return new DataView(this.#take(8).slice().buffer).getBigUint64(0, true);
  }

  #take(n: number): Uint8Array {
    if (n > this.bytes.length - this.#offset) throw new Error("not enough data");
    const out = this.bytes.subarray(this.#offset, this.#offset + n);
    this.#offset += n;
    return out;
  }
}

function legacy(bytes: Uint8Array): RevealedWeights | undefined {
  try {
    const reader = new ScaleReader(bytes);
    return {
      uids: reader.u16s(),
      values: reader.u16s(),
      versionKey: reader.u64(),
      format: "legacy",
    };
  } catch {
    return undefined;
  }
}

/**
 * Reads a decrypted commit as the chain does and checks it belongs to `committer`: a v4 payload
 * naming another hotkey is dropped; one whose hotkey is shorter than an account id, or bytes
 * that are no v4 payload, are read as a legacy payload if they can be.
 */
export function readRevealPayload(bytes: Uint8Array, committer: Uint8Array): RevealPayloadOutcome {
  let v4: { hotkey: Uint8Array; uids: number[]; values: number[]; versionKey: bigint } | undefined;
  try {
    const reader = new ScaleReader(bytes);
    v4 = {
      hotkey: reader.byteVec(),
      uids: reader.u16s(),
      values: reader.u16s(),
      versionKey: reader.u64(),
    };
  } catch {
    v4 = undefined;
  }
  if (v4) {
    if (v4.hotkey.length >= 32) {
      if (!bytesEqual(v4.hotkey.subarray(0, 32), committer)) {
        return { ok: false, reason: "hotkey mismatch in payload" };
      }
      return {
        ok: true,
        uids: v4.uids,
        values: v4.values,
        versionKey: v4.versionKey,
        format: "v4",
      };
    }
    const old = legacy(bytes);
    return old ? { ok: true, ...old } : { ok: false, reason: "error deserializing hotkey" };
  }
  const old = legacy(bytes);
  return old
    ? { ok: true, ...old }
    : { ok: false, reason: "error deserializing both payload formats" };
}
