import { prepareSignedRequest } from "./_request-check.js";
import { verifyBytes } from "./_verify.js";
import { canonicalRequestMessage } from "./canonical-message.js";
import type { Sr25519Keypair } from "./keys.js";
import { newNonce } from "./nonce.js";
import { signMessage } from "./signature.js";

/** The headers `signRequest` produces (a type alias so it is assignable to `HeadersLike`). */
export type SignatureHeaders = {
  "X-Hotkey": string;
  "X-Signature": string;
  "X-Nonce": string;
  "X-Timestamp": string;
};

/** What `signRequest` signs. */
export interface SignRequestOptions {
  method: string;
  /** Absolute URL or `/path?query`; WHATWG-normalised exactly as fetch/undici will send it. */
  url: string | URL;
  /** Exact body bytes (a string is UTF-8 encoded); omitted means empty. */
  body?: Uint8Array | string | undefined;
  /** Challenge slug the request is for; omit for the master's own routes. */
  slug?: string | undefined;
  /** Unix seconds; now by default. */
  timestamp?: number | undefined;
  /** Single-use nonce; a fresh `newNonce()` by default. */
  nonce?: string | undefined;
}

/** A `Headers` instance or a plain record such as node's `IncomingHttpHeaders`. */
export type HeadersLike =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | undefined>;

/** What `verifySignedRequest` checks. */
export interface VerifySignedRequestInput {
  headers: HeadersLike;
  method: string;
  /** Request target as received (`/path?query`), or the absolute URL of a web `Request`. */
  pathWithQuery: string;
  /** Exact body bytes received; omitted means empty. */
  body?: Uint8Array | string | undefined;
  /** Lowercase hex sha256 of the body, when it was hashed while streaming; wins over `body`. */
  bodySha256?: string | undefined;
  /** The receiver's challenge slug; omit on routes that are not a challenge's. */
  slug?: string | undefined;
  /** The receiver's clock in unix SECONDS (tests); `Date.now() / 1000` by default. */
  now?: number | undefined;
  /** Accepted clock skew either way; `DEFAULT_SIGNATURE_WINDOW_SECONDS` (300) by default. */
  windowSeconds?: number | undefined;
  /** Required ss58 prefix of X-Hotkey; 42 by default. */
  ss58Prefix?: number | undefined;
}

/**
 * Stable machine-readable reasons a signed request is refused: HTTP 401, but for
 * `duplicate_query_key` (400: the request is ambiguous, whoever signed it); see
 * `signedRequestStatus`.
 */
export type SignedRequestErrorCode =
  | "duplicate_query_key"
  | "missing_signature_headers"
  | "invalid_hotkey"
  | "malformed_signature"
  | "invalid_nonce"
  | "invalid_timestamp"
  | "timestamp_out_of_window"
  | "invalid_request"
  | "bad_signature";

/**
 * The HTTP status a refusal is answered with: 400 for a request no signature could make
 * unambiguous (a repeated query key), 401 for every other code.
 * @example throw new HttpError(signedRequestStatus(result.code), result.code, result.message)
 */
export function signedRequestStatus(code: SignedRequestErrorCode): 400 | 401 {
  return code === "duplicate_query_key" ? 400 : 401;
}

/** A verified request: who signed it and the values the receiver must record. */
export interface SignedRequestSuccess {
  ok: true;
  /** Canonical ss58 (the required prefix) of the signer; key the nonce store on this. */
  hotkey: string;
  publicKey: Uint8Array;
  nonce: string;
  timestamp: number;
  /** sha256 hex of the canonical message; forwarded as X-Core-Request-Hash. */
  requestHash: string;
}

/** A refused request, with a stable code and a human message. */
export interface SignedRequestFailure {
  ok: false;
  code: SignedRequestErrorCode;
  message: string;
}

/** Result of `verifySignedRequest`. */
export type SignedRequestResult = SignedRequestSuccess | SignedRequestFailure;

/**
 * Signs one HTTP request and returns the four signature headers to send with it.
 * Requires `await initCrypto()`.
 * @example fetch(url, { method: "POST", body, headers: { ...signRequest(pair, { method: "POST", url, body, slug }) } })
 */
export function signRequest(pair: Sr25519Keypair, options: SignRequestOptions): SignatureHeaders {
  const url =
    typeof options.url === "string" && options.url.startsWith("/")
      ? new URL(`http://localhost${options.url}`) // concatenated so "//x" stays a path, not a host
      : new URL(options.url);
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const nonce = options.nonce ?? newNonce();
  const message = canonicalRequestMessage({
    method: options.method,
    path: url.pathname + url.search,
    slug: options.slug,
    timestamp,
    nonce,
    body: options.body,
  });
  return {
    "X-Hotkey": pair.address,
    "X-Signature": signMessage(pair, message),
    "X-Nonce": nonce,
    "X-Timestamp": String(timestamp),
  };
}

/**
 * Checks a signed request: headers present and well-formed, timestamp inside the window, and
 * the signature over the canonical message. It does NOT remember nonces: on success the caller
 * must reserve (hotkey, nonce) atomically and answer 409 when it was already used.
 * Requires `await initCrypto()`.
 */
export function verifySignedRequest(input: VerifySignedRequestInput): SignedRequestResult {
  const prepared = prepareSignedRequest(input);
  if (!prepared.ok) return prepared;
  const valid = verifyBytes(prepared.message, prepared.signature, prepared.publicKey);
  return valid ? prepared.success : prepared.failure;
}
