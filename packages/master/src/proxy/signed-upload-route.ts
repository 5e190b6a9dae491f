import {
  type App,
  HttpError,
  initCrypto,
  isSlug,
  readBodyWithLimit,
  requireMediaType,
  SIGNATURE_HEADERS,
  type SignedRequestErrorCode,
  signedRequestStatus,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import { activeUpstream, noActiveChallenge } from "./_active-upstream.js";
import { createSignatureVerifier } from "./_signature-verifier.js";
import { bridgeRequestHeaders } from "./forward-headers.js";
import type { NonceStore } from "./nonce-store.js";
import { forwardIdentity, type ProxyDependencies } from "./passthrough-route.js";

/** The challenge route a verified upload is forwarded to. */
export const BRIDGE_PATH = "/internal/v1/bridge/submissions";

/** Media types a submission upload may have (forwarded as sent). */
export const UPLOAD_MEDIA_TYPES: readonly string[] = ["application/zip", "application/json"];

/** What the signed upload route needs beyond the passthrough's dependencies. */
export interface SignedUploadDependencies extends ProxyDependencies {
  nonces: NonceStore;
  /** Body cap in bytes (413 past it). */
  uploadLimitBytes: number;
  /**
   * Worker threads that check upload signatures off the event loop (core's `createVerifyPool`);
   * 0 or absent verifies on the main thread. Measured in docs/performance.md
   * (`signed-upload-pool`): opt-in, as it does not pay on two cores.
   */
  verifyWorkers?: number;
}

/** What {@link registerSignedUploadRoute} leaves running: close it with the master. */
export interface SignedUploadRoute {
  /** Stops the verify pool, if any (uploads then verify on the main thread). */
  close(): Promise<void>;
}

// A plain file name: no separator, no leading dot (so never `.` or `..`), no control character.
const FILENAME = /^[A-Za-z0-9_](?:[A-Za-z0-9._ ()+-]{0,253}[A-Za-z0-9._()+-])?$/;

/** True when `name` is a plain file name the master forwards as X-Submission-Filename. */
export function isPlainFilename(name: string): boolean {
  return FILENAME.test(name);
}

function filenameOf(url: URL): string | undefined {
  // Only the signed query names the file: everything forwarded as the miner's must be signed,
  // and an X-Submission-Filename header is not, so it is ignored (the bridge headers never copy
  // it). A repeated `filename` never gets here: signed routes refuse repeated query keys.
  const name = url.searchParams.get("filename");
  if (name === null) return undefined;
  if (!isPlainFilename(name)) {
    throw new HttpError(
      400,
      "invalid_filename",
      "The submission file name must be a plain file name",
    );
  }
  return name;
}

function signatureRefused(code: SignedRequestErrorCode, message: string): HttpError {
  return new HttpError(signedRequestStatus(code), code, message);
}

// Everything refused before the body is read: slug, signature headers present, media type and
// file name. Returns the file name to forward, if any.
function precheck(request: Request, url: URL, slug: string): string | undefined {
  if (!isSlug(slug)) throw noActiveChallenge(slug);
  const missing = Object.values(SIGNATURE_HEADERS).filter((name) => !request.headers.get(name));
  if (missing.length) {
    throw signatureRefused("missing_signature_headers", `Missing header(s): ${missing.join(", ")}`);
  }
  requireMediaType(request, UPLOAD_MEDIA_TYPES);
  return filenameOf(url);
}

/**
 * Mount POST /v1/challenges/{slug}/submissions, the signed upload. In order: the four signature
 * headers must be present (401), the media type zip or JSON (415), the body within the limit
 * (413); then the signature is verified over method, path as received, exact body and slug
 * (401 with the verifier's code), the challenge must be active (404, 502 without an address),
 * and (hotkey, nonce) is reserved atomically (409 `nonce_reused`). Only then is the body
 * forwarded to the challenge's bridge with the challenge bearer and the verified identity;
 * the challenge's answer is returned unchanged. A nonce is spent once reserved, even if the
 * challenge then fails: the client signs again.
 */
export function registerSignedUploadRoute(
  app: App,
  deps: SignedUploadDependencies,
): SignedUploadRoute {
  const cryptoReady = initCrypto();
  cryptoReady.catch(() => {}); // surfaced by the first upload that awaits it
  const verify = createSignatureVerifier(deps.verifyWorkers ?? 0, app.log);
  app.route({
    method: "POST",
    path: "/v1/challenges/:slug/submissions",
    summary: "Signed submission upload, verified by the master and forwarded to the challenge",
    description:
      "Signed with X-Hotkey, X-Signature, X-Nonce and X-Timestamp over the request (see the signing " +
      "protocol). Body: application/zip or application/json, at most the configured upload limit.",
    tags: ["proxy"],
    params: Type.Object({ slug: Type.String() }),
    body: "stream",
    handler: async (ctx) => {
      const { slug } = ctx.params;
      const request = ctx.request;
      // Refused before reading: the body is never read and the adapter closes the connection.
      const filename = precheck(request, ctx.url, slug);
      const body = await readBodyWithLimit(request, deps.uploadLimitBytes);

      await cryptoReady;
      const verified = await verify.check({
        headers: request.headers,
        method: request.method,
        pathWithQuery: ctx.env.rawTarget ?? `${ctx.url.pathname}${ctx.url.search}`,
        body,
        slug,
      });
      if (!verified.ok) throw signatureRefused(verified.code, verified.message);

      const { row, base } = await activeUpstream(deps.store, slug);
      if (!(await deps.nonces.reserve(verified.hotkey, verified.nonce))) {
        throw new HttpError(
          409,
          "nonce_reused",
          "This nonce was already used by this hotkey; sign again with a new nonce",
        );
      }
      const headers = bridgeRequestHeaders(request.headers, forwardIdentity(ctx, slug), {
        token: deps.store.challengeToken(row),
        hotkey: verified.hotkey,
        nonce: verified.nonce,
        requestHash: verified.requestHash,
        filename,
      });
      ctx.log.info("submission upload verified", {
        slug,
        hotkey: verified.hotkey,
        bytes: body.byteLength,
      });
      return deps.upstream.send({
        slug,
        base,
        target: BRIDGE_PATH,
        method: "POST",
        headers,
        body,
        signal: request.signal,
      });
    },
  });
  return { close: verify.close };
}
