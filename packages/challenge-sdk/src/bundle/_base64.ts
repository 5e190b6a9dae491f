// Strict base64 for uploads carried in JSON. Node's decoder skips whatever is not base64, so
// "garbage" would become a few random bytes and fail later with a misleading ZIP error; and a
// value has many spellings unless only the canonical one is taken, which would give one upload
// several sha256s. Checked by a loop over char codes, never a regular expression: a regex over
// a 7 MiB string overflows V8's stack.

/** A decoded value, or why the text is not canonical base64 (a sentence naming `field`). */
export type Base64Result = { ok: true; bytes: Buffer } | { ok: false; message: string };

function isAlphabet(code: number): boolean {
  return (
    (code >= 65 && code <= 90) || // A-Z
    (code >= 97 && code <= 122) || // a-z
    (code >= 48 && code <= 57) || // 0-9
    code === 43 || // +
    code === 47 // /
  );
}

/**
 * `text` as canonical padded base64 (RFC 4648 §4): the standard alphabet, no whitespace, a
 * length that is a multiple of 4, `=` only as final padding, and unused bits zero.
 */
export function decodeStrictBase64(text: string, field: string): Base64Result {
  if (text.length === 0)
    return { ok: false, message: `${field} is empty: send the base64 of a ZIP` };
  let padding = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 61) {
      padding++;
      continue;
    }
    if (!isAlphabet(code)) {
      return {
        ok: false,
        message: `${field} is not base64: ${JSON.stringify(text[at])} at position ${at}`,
      };
    }
    // A data character after an "=": padding in the middle.
    if (padding > 0) padding = 3;
  }
  const paddedRight = padding <= 2 && (padding === 0 || text.endsWith("=".repeat(padding)));
  if (text.length % 4 !== 0 || !paddedRight) {
    return {
      ok: false,
      message: `${field} is not canonical base64: its length must be a multiple of 4, '=' only as final padding`,
    };
  }
  const bytes = Buffer.from(text, "base64");
  // Non-zero unused bits before the padding are a second spelling of the same bytes.
  if (bytes.toString("base64") !== text) {
    return { ok: false, message: `${field} is not canonical base64 (unused bits set)` };
  }
  return { ok: true, bytes };
}
