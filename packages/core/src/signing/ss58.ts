import { blake2b } from "@noble/hashes/blake2.js";
import { base58 } from "@scure/base";

/** The generic substrate prefix Bittensor uses for every hotkey and coldkey (`5…` addresses). */
export const SS58_PREFIX = 42;

const CHECKSUM_PREFIX = new TextEncoder().encode("SS58PRE");

function checksum(payload: Uint8Array): Uint8Array {
  const input = new Uint8Array(CHECKSUM_PREFIX.length + payload.length);
  input.set(CHECKSUM_PREFIX, 0);
  input.set(payload, CHECKSUM_PREFIX.length);
  return blake2b(input, { dkLen: 64 }).subarray(0, 2);
}

function assertPrefix(prefix: number): void {
  // 46 and 47 are reserved by the ss58 registry; above 16383 does not fit two bytes.
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > 16383 || prefix === 46 || prefix === 47) {
    throw new RangeError(`invalid ss58 prefix ${prefix}`);
  }
}

function prefixBytes(prefix: number): number[] {
  if (prefix < 64) return [prefix];
  return [((prefix & 0xfc) >> 2) | 0x40, (prefix >> 8) | ((prefix & 0x03) << 6)];
}

/** Encodes a 32-byte public key as an ss58 address (prefix 42 unless told otherwise). */
export function encodeSs58(publicKey: Uint8Array, prefix: number = SS58_PREFIX): string {
  if (publicKey.length !== 32) {
    throw new TypeError(`an ss58 account is a 32-byte public key, got ${publicKey.length} bytes`);
  }
  assertPrefix(prefix);
  const head = prefixBytes(prefix);
  const payload = new Uint8Array(head.length + 32);
  payload.set(head, 0);
  payload.set(publicKey, head.length);
  const out = new Uint8Array(payload.length + 2);
  out.set(payload, 0);
  out.set(checksum(payload), payload.length);
  return base58.encode(out);
}

/** A decoded ss58 account address. */
export interface Ss58Account {
  publicKey: Uint8Array;
  prefix: number;
}

// Addresses decoded lately: a subnet's miners sign with the same few hundred hotkeys, and a
// decode (base58, then a blake2b checksum) is a measurable share of a signed request's CPU on
// both the master and the challenge (docs/performance.md, `signed-upload-pool`). Only valid
// addresses are kept; bounded, the oldest entry dropped first.
const RECENT_LIMIT = 4096;
const recent = new Map<string, Ss58Account>();

/**
 * Decodes an ss58 account address (32-byte key, any valid prefix, or exactly `expectedPrefix`).
 * Throws an Error naming what is wrong: not base58, wrong length, bad checksum, other prefix.
 */
export function decodeSs58Account(address: string, expectedPrefix?: number): Ss58Account {
  if (typeof address !== "string") throw new TypeError("an ss58 address is a string");
  let account = recent.get(address);
  if (account === undefined) {
    account = decodeUncached(address);
    if (recent.size >= RECENT_LIMIT) recent.delete(recent.keys().next().value as string);
    recent.set(address, account);
  }
  if (expectedPrefix !== undefined && account.prefix !== expectedPrefix) {
    throw new Error(
      `invalid ss58 address ${shownAddress(address)}: prefix ${account.prefix}, expected ${expectedPrefix}`,
    );
  }
  // A copy: the caller may write into its key, the cached one must stay as decoded.
  return { publicKey: account.publicKey.slice(), prefix: account.prefix };
}

function shownAddress(address: string): string {
  return JSON.stringify(address.length > 64 ? `${address.slice(0, 64)}…` : address);
}

// Bitcoin's alphabet (no 0, O, I, l).
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
// An account address is at most 36 bytes (a two-byte prefix, the key, the checksum): 50
// characters. Base58 decoding is quadratic in the length, so a longer string is refused first.
const MAX_ADDRESS_LENGTH = 64;

function decodeUncached(address: string): Ss58Account {
  const shown = shownAddress(address);
  if (address.length > MAX_ADDRESS_LENGTH) {
    throw new Error(
      `invalid ss58 address ${shown}: ${address.length} characters, longer than any account address`,
    );
  }
  if (!BASE58.test(address)) throw new Error(`invalid ss58 address ${shown}: not base58`);
  const bytes = base58.decode(address);
  const first = bytes[0] ?? 0;
  const headLength = first < 64 ? 1 : 2;
  if (first >= 128 || bytes.length !== headLength + 32 + 2) {
    throw new Error(`invalid ss58 address ${shown}: not a 32-byte account (${bytes.length} bytes)`);
  }
  const payload = bytes.subarray(0, headLength + 32);
  const sum = checksum(payload);
  if (sum[0] !== bytes[headLength + 32] || sum[1] !== bytes[headLength + 33]) {
    throw new Error(`invalid ss58 address ${shown}: bad checksum`);
  }
  const second = bytes[1] ?? 0;
  const prefix =
    headLength === 1 ? first : ((first & 0x3f) << 2) | (second >> 6) | ((second & 0x3f) << 8);
  return { publicKey: bytes.slice(headLength, headLength + 32), prefix };
}

/** Decodes an ss58 address to its 32-byte public key; throws a clear Error when it is not one. */
export function decodeSs58(address: string, expectedPrefix?: number): Uint8Array {
  return decodeSs58Account(address, expectedPrefix).publicKey;
}

/** True when `address` is a well-formed ss58 account address (optionally with that prefix). */
export function isValidSs58(address: string, expectedPrefix?: number): boolean {
  try {
    decodeSs58Account(address, expectedPrefix);
    return true;
  } catch {
    return false;
  }
}
