import { base58Decode, base58Encode, decodeAddress, encodeAddress } from "@polkadot/util-crypto";
import { describe, expect, it } from "vitest";
import { decodeSs58, decodeSs58Account, encodeSs58, isValidSs58, SS58_PREFIX } from "./ss58.js";

const DEV_ADDRESS = "5DfhGyQdFobKM8NsWvEeAKk5EQQgYe9AydgJ7rMB6E1EqRzV";
const DEV_PUBLIC_HEX = "46ebddef8cd9bb167dc30878d7113b7e168e6f0646beffd77d69d39bad76b47a";
const devPublic = new Uint8Array(Buffer.from(DEV_PUBLIC_HEX, "hex"));

// Change one base58 character without leaving the alphabet.
function flipLast(address: string): string {
  return address.slice(0, -1) + (address.endsWith("a") ? "b" : "a");
}

describe("ss58", () => {
  it("round-trips the dev key with prefix 42", () => {
    expect(SS58_PREFIX).toBe(42);
    expect(encodeSs58(devPublic)).toBe(DEV_ADDRESS);
    expect(Buffer.from(decodeSs58(DEV_ADDRESS)).toString("hex")).toBe(DEV_PUBLIC_HEX);
    expect(decodeSs58Account(DEV_ADDRESS).prefix).toBe(42);
  });

  it("agrees with @polkadot/util-crypto for one- and two-byte prefixes", () => {
    for (const prefix of [0, 2, 42, 63, 64, 255, 2000, 16383]) {
      const address = encodeSs58(devPublic, prefix);
      expect(address).toBe(encodeAddress(devPublic, prefix));
      expect(decodeSs58Account(address)).toEqual({ publicKey: devPublic, prefix });
      expect(decodeAddress(address)).toEqual(devPublic);
    }
  });

  it("requires the expected prefix when asked", () => {
    const polkadot = encodeSs58(devPublic, 0);
    expect(() => decodeSs58(polkadot, 42)).toThrow(/prefix 0, expected 42/);
    expect(isValidSs58(polkadot)).toBe(true);
    expect(isValidSs58(polkadot, 42)).toBe(false);
    expect(isValidSs58(DEV_ADDRESS, 42)).toBe(true);
  });

  it("answers a repeated decode the same, from a copy no caller can spoil", () => {
    const first = decodeSs58(DEV_ADDRESS);
    first.fill(0); // a caller writing into its key must not change what the next one gets
    expect(Buffer.from(decodeSs58(DEV_ADDRESS)).toString("hex")).toBe(DEV_PUBLIC_HEX);
    // A remembered address is still held to the expected prefix, and a bad one is never kept.
    const polkadot = encodeSs58(devPublic, 0);
    expect(decodeSs58Account(polkadot).prefix).toBe(0);
    expect(() => decodeSs58(polkadot, 42)).toThrow(/prefix 0, expected 42/);
    for (let i = 0; i < 2; i++) expect(isValidSs58(flipLast(DEV_ADDRESS))).toBe(false);
  });

  it("refuses a bad checksum", () => {
    const tampered = flipLast(DEV_ADDRESS);
    expect(() => decodeSs58(tampered)).toThrow(/bad checksum/);
    expect(isValidSs58(tampered)).toBe(false);
    // Same payload, checksum bytes swapped.
    const bytes = base58Decode(DEV_ADDRESS);
    [bytes[33], bytes[34]] = [bytes[34]!, bytes[33]!];
    expect(() => decodeSs58(base58Encode(bytes))).toThrow(/bad checksum/);
  });

  it("refuses addresses that are not 32-byte accounts", () => {
    const ecdsa = encodeAddress(new Uint8Array(33).fill(2), 42); // valid checksum, 33-byte key
    const index = encodeAddress(new Uint8Array([7]), 42); // an account index
    expect(isValidSs58(ecdsa)).toBe(false);
    expect(() => decodeSs58(ecdsa)).toThrow(/not a 32-byte account/);
    expect(() => decodeSs58(index)).toThrow(/not a 32-byte account/);
    expect(() => decodeSs58(DEV_ADDRESS.slice(0, -1))).toThrow(/not a 32-byte account/);
    expect(() => decodeSs58(`${DEV_ADDRESS}1`)).toThrow(/ss58/);
  });

  it("refuses garbage with a clear error", () => {
    for (const garbage of ["", "hello world", "0OIl0OIl", `0x${DEV_PUBLIC_HEX}`, "5".repeat(48)]) {
      expect(isValidSs58(garbage), garbage).toBe(false);
      expect(() => decodeSs58(garbage)).toThrow(/invalid ss58 address/);
    }
    expect(isValidSs58(42 as unknown as string)).toBe(false);
  });

  it("refuses a long string by its length, before decoding it", () => {
    // Base58 decoding is quadratic: a megabyte of it would hold a verifier for minutes. The
    // message names the length: the refusal came before any decoding.
    expect(() => decodeSs58("2".repeat(1_000_000))).toThrow(
      /1000000 characters, longer than any account address/,
    );
    // The bound is 64: one character more is refused for its length, 64 are decoded (and refused
    // for what they decode to), and the longest real address (a two-byte prefix) is well inside.
    expect(() => decodeSs58("2".repeat(65))).toThrow(/65 characters, longer than/);
    expect(() => decodeSs58("2".repeat(64))).toThrow(/not a 32-byte account/);
    const longest = encodeSs58(new Uint8Array(32).fill(0xff), 16383);
    expect(longest.length).toBeLessThanOrEqual(50);
    expect(decodeSs58Account(longest).prefix).toBe(16383);
  });

  it("refuses to encode what is not a 32-byte key or a valid prefix", () => {
    expect(() => encodeSs58(new Uint8Array(31))).toThrow(/32-byte/);
    expect(() => encodeSs58(devPublic, 46)).toThrow(RangeError);
    expect(() => encodeSs58(devPublic, 16384)).toThrow(RangeError);
    expect(() => encodeSs58(devPublic, -1)).toThrow(RangeError);
  });
});
