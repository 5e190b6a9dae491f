/**
 * Authenticated encryption at rest (miner env values, review evidence): AES-256-GCM with a
 * random 96-bit nonce. The associated data names the row the ciphertext belongs to (e.g.
 * `submission:42:env:API_KEY`), so a database writer cannot move one miner's sealed secret
 * onto another row and have it decrypt there.
 *
 * Layout: `version (1 byte) || nonce (12) || ciphertext || tag (16)`. The version byte is also
 * authenticated, so a future format can never be confused with this one.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** The format version this module writes and the only one it opens. */
export const SEALED_BOX_VERSION = 1;

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + NONCE_BYTES;

/** Bytes a sealed box adds to its plaintext. */
export const SEALED_BOX_OVERHEAD = HEADER_BYTES + TAG_BYTES;

/** The one error code of a box that does not open. */
export type SealedBoxErrorCode = "sealed_box_invalid";

/**
 * A box that does not open: tampered, truncated, another version, another key or another row.
 * Deliberately one code: telling them apart would help whoever is probing.
 */
export class SealedBoxError extends Error {
  override readonly name = "SealedBoxError";
  readonly code: SealedBoxErrorCode = "sealed_box_invalid";
}

/**
 * Encrypts and authenticates `plaintext`, bound to `aad`.
 * A random nonce per box: safe for up to ~2^32 boxes per key (NIST SP 800-38D), far beyond
 * what one service's env values and evidence objects reach.
 */
export function seal(key: Uint8Array, plaintext: Uint8Array | string, aad: string): Buffer {
  checkKey(key);
  const nonce = randomBytes(NONCE_BYTES);
  const header = Buffer.concat([Buffer.from([SEALED_BOX_VERSION]), nonce]);
  const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(aad));
  const body = typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext;
  const ciphertext = Buffer.concat([cipher.update(body), cipher.final()]);
  return Buffer.concat([header, ciphertext, cipher.getAuthTag()]);
}

/**
 * The plaintext of a box made by {@link seal} with the same key and `aad`.
 * @throws SealedBoxError (code `sealed_box_invalid`) when it does not authenticate.
 */
export function open(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  checkKey(key);
  if (sealed.length < SEALED_BOX_OVERHEAD) throw new SealedBoxError("the sealed box is truncated");
  if (sealed[0] !== SEALED_BOX_VERSION)
    throw new SealedBoxError("the sealed box has an unknown version");
  const box = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const nonce = box.subarray(1, HEADER_BYTES);
  const ciphertext = box.subarray(HEADER_BYTES, box.length - TAG_BYTES);
  const tag = box.subarray(box.length - TAG_BYTES);
  // authTagLength pins the tag to 16 bytes: without it Node accepts shorter (forgeable) tags.
  const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(aad));
  decipher.setAuthTag(tag);
  const plaintext = decipher.update(ciphertext);
  try {
    // GCM releases nothing until the tag verifies: final() throws on any mismatch.
    return Buffer.concat([plaintext, decipher.final()]);
  } catch {
    plaintext.fill(0);
    throw new SealedBoxError(
      "the sealed box does not authenticate (tampered, another key or another row)",
    );
  }
}

/** The authenticated data: the version byte, then the caller's row binding. */
function associatedData(aad: string): Buffer {
  return Buffer.concat([Buffer.from([SEALED_BOX_VERSION]), Buffer.from(aad, "utf8")]);
}

function checkKey(key: Uint8Array): void {
  if (key.length !== KEY_BYTES) throw new RangeError(`a sealed box key must be ${KEY_BYTES} bytes`);
}
