import { plainProxySegment, splitProxyTarget } from "@platform/challenge-sdk/proxy-contract";
import { type App, HttpError } from "@platform/core";
import { Type } from "@sinclair/typebox";
import { activeUpstream } from "./_active-upstream.js";
import { passthroughRequestHeaders } from "./forward-headers.js";
import { forwardIdentity, observedForward, type ProxyDependencies } from "./passthrough-route.js";
import { encodeSegment } from "./proxy-path.js";

/** Longest submission id the master forwards (ids are uuids or integers in practice). */
export const MAX_SUBMISSION_ID_LENGTH = 256;

/**
 * Mount GET /v1/challenges/{challenge_name}/submissions/{submission_id}: forwarded to the
 * active challenge's GET /v1/submissions/{submission_id} (query kept) and answered with its
 * response unchanged. No signature: the status of a submission is public. The id must be one
 * plain path segment once fully decoded (400 `invalid_submission_id`), so it cannot walk to
 * another route of the challenge.
 */
export function registerSubmissionStatusRoute(app: App, deps: ProxyDependencies): void {
  app.route({
    method: "GET",
    path: "/v1/challenges/:challenge_name/submissions/:submission_id",
    summary: "Status of a submission, read from its challenge",
    description: "The body is defined by the challenge and returned unchanged.",
    tags: ["proxy"],
    params: Type.Object({ challenge_name: Type.String(), submission_id: Type.String() }),
    handler: (ctx) =>
      observedForward(deps, "passthrough", ctx.request, async (observation) => {
        const slug = ctx.params.challenge_name;
        observation.names(slug);
        const id = plainProxySegment(ctx.params.submission_id);
        if (id === null || id.length > MAX_SUBMISSION_ID_LENGTH) {
          throw new HttpError(
            400,
            "invalid_submission_id",
            "The submission id must be one plain path segment",
          );
        }
        const { base } = await activeUpstream(deps.store, slug);
        observation.known(slug);
        const { query } = splitProxyTarget(
          ctx.env.rawTarget ?? `${ctx.url.pathname}${ctx.url.search}`,
        );
        const headers = passthroughRequestHeaders(
          ctx.request.headers,
          forwardIdentity(ctx, slug),
          undefined,
          deps.isMasterCredential,
        );
        observation.inject(headers);
        return deps.upstream.send({
          slug,
          base,
          target: `/v1/submissions/${encodeSegment(id)}${query}`,
          method: "GET",
          headers,
          signal: ctx.request.signal,
        });
      }),
  });
}
