import {
  HttpError,
  RuntimeOperationResponse,
  Slug,
  type SseEvent,
  sseResponse,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import { requireAdminToken } from "../admin/admin-auth.js";
import type { MasterContext } from "../master-context.js";
import { enforceImagePolicy } from "../registry/image-policy.js";
import { isEngineUnreachable } from "./engine-view.js";
import type { Reconciler } from "./reconciler.js";
import type { UpdateProgress } from "./rolling-update.js";

const UpdateBody = Type.Object(
  { image: Type.String({ minLength: 1, maxLength: 512 }) },
  { additionalProperties: false },
);

/**
 * POST /v1/admin/challenges/:slug/update {image}: the update by digest with rollback, answered
 * once, or as server-sent `progress` events then one `result` (Accept: text/event-stream or
 * ?stream=1), as pull does.
 */
export function registerUpdateRoute(context: MasterContext, reconciler: Reconciler): void {
  const { adminApp: app, config } = context;
  app.route({
    method: "POST",
    path: "/v1/admin/challenges/:slug/update",
    summary:
      "Set the challenge's image and update its container beside the old one, rolling back when the new one is not ready",
    tags: ["admin", "runtime"],
    security: ["adminToken"],
    before: [requireAdminToken(config.adminToken)],
    params: Type.Object({ slug: Slug }),
    query: Type.Object({ stream: Type.Optional(Type.String({ maxLength: 8 })) }),
    body: UpdateBody,
    responses: {
      200: {
        description:
          "updated, rolled_back, unchanged or pending; or a text/event-stream of progress then a result event",
        schema: RuntimeOperationResponse,
      },
      400: { description: "The image fails the image policy" },
      401: { description: "Admin token mismatch" },
      404: { description: "Unknown slug" },
      409: { description: "The challenge is not active, or not run by this master" },
      503: { description: "No Docker engine answers" },
    },
    handler: async ({ request, params, query, body }) => {
      enforceImagePolicy(body.image, config.imagePolicy);
      const wantsStream =
        query.stream === "1" ||
        query.stream === "true" ||
        (request.headers.get("accept") ?? "").includes("text/event-stream");
      if (!wantsStream)
        return reconciler
          .updateNow(params.slug, body.image, () => {})
          .catch((error) => {
            throw asHttpError(error);
          });
      // Refusals (404, 409) answer as plain errors before the stream starts.
      await context.store.get(params.slug);
      return sseResponse(request, () => updateEvents(reconciler, params.slug, body.image));
    },
  });
}

/** The update's steps as `progress` events, then its `result` (or an `error`). */
async function* updateEvents(
  reconciler: Reconciler,
  slug: string,
  image: string,
): AsyncGenerator<SseEvent> {
  const queue: UpdateProgress[] = [];
  let wake = () => {};
  let done = false;
  const run = reconciler
    .updateNow(slug, image, (step) => {
      queue.push(step);
      wake();
    })
    .finally(() => {
      done = true;
      wake();
    });
  run.catch(() => {});
  while (!done || queue.length > 0) {
    const next = queue.shift();
    if (next) {
      yield { event: "progress", data: next };
      continue;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
  try {
    yield { event: "result", data: await run };
  } catch (failure) {
    const error = asHttpError(failure);
    const known = error instanceof HttpError;
    yield {
      event: "error",
      data: {
        status: known ? error.status : 500,
        code: known ? error.code : "internal_error",
        message: known ? error.message : "The update failed",
      },
    };
  }
}

/** The engine out of reach is 503 docker_unavailable, as for restart; anything else as it is. */
function asHttpError(error: unknown): unknown {
  if (!isEngineUnreachable(error)) return error;
  return new HttpError(
    503,
    "docker_unavailable",
    "The container engine is not reachable; try again later",
    {
      headers: { "retry-after": "10" },
    },
  );
}
