import { dockerMessage, dockerStatus, engineFacts } from "@platform/challenge-sdk/sandbox";
import { HttpError, RuntimeOperationResponse, Slug, sseResponse } from "@platform/core";
import { Type } from "@sinclair/typebox";
import Docker from "dockerode";
import { requireAdminToken } from "../admin/admin-auth.js";
import { brokerOf } from "../broker/broker-routes.js";
import { RunLedger } from "../broker/run-ledger.js";
import type { MasterContext } from "../master-context.js";
import { reconcilerOf } from "../reconciler/reconciler-routes.js";
import { ChallengeContainers } from "./challenge-containers.js";

const runtimes = new WeakMap<MasterContext, ChallengeContainers>();

/** The challenge containers registered on a master. */
export function runtimeOf(context: MasterContext): ChallengeContainers | undefined {
  return runtimes.get(context);
}

/** Turn a Docker failure that is not already an HTTP answer into 503 (no engine) or 502. */
async function guarded<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (dockerStatus(error) !== undefined)
      throw new HttpError(
        502,
        "runtime_failed",
        `Docker refused the operation: ${dockerMessage(error)}`,
      );
    const code = (error as { code?: unknown })?.code;
    // A socket that refuses, is missing or is not ours: no engine, not a bug of this master.
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
      throw new HttpError(
        503,
        "docker_unavailable",
        "The container engine is not reachable; try again later",
        { headers: { "retry-after": "10" } },
      );
    }
    throw error;
  }
}

const SlugParams = Type.Object({ slug: Slug });
const tags = ["admin", "runtime"];
const security = ["adminToken"];

/**
 * Mount POST /v1/admin/challenges/:slug/pull and /restart and GET /status, behind the admin
 * token. Pull streams Docker's progress as server-sent events with `Accept: text/event-stream`
 * or `?stream=1`; otherwise it answers once, like restart and status.
 */
export function registerRuntimeRoutes(
  context: MasterContext,
  options: { docker?: Docker } = {},
): ChallengeContainers {
  // The admin listener's app: nothing here is served on the public origin (docs/master.md).
  const { adminApp: app, store, config } = context;
  // dockerode reads DOCKER_HOST (and its TLS settings) as the docker CLI does.
  const docker = options.docker ?? new Docker();
  const ledger = new RunLedger(context.database.sql);
  const runtime = new ChallengeContainers({
    docker,
    config,
    store,
    log: context.log.child({ component: "runtime" }),
    instanceId: () => ledger.instanceId(),
    gpuHost: async () => {
      const broker = brokerOf(context);
      if (broker) return broker.gpuHost();
      return config.broker.gpuHost ?? (await engineFacts(docker)).nvidia;
    },
  });
  runtimes.set(context, runtime);
  const before = [requireAdminToken(config.adminToken)];
  const responses = {
    200: { description: "OK", schema: RuntimeOperationResponse },
    401: { description: "Admin token mismatch" },
    404: { description: "Unknown slug" },
    502: {
      description:
        "Docker refused the operation (body: code + the RuntimeOperationResponse fields)",
    },
    503: { description: "No Docker engine answers" },
  };

  app.route({
    method: "POST",
    path: "/v1/admin/challenges/:slug/pull",
    summary:
      "Pull the challenge's image (server-sent progress with Accept: text/event-stream or ?stream=1)",
    tags,
    security,
    before,
    params: SlugParams,
    query: Type.Object({ stream: Type.Optional(Type.String({ maxLength: 8 })) }),
    responses: {
      ...responses,
      200: {
        description: "OK, or a text/event-stream of progress then a result event",
        schema: RuntimeOperationResponse,
      },
    },
    handler: async ({ request, params, query }) => {
      const row = await store.get(params.slug);
      const wantsStream =
        query.stream === "1" ||
        query.stream === "true" ||
        (request.headers.get("accept") ?? "").includes("text/event-stream");
      if (wantsStream) return sseResponse(request, ({ signal }) => runtime.pullEvents(row, signal));
      return guarded(() => runtime.pull(row, request.signal));
    },
  });

  app.route({
    method: "POST",
    path: "/v1/admin/challenges/:slug/restart",
    summary: "Create or replace the challenge's container from its registry record",
    tags,
    security,
    before,
    params: SlugParams,
    responses: {
      ...responses,
      409: {
        description:
          "A container of that name belongs to another deployment, or (reconciler on) the challenge is not active",
      },
    },
    handler: async ({ params }) =>
      guarded(async () => {
        // With the reconciler on, a restart is its own: pinned image, recorded, active only.
        const reconciler = reconcilerOf(context);
        if (reconciler) return reconciler.restartNow(params.slug);
        return runtime.restart(await store.get(params.slug));
      }),
  });

  app.route({
    method: "GET",
    path: "/v1/admin/challenges/:slug/status",
    summary: "The challenge container's state (running, exited, missing, …) and health",
    tags,
    security,
    before,
    params: SlugParams,
    responses,
    handler: async ({ params }) =>
      guarded(async () => runtime.status(await store.get(params.slug))),
  });

  return runtime;
}
