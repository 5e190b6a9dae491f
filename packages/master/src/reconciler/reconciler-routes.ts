import { Slug } from "@platform/core";
import { Type } from "@sinclair/typebox";
import { requireAdminToken } from "../admin/admin-auth.js";
import type { MasterContext } from "../master-context.js";
import { upstreamOf } from "../proxy/proxy-routes.js";
import type { ChallengeContainers } from "../runtime/challenge-containers.js";
import { EngineView } from "./engine-view.js";
import { Reconciler } from "./reconciler.js";
import { registerReconcilerMetrics } from "./reconciler-metrics.js";
import {
  ReconcilerStatus,
  RuntimeDetail,
  reconcilerStatus,
  runtimeDetail,
} from "./reconciler-view.js";
import { RuntimeStateStore } from "./runtime-state-store.js";
import { SwarmServices } from "./swarm-services.js";
import { registerUpdateRoute } from "./update-route.js";

const reconcilers = new WeakMap<MasterContext, Reconciler>();

/** The reconciler of a master, when PLATFORM_RECONCILER is on. */
export function reconcilerOf(context: MasterContext): Reconciler | undefined {
  return reconcilers.get(context);
}

/**
 * Build the reconciler on the runtime's engine (when enabled), start it with the server and
 * stop it (releasing the lease) on close; register its readiness check, its metrics and the
 * admin routes GET /v1/admin/reconciler and GET /v1/admin/challenges/:slug/runtime.
 */
export function registerReconciler(
  context: MasterContext,
  runtime: ChallengeContainers,
  instanceId: () => Promise<string>,
): Reconciler | undefined {
  const { config, database, store } = context;
  if (!config.reconciler.enabled) return undefined;
  const state = new RuntimeStateStore(database.sql);
  const actions = registerReconcilerMetrics(context, state, () => reconciler);
  const reconciler = new Reconciler({
    config: config.reconciler,
    network: config.broker.dockerNetwork,
    sql: database.sql,
    masterKey: context.masterKey,
    store,
    state,
    engine: new EngineView(runtime.docker, config.broker.pullTimeoutMs),
    ...(config.reconciler.backend === "swarm"
      ? {
          swarm: new SwarmServices(
            runtime.docker,
            config.broker.dockerNetwork,
            config.reconciler.swarmAddress,
          ),
        }
      : {}),
    runtime,
    instanceId,
    log: context.log.child({ component: "reconciler" }),
    onAction: actions,
    inflight: (origin) => upstreamOf(context)?.inflight(origin) ?? 0,
    proxyCacheMs: config.proxy.activeCacheMs,
  });
  reconcilers.set(context, reconciler);
  context.onListen(() => reconciler.start());
  context.onClose(() => reconciler.stop());
  context.health.register("reconciler", async () => {
    const lease = await reconciler.lease.read();
    if (!lease?.live) throw new Error("no master holds the reconciler lease");
    if (lease.last_error) throw new Error(lease.last_error);
  });
  registerRoutes(context, reconciler, state);
  registerUpdateRoute(context, reconciler);
  return reconciler;
}

function registerRoutes(context: MasterContext, reconciler: Reconciler, state: RuntimeStateStore) {
  const { adminApp: app, store, config } = context;
  const before = [requireAdminToken(config.adminToken)];
  const tags = ["admin", "runtime"];
  const security = ["adminToken"];
  app.route({
    method: "GET",
    path: "/v1/admin/reconciler",
    summary: "The reconciler: its lease and every challenge's desired and observed state",
    tags,
    security,
    before,
    responses: {
      200: { description: "OK", schema: ReconcilerStatus },
      401: { description: "Admin token mismatch" },
    },
    handler: async () =>
      reconcilerStatus(await reconciler.lease.read(), await store.list(), await state.list(), {
        holder: reconciler.lease.holder,
        intervalSeconds: config.reconciler.intervalSeconds,
      }),
  });
  app.route({
    method: "GET",
    path: "/v1/admin/challenges/:slug/runtime",
    summary: "One challenge's reconciler state and its latest runtime events",
    tags,
    security,
    before,
    params: Type.Object({ slug: Slug }),
    responses: {
      200: { description: "OK", schema: RuntimeDetail },
      401: { description: "Admin token mismatch" },
      404: { description: "Unknown slug" },
    },
    handler: async ({ params }) => {
      const row = await store.get(params.slug);
      return runtimeDetail(row, await state.find(row.slug), await state.events(row.slug));
    },
  });
}
