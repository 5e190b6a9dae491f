import { type BundleResult, refuse } from "./bundle-error.js";

/** Longest `code` accepted: 7.5 MiB of base64 (about 5.6 MiB of ZIP). */
export const MAX_BASE64_CHARS = 7.5 * 1024 * 1024;

// Canonical padded base64 (RFC 4648 §4): Node's decoder would silently skip anything else, so
// "garbage" would become a few random bytes and fail later with a misleading ZIP error.
// (Checked by hand past the alphabet: a regular expression over 7 MiB overflows V8's stack.)
const ALPHABET = /[^A-Za-z0-9+/=]/;

/**
 * Decode a submission's `code` field. The size is checked on the string before any decoding, so
 * an oversized body costs one comparison.
 */
export function decodeBase64Bundle(
  code: string,
  maxChars: number = MAX_BASE64_CHARS,
): BundleResult<Buffer> {
  if (code.length > maxChars) {
    return refuse(
      "bundle_too_large",
      `code is ${code.length} base64 characters; the limit is ${maxChars} (${(maxChars / 1024 / 1024).toFixed(1)} MiB)`,
    );
  }
  if (code.length === 0) return refuse("invalid_base64", "code is empty: send the base64 of a ZIP");
  const stray = ALPHABET.exec(code);
  if (stray) {
    return refuse(
      "invalid_base64",
      `code is not base64: ${JSON.stringify(stray[0])} at position ${stray.index}`,
    );
  }
  const padding = code.indexOf("=");
  const padded = padding === -1 || (padding >= code.length - 2 && /^=+$/.test(code.slice(padding)));
  if (code.length % 4 !== 0 || !padded) {
    return refuse(
      "invalid_base64",
      "code is not canonical base64: its length must be a multiple of 4, '=' only as final padding",
    );
  }
  return { ok: true, value: Buffer.from(code, "base64") };
}
