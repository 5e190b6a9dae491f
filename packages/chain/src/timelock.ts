import { gcm } from "@noble/ciphers/aes.js";
import type { Fp12 } from "@noble/curves/abstract/tower.js";
import { bls12_381 } from "@noble/curves/bls12-381.js";
import { bytesToNumberBE, equalBytes, numberToBytesLE } from "@noble/curves/utils.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { randomBytes } from "@noble/hashes/utils.js";
import {
  BEACON_PUBLIC_KEY_LENGTH,
  decodeBeaconPublicKey,
  decodeRoundSignature,
  type G2Point,
  roundPoint,
} from "./drand-beacon.js";

// Timelock encryption as subtensor's commit-reveal v4 decrypts it: the `tle` crate (ideal-lab5/
// timelock rev 5416406c) with TinyBLS381 and AES-256-GCM, i.e. Boneh-Franklin FullIdent over a
// drand round's identity wrapping a random AES key. The chain runs
// `tld(TLECiphertext::deserialize_compressed(commit), Pulses[round].signature)`, so the bytes
// below must be exactly arkworks' compressed serialization of that struct:
//
//   u            G2, 96 B compressed (zcash flag layout, which ark-bls12-381 uses too)
//   v            u64 LE length ‖ 32 B    sigma XOR sha256(ser(e(H(id), r·Ppub)))
//   w            u64 LE length ‖ 32 B    key XOR sha256(sigma)
//   body         u64 LE length ‖ AESOutput { ciphertext: len ‖ pt ‖ tag16, nonce: len ‖ 12 B }
//   cipher_suite u64 LE length ‖ "AES_GCM_"
//
// How each part is proven (tests beside this file):
// - identity (sha256(u64_be(round)) hashed to G1 with drand's DST) and the pairing orientation:
//   a ciphertext to quicknet round 1000 decrypts with drand's real round-1000 signature, which
//   only works if our H(id) is the point drand signed.
// - the GT serialization inside V (coefficient order, 48-byte little-endian limbs, 576 bytes,
//   no compression for field elements): our bytes for e(G1, G2) and e(G1, G2)^7 equal the
//   arkworks serializations published as test vectors in aptos-core; and noble's final
//   exponentiation raises the Miller loop to 3(p^12-1)/r, the power ark-ec 0.4's BLS12 final
//   exponentiation (eprint 2020/875) computes, so both hash the same GT element.
// - the outer layout (field order, 8-byte LE lengths, AESOutput nesting, suite string, U's
//   encoding): the real 303-byte finney commit parses into it with a valid G2 point U and
//   re-encodes to the same bytes.
// Proven only by reading the crate, with no ciphertext from the Rust code to compare against:
// r = Fr::from_be_bytes_mod_order(sha256(sigma ‖ key)) (a mismatch would fail the FullIdent
// check on chain), W = key XOR sha256(sigma), the empty GCM AAD, and that the GCM key is the
// 32-byte key itself.

/** The only cipher suite the chain's `tld` is instantiated with. */
export const TLE_CIPHER_SUITE = "AES_GCM_";

const SUITE_BYTES = new TextEncoder().encode(TLE_CIPHER_SUITE);
const U_LENGTH = BEACON_PUBLIC_KEY_LENGTH;
const HASH_LENGTH = 32;
const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;
const LENGTH_PREFIX = 8;
const FP_LENGTH = 48;
/** Serialized size of a GT (Fq12) element in arkworks: twelve 48-byte base-field elements. */
export const GT_SERIALIZED_LENGTH = 12 * FP_LENGTH;

/** Why a timelock operation failed. */
export type TimelockErrorCode =
  | "malformed-ciphertext"
  | "malformed-signature"
  | "malformed-public-key"
  | "decryption-failed";

/** A timelock encryption or decryption failure; `code` says which kind. */
export class TimelockError extends Error {
  override readonly name = "TimelockError";
  constructor(
    readonly code: TimelockErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The fields of a serialized `TLECiphertext`, each as raw bytes (no length prefixes). */
export interface TimelockCiphertextParts {
  /** header.u: r·G2, 96-byte compressed. */
  u: Uint8Array;
  /** header.v: sigma masked with the pairing hash, 32 bytes. */
  v: Uint8Array;
  /** header.w: the AES key masked with sha256(sigma), 32 bytes. */
  w: Uint8Array;
  /** body.ciphertext: AES-GCM output, plaintext then the 16-byte tag. */
  ciphertext: Uint8Array;
  /** body.nonce: the 12-byte GCM nonce. */
  nonce: Uint8Array;
  /** cipher_suite, always {@link TLE_CIPHER_SUITE}. */
  cipherSuite: string;
}

/** Options for {@link timelockEncrypt}. */
export interface TimelockEncryptOptions {
  /** Source of random bytes (default: the platform CSPRNG); tests inject a seeded one. */
  random?: (length: number) => Uint8Array;
}

/**
 * Bytes of the ciphertext for a plaintext of `plaintextLength` bytes: 244 + n
 * (a 59-byte WeightsTlockPayload gives the 303-byte commits seen on finney).
 */
export function timelockCiphertextLength(plaintextLength: number): number {
  return (
    U_LENGTH +
    2 * (LENGTH_PREFIX + HASH_LENGTH) +
    LENGTH_PREFIX +
    (LENGTH_PREFIX + plaintextLength + TAG_LENGTH) +
    (LENGTH_PREFIX + NONCE_LENGTH) +
    (LENGTH_PREFIX + SUITE_BYTES.length)
  );
}

/**
 * Serialize a GT element as arkworks does (`Fq12::serialize_compressed`): c0 then c1 at every
 * level of the Fq12 = Fq6[w], Fq6 = Fq2[v], Fq2 = Fq[u] tower, each Fq as 48 little-endian bytes.
 */
export function serializeGt(gt: Fp12): Uint8Array {
  const out = new Uint8Array(GT_SERIALIZED_LENGTH);
  let offset = 0;
  for (const fp6 of [gt.c0, gt.c1]) {
    for (const fp2 of [fp6.c0, fp6.c1, fp6.c2]) {
      for (const fp of [fp2.c0, fp2.c1]) {
        out.set(numberToBytesLE(fp, FP_LENGTH), offset);
        offset += FP_LENGTH;
      }
    }
  }
  return out;
}

/** Serialize ciphertext parts in the chain's layout (lengths as 8-byte little-endian u64). */
export function encodeTimelockCiphertext(parts: TimelockCiphertextParts): Uint8Array {
  const suite = new TextEncoder().encode(parts.cipherSuite);
  const bodyLength = 2 * LENGTH_PREFIX + parts.ciphertext.length + parts.nonce.length;
  const writer = new Writer(
    parts.u.length +
      4 * LENGTH_PREFIX +
      parts.v.length +
      parts.w.length +
      bodyLength +
      suite.length,
  );
  writer.raw(parts.u);
  writer.vec(parts.v);
  writer.vec(parts.w);
  writer.u64(BigInt(bodyLength));
  writer.vec(parts.ciphertext);
  writer.vec(parts.nonce);
  writer.vec(suite);
  return writer.finish();
}

/**
 * Parse a serialized ciphertext, checking every length: u must be a G2 subgroup point other
 * than the identity, v and w 32 bytes, the GCM output at least a tag, the nonce 12 bytes, the
 * suite "AES_GCM_", and nothing may follow. Throws TimelockError("malformed-ciphertext").
 * Stricter than the chain, which ignores trailing bytes: we never want to produce them.
 */
export function decodeTimelockCiphertext(bytes: Uint8Array): TimelockCiphertextParts {
  const reader = new Reader(bytes);
  const u = reader.take(U_LENGTH, "header.u");
  const v = reader.vec("header.v", HASH_LENGTH);
  const w = reader.vec("header.w", HASH_LENGTH);
  const body = new Reader(reader.vec("body"));
  const ciphertext = body.vec("body.ciphertext");
  if (ciphertext.length < TAG_LENGTH)
    throw malformed(`body.ciphertext is ${ciphertext.length} bytes, shorter than the GCM tag`);
  const nonce = body.vec("body.nonce", NONCE_LENGTH);
  body.end("body");
  const suite = reader.vec("cipher_suite", SUITE_BYTES.length);
  if (!equalBytes(suite, SUITE_BYTES)) throw malformed("cipher_suite is not AES_GCM_");
  reader.end("ciphertext");
  decodeU(u);
  return { u, v, w, ciphertext, nonce, cipherSuite: TLE_CIPHER_SUITE };
}

/**
 * Encrypt `plaintext` so that only the beacon's signature for `round` decrypts it, in the exact
 * byte layout subtensor's `commit_timelocked_weights` accepts. Throws RangeError for a round
 * outside u64 and TimelockError("malformed-public-key") for a bad beacon key.
 * @example timelockEncrypt(encodeWeightsTlockPayload(p), revealRound(...), quicknetKey)
 */
export function timelockEncrypt(
  plaintext: Uint8Array,
  round: bigint | number,
  beaconPublicKey: Uint8Array,
  options: TimelockEncryptOptions = {},
): Uint8Array {
  const random = options.random ?? randomBytes;
  const identity = roundPoint(round);
  let publicKey: G2Point;
  try {
    publicKey = decodeBeaconPublicKey(beaconPublicKey);
  } catch (cause) {
    throw new TimelockError("malformed-public-key", "beacon public key is not a G2 point", {
      cause,
    });
  }
  const key = draw(random, 32);
  // The crate draws sigma as sha256 of a random scalar's 32-byte LE encoding; 48 bytes reduced
  // mod r keep that scalar's bias negligible.
  const t = bls12_381.fields.Fr.create(bytesToNumberBE(draw(random, 48)));
  const sigma = sha256(numberToBytesLE(t, 32));
  const r = h3(sigma, key);
  if (r === 0n) throw new Error("degenerate timelock scalar; retry with fresh randomness");
  const u = bls12_381.G2.Point.BASE.multiply(r);
  const mask = sha256(serializeGt(bls12_381.pairing(identity, publicKey.multiply(r))));
  const nonce = draw(random, NONCE_LENGTH);
  return encodeTimelockCiphertext({
    u: u.toBytes(true),
    v: xor(sigma, mask),
    w: xor(key, sha256(sigma)),
    ciphertext: gcm(key, nonce).encrypt(plaintext),
    nonce,
    cipherSuite: TLE_CIPHER_SUITE,
  });
}

/**
 * Decrypt a timelock ciphertext with the beacon's 48-byte signature for its round. Throws
 * TimelockError: "malformed-ciphertext" / "malformed-signature" when the bytes do not parse,
 * "decryption-failed" when the signature is for another round or key (the FullIdent check
 * U == H3(sigma, key)·G2 fails) or the body was altered (the GCM tag fails).
 */
export function timelockDecrypt(ciphertext: Uint8Array, roundSignature: Uint8Array): Uint8Array {
  const parts = decodeTimelockCiphertext(ciphertext);
  const signature = decodeRoundSignature(roundSignature);
  if (signature === undefined)
    throw new TimelockError("malformed-signature", "round signature is not a G1 point");
  const u = decodeU(parts.u);
  const sigma = xor(parts.v, sha256(serializeGt(bls12_381.pairing(signature, u))));
  const key = xor(parts.w, sha256(sigma));
  const r = h3(sigma, key);
  if (r === 0n || !bls12_381.G2.Point.BASE.multiply(r).equals(u))
    throw new TimelockError(
      "decryption-failed",
      "the signature does not open this ciphertext (another round or beacon, or an altered header)",
    );
  try {
    return gcm(key, parts.nonce).decrypt(parts.ciphertext);
  } catch (cause) {
    throw new TimelockError("decryption-failed", "the ciphertext body fails its GCM tag", {
      cause,
    });
  }
}

// H3 of the crate: sha256(sigma ‖ message) read big-endian and reduced mod r.
function h3(sigma: Uint8Array, message: Uint8Array): bigint {
  const digest = sha256(new Uint8Array([...sigma, ...message]));
  return bls12_381.fields.Fr.create(bytesToNumberBE(digest));
}

function decodeU(bytes: Uint8Array): G2Point {
  try {
    const point = bls12_381.G2.Point.fromBytes(bytes);
    if (!point.is0()) return point;
  } catch (cause) {
    throw malformed("header.u is not a G2 subgroup point", cause);
  }
  throw malformed("header.u is the point at infinity");
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((byte, i) => byte ^ b[i]!);
}

function draw(random: (length: number) => Uint8Array, length: number): Uint8Array {
  const bytes = random(length);
  if (!(bytes instanceof Uint8Array) || bytes.length !== length)
    throw new RangeError(`random(${length}) must return ${length} bytes`);
  return bytes;
}

function malformed(message: string, cause?: unknown): TimelockError {
  return new TimelockError("malformed-ciphertext", message, { cause });
}

class Writer {
  private readonly bytes: Uint8Array;
  private offset = 0;
  constructor(length: number) {
    this.bytes = new Uint8Array(length);
  }
  raw(data: Uint8Array): void {
    this.bytes.set(data, this.offset);
    this.offset += data.length;
  }
  u64(value: bigint): void {
    new DataView(this.bytes.buffer).setBigUint64(this.offset, value, true);
    this.offset += LENGTH_PREFIX;
  }
  vec(data: Uint8Array): void {
    this.u64(BigInt(data.length));
    this.raw(data);
  }
  finish(): Uint8Array {
    if (this.offset !== this.bytes.length) throw new Error("timelock writer length mismatch");
    return this.bytes;
  }
}

class Reader {
  private offset = 0;
  constructor(private readonly bytes: Uint8Array) {}
  take(length: number, field: string): Uint8Array {
    if (length > this.bytes.length - this.offset)
      throw malformed(`${field} needs ${length} bytes, ${this.bytes.length - this.offset} left`);
    const out = this.bytes.slice(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }
  vec(field: string, exactLength?: number): Uint8Array {
    const prefix = this.take(LENGTH_PREFIX, `${field} length`);
    const length = new DataView(prefix.buffer).getBigUint64(0, true);
    if (exactLength !== undefined && length !== BigInt(exactLength))
      throw malformed(`${field} must be ${exactLength} bytes, its length says ${length}`);
    if (length > BigInt(this.bytes.length - this.offset))
      throw malformed(`${field} length ${length} runs past the end`);
    return this.take(Number(length), field);
  }
  end(what: string): void {
    if (this.offset !== this.bytes.length)
      throw malformed(`${this.bytes.length - this.offset} trailing bytes after the ${what}`);
  }
}
