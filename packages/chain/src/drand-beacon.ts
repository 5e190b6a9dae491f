import { mapHashToField } from "@noble/curves/abstract/modular.js";
import type { Fp2 } from "@noble/curves/abstract/tower.js";
import type { WeierstrassPoint } from "@noble/curves/abstract/weierstrass.js";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";

// drand's "bls-unchained-g1-rfc9380" scheme, which subtensor's Drand pallet ingests and the
// `tle` crate's TinyBLS381 engine decrypts with: signatures (and so timelock identities) are
// on G1, the beacon's public key on G2.

/** drand quicknet, the beacon whose pulses subtensor stores (public values, not secrets). */
export const DRAND_QUICKNET = Object.freeze({
  publicKeyHex:
    "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
  chainHashHex: "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971",
  genesisTime: 1_692_803_367,
  periodSeconds: 3,
});

/** Domain separation tag drand quicknet and the `tle` crate (its `QUICKNET_CTX`) hash rounds with. */
export const BEACON_DST = "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_";

/** Compressed sizes: a round signature is a G1 point, a beacon public key a G2 point. */
export const BEACON_SIGNATURE_LENGTH = 48;
/** Compressed size of a beacon public key (G2, zcash/arkworks flag layout). */
export const BEACON_PUBLIC_KEY_LENGTH = 96;

const U64_MAX = (1n << 64n) - 1n;
const bls = bls12_381.shortSignatures;

/** A G1 point (round signatures, round identities). */
export type G1Point = WeierstrassPoint<bigint>;
/** A G2 point (beacon public keys, the timelock header's U). */
export type G2Point = WeierstrassPoint<Fp2>;

/**
 * A drand round as the u64 the chain stores; throws RangeError for anything else, because a
 * silently wrapped round would encrypt to a pulse nobody will ever publish.
 */
export function toRound(round: bigint | number): bigint {
  if (typeof round === "number" && !Number.isSafeInteger(round))
    throw new RangeError(`round must be an integer, got ${round}`);
  const value = BigInt(round);
  if (value < 0n || value > U64_MAX) throw new RangeError(`round must fit in a u64, got ${round}`);
  return value;
}

/** The message a beacon signs for a round: sha256 of the round as a big-endian u64. */
export function roundMessage(round: bigint | number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, toRound(round), false);
  return sha256(bytes);
}

/**
 * The round's point on G1 (RFC 9380 hash_to_curve with {@link BEACON_DST}): what the beacon signs
 * and what the timelock identity is. The `tle` crate hashes `ctx ‖ message` with an empty ctx,
 * so this is the same point as drand's.
 */
export function roundPoint(round: bigint | number): G1Point {
  return bls.hash(roundMessage(round), BEACON_DST);
}

/** Decode a compressed beacon public key; throws RangeError when it is not a G2 subgroup point. */
export function decodeBeaconPublicKey(publicKey: Uint8Array): G2Point {
  if (publicKey.length !== BEACON_PUBLIC_KEY_LENGTH)
    throw new RangeError(`beacon public key must be ${BEACON_PUBLIC_KEY_LENGTH} bytes`);
  let point: G2Point;
  try {
    point = bls12_381.G2.Point.fromBytes(publicKey);
  } catch (cause) {
    throw new RangeError("beacon public key is not a valid G2 point", { cause });
  }
  // The identity would make every ciphertext decryptable by anyone.
  if (point.is0()) throw new RangeError("beacon public key is the point at infinity");
  return point;
}

/**
 * Decode a compressed round signature; returns undefined when the bytes are not a G1 subgroup
 * point other than the identity (the identity "signs" nothing).
 */
export function decodeRoundSignature(signature: Uint8Array): G1Point | undefined {
  if (signature.length !== BEACON_SIGNATURE_LENGTH) return undefined;
  try {
    const point = bls12_381.G1.Point.fromBytes(signature);
    return point.is0() ? undefined : point;
  } catch {
    return undefined;
  }
}

/**
 * Whether `signature` is the beacon's signature for `round` (false for a malformed signature;
 * a malformed public key throws RangeError, since that is a configuration error).
 * @example verifyRoundSignature(hexToBytes(DRAND_QUICKNET.publicKeyHex), 1000n, sig) // true
 */
export function verifyRoundSignature(
  publicKey: Uint8Array,
  round: bigint | number,
  signature: Uint8Array,
): boolean {
  const key = decodeBeaconPublicKey(publicKey);
  const point = decodeRoundSignature(signature);
  if (point === undefined) return false;
  return bls.verify(point, roundPoint(round), key);
}

/** A local beacon's keys: a 32-byte big-endian scalar and its 96-byte compressed G2 public key. */
export interface BeaconKeypair {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/**
 * Derive a local beacon's keypair from a seed of at least 32 bytes, deterministically
 * (scalar = sha512(seed) reduced into 1..r-1), so a local chain and its test harness can agree on
 * the beacon without passing a secret around.
 */
export function beaconKeypair(seed: Uint8Array): BeaconKeypair {
  if (seed.length < 32) throw new RangeError("beacon seed must be at least 32 bytes");
  const secretKey = mapHashToField(sha512(seed), bls12_381.fields.Fr.ORDER);
  return { secretKey, publicKey: bls.getPublicKey(secretKey).toBytes(true) };
}

/** Sign a round as drand quicknet does; the 48-byte result verifies and decrypts like a real pulse. */
export function signRound(secretKey: Uint8Array, round: bigint | number): Uint8Array {
  return bls.sign(roundPoint(round), secretKey).toBytes(true);
}
