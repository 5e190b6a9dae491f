import { type App, type NodeHandler, readBodyWithLimit } from "@platform/core";
import { Type } from "@sinclair/typebox";
import {
  admitUpload,
  BRIDGE_PATH,
  createUploadVerifier,
  precheck,
  type SignedUploadDependencies,
} from "./_upload-admission.js";
import { createNativeSignedUpload } from "./native-signed-upload.js";
import { forwardIdentity, observedForward } from "./passthrough-route.js";

export {
  BRIDGE_PATH,
  isPlainFilename,
  type SignedUploadDependencies,
  UPLOAD_MEDIA_TYPES,
} from "./_upload-admission.js";

/** What {@link registerSignedUploadRoute} leaves running: close it with the master. */
export interface SignedUploadRoute {
  /**
   * The same route on node's own request and response, for the public listener (core's
   * `serve({ nodeHandler })`): no web Request, Response or stream per upload.
   */
  native: NodeHandler;
  /** Stops the verify pool, if any (uploads then verify on the main thread). */
  close(): Promise<void>;
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
  const verify = createUploadVerifier(deps, app.log);
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
    handler: (ctx) =>
      observedForward(deps, "upload", ctx.request, async (observation) => {
        const { slug } = ctx.params;
        const request = ctx.request;
        observation.names(slug);
        // Refused before reading: the body is never read and the adapter closes the connection.
        const filename = precheck(request, ctx.url, slug);
        const body = await readBodyWithLimit(request, deps.uploadLimitBytes);
        const admitted = await admitUpload(deps, verify, {
          headers: request.headers,
          rawTarget: ctx.env.rawTarget ?? `${ctx.url.pathname}${ctx.url.search}`,
          body,
          slug,
          filename,
          identity: forwardIdentity(ctx, slug),
          observation,
        });
        ctx.log.info("submission upload verified", admitted.logFields);
        return deps.upstream.send({
          slug,
          base: admitted.base,
          target: BRIDGE_PATH,
          method: "POST",
          headers: admitted.headers,
          body,
          signal: request.signal,
        });
      }),
  });
  const native = createNativeSignedUpload({ ...deps, log: app.log }, verify);
  return { close: verify.close, native };
}
