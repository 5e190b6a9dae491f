import { blake2b } from "@noble/hashes/blake2.js";
import { compactFromU8a, compactToU8a, hexToU8a, isHex, u8aToHex } from "@polkadot/util";

/** Little-endian u16. */
export function u16le(value: number): Uint8Array {
  return new Uint8Array([value & 0xff, (value >> 8) & 0xff]);
}

/** Little-endian u32. */
export function u32le(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value, true);
  return out;
}

/** Little-endian u64. */
export function u64le(value: bigint | number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value), true);
  return out;
}

/** SCALE compact integer. */
export function compact(value: bigint | number): Uint8Array {
  return compactToU8a(value);
}

/** Reads a SCALE compact at `offset`: the value and the bytes it took. */
export function readCompact(bytes: Uint8Array, offset: number): { value: bigint; length: number } {
  const [length, value] = compactFromU8a(bytes.subarray(offset));
  if (length === 0 || offset + length > bytes.length) throw new Error("truncated compact");
  return { value: BigInt(value.toString()), length };
}

/** blake2b-256. */
export function blake2_256(data: Uint8Array): Uint8Array {
  return blake2b(data, { dkLen: 32 });
}

/** A streaming blake2b-256, for hashes over many small writes. */
export function blake2_256Stream() {
  return blake2b.create({ dkLen: 32 });
}

/** Lower-case `0x` hex. */
export function toHex(bytes: Uint8Array): string {
  return u8aToHex(bytes);
}

/** Bytes of a `0x` hex string; throws on anything else. */
export function fromHex(hex: unknown, what = "value"): Uint8Array {
  if (typeof hex !== "string" || !isHex(hex)) throw new Error(`${what} is not 0x-prefixed hex`);
  return hexToU8a(hex);
}

/** `0x`-hex of a block number, as substrate writes header numbers. */
export function hexNumber(n: number): string {
  return `0x${n.toString(16)}`;
}

/** True when the two byte arrays hold the same bytes. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
