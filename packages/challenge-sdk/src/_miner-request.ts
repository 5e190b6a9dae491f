import {
  HttpError,
  type SignedRequestResult,
  signedRequestStatus,
  type VerifySignedRequestInput,
  verifySignedRequest,
} from "@platform/core";
import { proxyPathPrefix } from "./proxy-contract/proxy-contract.js";
import type { VerifiedMiner } from "./route-context.js";

/** What a signed request is checked against. */
export interface MinerRequest {
  headers: Headers;
  method: string;
  /** The request target as received (`env.rawTarget`), else the parsed URL's path and query. */
  target: string;
  /** The exact body bytes received. */
  body: Uint8Array;
  slug: string;
  now?: number;
}

/** Core's `verifySignedRequest`, on this thread or through a verify pool (same answers, same codes). */
export type MinerVerifier = (
  input: VerifySignedRequestInput,
) => SignedRequestResult | Promise<SignedRequestResult>;

/**
 * Verify the four signature headers over method, target, slug, timestamp, nonce and the exact
 * body (401 with the verifier's code). A miner going through the master signs the path it sent
 * there, `/challenges/{slug}/...`, which the proxy strips: a signature over that form is
 * accepted too. Both spellings name one request, and its nonce is single-use either way.
 */
export async function verifyMinerRequest(
  request: MinerRequest,
  verify: MinerVerifier = verifySignedRequest,
): Promise<VerifiedMiner> {
  const input = {
    headers: request.headers,
    method: request.method,
    body: request.body,
    slug: request.slug,
    now: request.now,
  };
  let result = await verify({ ...input, pathWithQuery: request.target });
  if (!result.ok && result.code === "bad_signature" && request.target.startsWith("/")) {
    const prefix = proxyPathPrefix(request.slug);
    const proxied = await verify({ ...input, pathWithQuery: `${prefix}${request.target}` });
    if (proxied.ok) result = proxied;
  }
  if (!result.ok)
    throw new HttpError(signedRequestStatus(result.code), result.code, result.message);
  return {
    hotkey: result.hotkey,
    nonce: result.nonce,
    requestHash: result.requestHash,
    timestamp: result.timestamp,
  };
}
