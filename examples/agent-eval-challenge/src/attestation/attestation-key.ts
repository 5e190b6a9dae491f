// The TDX quote carries its ECDSA P-256 attestation key as 64 raw bytes x||y; node:crypto wants a
// KeyObject. JWK is the one import/export format node offers for raw curve coordinates.

import { createPublicKey, type KeyObject } from "node:crypto";

const COORDINATE_BYTES = 32;

/** A P-256 public KeyObject from quote bytes x||y; throws when the point is not on the curve. */
export function p256PublicKeyFromRaw(raw: Buffer): KeyObject {
  if (raw.length !== 2 * COORDINATE_BYTES) {
    throw new RangeError(`a P-256 public key is 64 bytes x||y, got ${raw.length}`);
  }
  return createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: raw.subarray(0, COORDINATE_BYTES).toString("base64url"),
      y: raw.subarray(COORDINATE_BYTES).toString("base64url"),
    },
    format: "jwk",
  });
}

/** The 64 raw bytes x||y of a P-256 public (or private) key, as a quote carries them. */
export function rawP256PublicKey(key: KeyObject): Buffer {
  const publicKey = key.type === "private" ? createPublicKey(key) : key;
  const jwk = publicKey.export({ format: "jwk" });
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.x || !jwk.y) {
    throw new TypeError("the attestation key must be an EC P-256 key");
  }
  const x = Buffer.from(jwk.x, "base64url");
  const y = Buffer.from(jwk.y, "base64url");
  // JWK coordinates are fixed-width for P-256, but check: a short one would shift y into x.
  if (x.length !== COORDINATE_BYTES || y.length !== COORDINATE_BYTES) {
    throw new TypeError("unexpected P-256 JWK coordinate width");
  }
  return Buffer.concat([x, y]);
}
