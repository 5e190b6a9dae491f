/**
 * A secret sealed to one holder of an X25519 private key (ECIES): an ephemeral key pair, the
 * shared secret through HKDF-SHA256 (salted with both public keys, the label as info), then the
 * sealed box (AES-256-GCM, the label as associated data). Only the key's holder opens it; the
 * service keeps no key. It is how a run's instance seed reaches the evaluator whose quote bound
 * the public key, and no one else who holds the run token.
 */
import {
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
} from "node:crypto";
import { open, seal } from "./sealed-box.js";

export interface SealedToKey {
  /** The sender's ephemeral X25519 public key, raw, base64url. */
  ephemeral_public_key: string;
  /** The sealed box (sealed-box.ts layout), base64url. */
  box: string;
}

/** A fresh X25519 key pair; the public key raw (32 bytes), base64url. */
export function x25519KeyPair(): { privateKey: KeyObject; publicKey: string } {
  const pair = generateKeyPairSync("x25519");
  return { privateKey: pair.privateKey, publicKey: rawPublicKey(pair.publicKey) };
}

const rawPublicKey = (key: KeyObject) => (key.export({ format: "jwk" }) as { x: string }).x;

/** The X25519 public key of 43 base64url characters (throws RangeError when it is not one). */
export function x25519PublicKey(raw: string): KeyObject {
  if (!/^[A-Za-z0-9_-]{43}$/.test(raw)) throw new RangeError("not a raw X25519 public key");
  return createPublicKey({ key: { kty: "OKP", crv: "X25519", x: raw }, format: "jwk" });
}

function boxKey(shared: Buffer, ephemeral: string, recipient: string, label: string): Buffer {
  const salt = Buffer.from(`${ephemeral}.${recipient}`, "utf8");
  return Buffer.from(hkdfSync("sha256", shared, salt, label, 32));
}

/** `plaintext` sealed to `recipient` (raw base64url) under `label`. */
export function sealToKey(recipient: string, plaintext: Uint8Array, label: string): SealedToKey {
  const ephemeral = generateKeyPairSync("x25519");
  const ephemeralRaw = rawPublicKey(ephemeral.publicKey);
  const shared = diffieHellman({
    privateKey: ephemeral.privateKey,
    publicKey: x25519PublicKey(recipient),
  });
  const key = boxKey(shared, ephemeralRaw, recipient, label);
  return {
    ephemeral_public_key: ephemeralRaw,
    box: seal(key, plaintext, label).toString("base64url"),
  };
}

/** Open `sealed` with the recipient's key pair (throws SealedBoxError when it does not open). */
export function openFromKey(
  recipient: { privateKey: KeyObject; publicKey: string },
  sealed: SealedToKey,
  label: string,
): Buffer {
  const shared = diffieHellman({
    privateKey: recipient.privateKey,
    publicKey: x25519PublicKey(sealed.ephemeral_public_key),
  });
  const key = boxKey(shared, sealed.ephemeral_public_key, recipient.publicKey, label);
  return open(key, Buffer.from(sealed.box, "base64url"), label);
}
