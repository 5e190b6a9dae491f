// Byte helpers shared by the signing files; node:crypto keeps sha256 native and fast.
import { createHash } from "node:crypto";

const encoder = new TextEncoder();

export function toBytes(value: Uint8Array | string): Uint8Array {
  return typeof value === "string" ? encoder.encode(value) : value;
}

export function sha256(bytes: Uint8Array): Uint8Array {
  return createHash("sha256").update(bytes).digest();
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** Parses `0x`-prefixed or bare hex of exactly `length` bytes; undefined when it is not that. */
export function parseHex(value: string, length: number): Uint8Array | undefined {
  const hex = value.startsWith("0x") || value.startsWith("0X") ? value.slice(2) : value;
  if (hex.length !== length * 2 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  return new Uint8Array(Buffer.from(hex, "hex"));
}

const WRAP_START = encoder.encode("<Bytes>");
const WRAP_END = encoder.encode("</Bytes>");

// polkadot-js extension signers sign `<Bytes>` + message + `</Bytes>`, never the bare message.
export function wrapBytes(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(WRAP_START.length + message.length + WRAP_END.length);
  out.set(WRAP_START, 0);
  out.set(message, WRAP_START.length);
  out.set(WRAP_END, WRAP_START.length + message.length);
  return out;
}
