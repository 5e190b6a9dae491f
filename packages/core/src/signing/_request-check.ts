// Everything `verifySignedRequest` does before the signature check, shared with the worker pool
// so both paths refuse the same requests with the same codes.
import { parseHex } from "./_bytes.js";
import { canonicalRequestMessage, repeatedQueryKey, sha256Hex } from "./canonical-message.js";
import { isValidNonce } from "./nonce.js";
import { DEFAULT_SIGNATURE_WINDOW_SECONDS, SIGNATURE_HEADERS } from "./signature-headers.js";
import type {
  HeadersLike,
  SignedRequestFailure,
  SignedRequestSuccess,
  VerifySignedRequestInput,
} from "./signed-request.js";
import { decodeSs58Account, encodeSs58, SS58_PREFIX } from "./ss58.js";

export type PreparedRequest =
  | SignedRequestFailure
  | {
      ok: true;
      message: Uint8Array;
      signature: Uint8Array;
      publicKey: Uint8Array;
      success: SignedRequestSuccess;
      failure: SignedRequestFailure;
    };

const TIMESTAMP = /^(?:0|[1-9][0-9]{0,15})$/;
const ABSOLUTE_URL = /^[A-Za-z][A-Za-z0-9+.-]*:/;

function fail(code: SignedRequestFailure["code"], message: string): SignedRequestFailure {
  return { ok: false, code, message };
}

// undefined: absent; null: sent more than once (a proxy or client bug we refuse to guess about).
// Fetch's Headers and node both join a repeated header with ", ", and no valid hotkey,
// signature, nonce or timestamp holds a comma: a comma means the header came twice.
function readHeader(headers: HeadersLike, name: string): string | null | undefined {
  let value: string | null | undefined;
  if (typeof headers.get === "function") {
    value = (headers as { get(name: string): string | null }).get(name) ?? undefined;
  } else {
    const wanted = name.toLowerCase();
    for (const [key, raw] of Object.entries(headers as Record<string, unknown>)) {
      if (key.toLowerCase() !== wanted || raw === undefined) continue;
      if (typeof raw === "string") value = raw;
      else if (Array.isArray(raw)) value = raw.length === 1 ? String(raw[0]) : null;
      break;
    }
  }
  return typeof value === "string" && value.includes(",") ? null : value;
}

export function prepareSignedRequest(input: VerifySignedRequestInput): PreparedRequest {
  const names = Object.values(SIGNATURE_HEADERS); // hotkey, signature, nonce, timestamp
  const values = names.map((name) => readHeader(input.headers, name));
  const missing = names.filter((_, i) => !values[i]);
  if (missing.length > 0) {
    return fail(
      "missing_signature_headers",
      `missing or repeated header(s): ${missing.join(", ")}`,
    );
  }
  const [hotkeyRaw, signatureRaw, nonce, timestampRaw] = values as [string, string, string, string];

  const prefix = input.ss58Prefix ?? SS58_PREFIX;
  let publicKey: Uint8Array;
  try {
    publicKey = decodeSs58Account(hotkeyRaw, prefix).publicKey;
  } catch (error) {
    return fail("invalid_hotkey", `X-Hotkey: ${(error as Error).message}`);
  }
  const signature = parseHex(signatureRaw, 64);
  if (!signature) return fail("malformed_signature", "X-Signature must be 64 bytes of hex");
  if (!isValidNonce(nonce)) {
    return fail("invalid_nonce", "X-Nonce must be 16-128 characters of [A-Za-z0-9_-]");
  }
  if (!TIMESTAMP.test(timestampRaw) || !Number.isSafeInteger(Number(timestampRaw))) {
    return fail("invalid_timestamp", "X-Timestamp must be integer unix seconds");
  }
  const timestamp = Number(timestampRaw);
  const now = input.now ?? Date.now() / 1000;
  const window = input.windowSeconds ?? DEFAULT_SIGNATURE_WINDOW_SECONDS;
  // NaN would compare false below and accept every timestamp, so bad settings are a bug, loudly.
  if (!Number.isFinite(now) || !Number.isFinite(window) || window < 0) {
    throw new TypeError("verifySignedRequest: `now` and `windowSeconds` must be finite seconds");
  }
  const skew = timestamp - now;
  if (Math.abs(skew) > window) {
    const where = skew > 0 ? "in the future" : "in the past";
    return fail(
      "timestamp_out_of_window",
      `X-Timestamp is ${Math.round(Math.abs(skew))} s ${where}; the window is ${window} s`,
    );
  }

  const path = ABSOLUTE_URL.test(input.pathWithQuery)
    ? target(input.pathWithQuery)
    : input.pathWithQuery;
  const repeated = repeatedQueryKey(path);
  if (repeated !== null) {
    return fail(
      "duplicate_query_key",
      `the query names "${repeated}" more than once; a signed request names each key once`,
    );
  }

  let message: string;
  try {
    message = canonicalRequestMessage({
      method: input.method,
      path,
      slug: input.slug,
      timestamp,
      nonce,
      body: input.body,
      bodySha256: input.bodySha256,
    });
  } catch (error) {
    return fail("invalid_request", (error as Error).message);
  }
  return {
    ok: true,
    message: new TextEncoder().encode(message),
    signature,
    publicKey,
    success: {
      ok: true,
      // Re-encoded so one key has one spelling: the nonce store keys on this string.
      hotkey: encodeSs58(publicKey, prefix),
      publicKey,
      nonce,
      timestamp,
      requestHash: sha256Hex(message),
    },
    failure: fail("bad_signature", "X-Signature does not verify for this request and X-Hotkey"),
  };
}

function target(absolute: string): string {
  const url = new URL(absolute);
  return url.pathname + url.search;
}
