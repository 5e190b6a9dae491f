import {
  BrokerCleanupRequest,
  BrokerCleanupResponse,
  BrokerListRequest,
  BrokerListResponse,
  BrokerRunRequest,
  BrokerRunResponse,
  requestTraceContext,
} from "@platform/core";
import { Type } from "@sinclair/typebox";
import type Docker from "dockerode";
import type { MasterContext } from "../master-context.js";
import { Broker } from "./broker.js";
import { authenticateBroker } from "./broker-auth.js";

const brokers = new WeakMap<MasterContext, Broker>();

/** The broker registered on a master (tests reach the reaper and the ledger through it). */
export function brokerOf(context: MasterContext): Broker | undefined {
  return brokers.get(context);
}

/** GET /v1/docker/gpu-leases answer. */
export const GpuLeasesResponse = Type.Object({
  slug: Type.String(),
  limit: Type.Integer(),
  in_use: Type.Integer(),
  leases: Type.Array(
    Type.Object({
      container_name: Type.String(),
      job_id: Type.String(),
      count: Type.Integer(),
      devices: Type.Array(Type.String()),
      status: Type.String(),
      started_at: Type.String({ format: "date-time" }),
      ended_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
    }),
  ),
});

const tags = ["broker"];
const security = ["brokerToken"];
const refused = {
  401: { description: "Missing or wrong broker token / slug" },
  403: { description: "The challenge is disabled" },
  503: { description: "No Docker engine answers" },
};

/**
 * Mount the container broker (/v1/docker/run, cleanup, list, gpu-leases) and start its reaper
 * with the server. Every route acts for the challenge whose broker token is presented.
 */
export function registerBrokerRoutes(
  context: MasterContext,
  options: { docker?: Docker } = {},
): Broker {
  // The admin listener's app: nothing here is served on the public origin (docs/master.md).
  const { adminApp: app, store, config } = context;
  const broker = new Broker({
    config: config.broker,
    sql: context.database.sql,
    store,
    log: context.log.child({ component: "broker" }),
    metrics: context.metrics,
    ...(options.docker ? { docker: options.docker } : {}),
  });
  brokers.set(context, broker);
  context.onListen(() => broker.start());
  context.onClose(() => broker.stop());

  // Base64 is 4/3 of the bytes, plus room for the rest of the request.
  const bodyLimit = Math.ceil((config.broker.files.maxTotalBytes * 4) / 3) + 1024 * 1024;

  app.route({
    method: "POST",
    path: "/v1/docker/run",
    summary: "Run one hardened workload for the calling challenge and answer when it has ended",
    tags,
    security,
    body: BrokerRunRequest,
    bodyLimit,
    responses: {
      200: { description: "The workload ended (exit, timeout or OOM)", schema: BrokerRunResponse },
      400: {
        description:
          "A weakening, a limit above the maximum, an image not allowed or unavailable, a bad file, an executor error",
      },
      ...refused,
      409: { description: "The workload was removed (cleanup, reaper) before it finished" },
      429: {
        description: "Quota exceeded: the body says which limit, and Retry-After when to try again",
      },
    },
    handler: async ({ request, body }) =>
      broker.run(await authenticateBroker(store, request.headers), body, {
        signal: request.signal,
        // The run's span is the request's child, passed across the await (explicit tracing).
        trace: requestTraceContext(request),
      }),
  });

  app.route({
    method: "POST",
    path: "/v1/docker/list",
    summary: "The calling challenge's workloads (optionally of one job)",
    tags,
    security,
    body: BrokerListRequest,
    responses: { 200: { description: "OK", schema: BrokerListResponse }, ...refused },
    handler: async ({ request, body }) => {
      const row = await authenticateBroker(store, request.headers);
      return { containers: await broker.list(row.slug, body.job_id) };
    },
  });

  app.route({
    method: "POST",
    path: "/v1/docker/cleanup",
    summary: "Remove the calling challenge's workloads: all, one job's, or one by name",
    tags,
    security,
    body: BrokerCleanupRequest,
    responses: {
      200: { description: "What was removed", schema: BrokerCleanupResponse },
      ...refused,
    },
    handler: async ({ request, body }) => {
      const row = await authenticateBroker(store, request.headers);
      return { status: "ok", removed: await broker.cleanup(row.slug, body) };
    },
  });

  app.route({
    method: "GET",
    path: "/v1/docker/gpu-leases",
    summary: "The calling challenge's GPU leases, live and recent, newest first",
    tags,
    security,
    query: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) }),
    responses: { 200: { description: "OK", schema: GpuLeasesResponse }, ...refused },
    handler: async ({ request, query }) => {
      const row = await authenticateBroker(store, request.headers);
      const leases = await broker.gpuLeases(row.slug, query.limit);
      const inUse = leases
        .filter((lease) => lease.ended_at === null)
        .reduce((sum, lease) => sum + lease.count, 0);
      return { slug: row.slug, limit: config.broker.maxGpus, in_use: inUse, leases };
    },
  });

  return broker;
}
