import { randomBytes } from "node:crypto";

const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

/** True when `nonce` is 16–128 characters of `[A-Za-z0-9_-]` (uuid4, hex and base64url all fit). */
export function isValidNonce(nonce: string): boolean {
  return NONCE.test(nonce);
}

/** A fresh random nonce: 24 base64url characters (144 bits). */
export function newNonce(): string {
  return randomBytes(18).toString("base64url");
}
