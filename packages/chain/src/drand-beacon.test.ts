import { readFileSync } from "node:fs";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { describe, expect, it } from "vitest";
import {
  BEACON_DST,
  beaconKeypair,
  DRAND_QUICKNET,
  decodeBeaconPublicKey,
  roundMessage,
  signRound,
  toRound,
  verifyRoundSignature,
} from "./drand-beacon.js";

interface QuicknetVectors {
  drand_quicknet: {
    public_key_g2: string;
    genesis_time: number;
    period_s: number;
    chain_hash: string;
    dst: string;
    rounds: { round: number; signature_g1: string; randomness: string }[];
  };
}

const vectors = JSON.parse(
  readFileSync(new URL("../data/vectors.json", import.meta.url), "utf8"),
) as QuicknetVectors;
const quicknet = vectors.drand_quicknet;
const quicknetKey = hexToBytes(quicknet.public_key_g2);
const signatureFor = (round: number) =>
  hexToBytes(quicknet.rounds.find((entry) => entry.round === round)!.signature_g1);

describe("drand quicknet constants", () => {
  it("match the vectors file", () => {
    expect(DRAND_QUICKNET.publicKeyHex).toBe(quicknet.public_key_g2);
    expect(DRAND_QUICKNET.chainHashHex).toBe(quicknet.chain_hash);
    expect(DRAND_QUICKNET.genesisTime).toBe(quicknet.genesis_time);
    expect(DRAND_QUICKNET.periodSeconds).toBe(quicknet.period_s);
    expect(BEACON_DST).toBe(quicknet.dst);
  });
});

describe("roundMessage", () => {
  it("is sha256 of the round as a big-endian u64", () => {
    expect(bytesToHex(roundMessage(1000))).toBe(bytesToHex(sha256(hexToBytes("00000000000003e8"))));
    expect(roundMessage(1000n)).toEqual(roundMessage(1000));
    expect(bytesToHex(roundMessage((1n << 64n) - 1n))).toBe(
      bytesToHex(sha256(hexToBytes("ffffffffffffffff"))),
    );
  });

  it("refuses rounds that are not u64", () => {
    expect(() => toRound(-1)).toThrow(RangeError);
    expect(() => toRound(1.5)).toThrow(RangeError);
    expect(() => toRound(1n << 64n)).toThrow(RangeError);
    expect(() => roundMessage(Number.MAX_SAFE_INTEGER + 1)).toThrow(RangeError);
  });
});

describe("verifyRoundSignature against drand quicknet", () => {
  it("accepts the real signatures for rounds 1000 and 2000", () => {
    expect(verifyRoundSignature(quicknetKey, 1000, signatureFor(1000))).toBe(true);
    expect(verifyRoundSignature(quicknetKey, 2000n, signatureFor(2000))).toBe(true);
  });

  it("refuses a signature for the wrong round", () => {
    expect(verifyRoundSignature(quicknetKey, 2000, signatureFor(1000))).toBe(false);
    expect(verifyRoundSignature(quicknetKey, 1000, signatureFor(2000))).toBe(false);
    // The source comment calls this "round 20000"; the vectors file says it is 2000's.
    expect(verifyRoundSignature(quicknetKey, 20_000, signatureFor(2000))).toBe(false);
  });

  it("ties the randomness in the vectors to the signatures (sha256 of the signature)", () => {
    for (const entry of quicknet.rounds)
      expect(bytesToHex(sha256(hexToBytes(entry.signature_g1)))).toBe(entry.randomness);
  });

  it("returns false for malformed signatures and throws for a malformed key", () => {
    const signature = signatureFor(1000);
    expect(verifyRoundSignature(quicknetKey, 1000, signature.slice(0, 47))).toBe(false);
    expect(verifyRoundSignature(quicknetKey, 1000, new Uint8Array(48))).toBe(false);
    const infinity = new Uint8Array(48);
    infinity[0] = 0xc0;
    expect(verifyRoundSignature(quicknetKey, 1000, infinity)).toBe(false);
    for (const index of [0, 20, 47]) {
      const flipped = signature.slice();
      flipped[index]! ^= 0x01;
      expect(verifyRoundSignature(quicknetKey, 1000, flipped)).toBe(false);
    }
    expect(() => verifyRoundSignature(quicknetKey.slice(1), 1000, signature)).toThrow(RangeError);
    expect(() => decodeBeaconPublicKey(new Uint8Array(96))).toThrow(RangeError);
  });
});

describe("local beacon", () => {
  const seed = new TextEncoder().encode("local subtensor beacon seed, 32+ bytes long");

  it("derives the same keypair from the same seed and a different one from another", () => {
    const a = beaconKeypair(seed);
    expect(beaconKeypair(seed)).toEqual(a);
    expect(a.secretKey).toHaveLength(32);
    expect(a.publicKey).toHaveLength(96);
    expect(beaconKeypair(new Uint8Array(32).fill(7)).publicKey).not.toEqual(a.publicKey);
    expect(() => beaconKeypair(new Uint8Array(31))).toThrow(RangeError);
  });

  it("signs rounds in quicknet's scheme: 48-byte G1 signatures that verify for that round only", () => {
    const { secretKey, publicKey } = beaconKeypair(seed);
    const signature = signRound(secretKey, 42n);
    expect(signature).toHaveLength(48);
    expect(verifyRoundSignature(publicKey, 42, signature)).toBe(true);
    expect(verifyRoundSignature(publicKey, 43, signature)).toBe(false);
    expect(verifyRoundSignature(quicknetKey, 42, signature)).toBe(false);
    // BLS signatures are deterministic, like drand's.
    expect(signRound(secretKey, 42)).toEqual(signature);
  });
});
