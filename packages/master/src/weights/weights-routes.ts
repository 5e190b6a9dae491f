import { ErrorResponse, HttpError, WeightsSnapshot } from "@platform/core";
import { Type } from "@sinclair/typebox";
import { requireAdminToken } from "../admin/admin-auth.js";
import type { MasterContext } from "../master-context.js";
import {
  describeMetagraphSource,
  type MetagraphProvider,
  metagraphFromConfig,
} from "./metagraph-provider.js";
import { WeightsCollector } from "./weights-collector.js";
import {
  publicSnapshot,
  type StoredWeightsSnapshot,
  WeightsSnapshotStore,
} from "./weights-snapshot-store.js";

/** What the weights group gives the rest of the master (the dashboard reads the latest snapshot). */
export interface WeightsService {
  collector: WeightsCollector;
  snapshots: WeightsSnapshotStore;
  /** The newest snapshot with its collection detail, or null before the first. */
  latest(): Promise<StoredWeightsSnapshot | null>;
}

const ChallengeCollectionSchema = Type.Object({
  slug: Type.String(),
  status: Type.Union([Type.Literal("ok"), Type.Literal("failed")]),
  latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  attempts: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  dropped_invalid: Type.Integer(),
  dropped_unknown: Type.Integer(),
});

/** An admin view of a snapshot: the public record, the failure policy and how the run went. */
const AdminWeightsSnapshot = Type.Composite([
  WeightsSnapshot,
  Type.Object({
    failure_policy: Type.Union([Type.Literal("burn"), Type.Literal("redistribute")]),
    collection: Type.Object({
      started_at: Type.String({ format: "date-time" }),
      duration_ms: Type.Integer(),
      metagraph: Type.Object({
        status: Type.Union([
          Type.Literal("ok"),
          Type.Literal("stale"),
          Type.Literal("failed"),
          Type.Literal("none"),
        ]),
        hotkeys: Type.Integer(),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
      challenges: Type.Array(ChallengeCollectionSchema),
    }),
  }),
]);
const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});
const HistoryResponse = Type.Object({ snapshots: Type.Array(AdminWeightsSnapshot) });

/**
 * Mount weights collection: public GET /v1/weights/latest, admin POST /v1/admin/weights/collect
 * and GET /v1/admin/weights/history; schedule collection with the server's lifecycle.
 */
export function registerWeightsRoutes(
  context: MasterContext,
  /** The metagraph read from the chain (PLATFORM_METAGRAPH=chain), which wins over a file or URL. */
  chainMetagraph?: MetagraphProvider,
): WeightsService {
  const { app, adminApp, config, database, store, log } = context;
  const settings = config.weights;
  const snapshots = new WeightsSnapshotStore(database.sql, { keep: settings.keepSnapshots });
  const metagraph =
    chainMetagraph ?? metagraphFromConfig(settings.metagraph, { timeoutMs: settings.timeoutMs });
  const collector = new WeightsCollector({
    challenges: store,
    snapshots,
    metagraph,
    log: log.child({ component: "weights" }),
    internalUrlPolicy: config.internalUrlPolicy,
    metrics: context.metrics,
    settings: {
      intervalMs: settings.intervalSeconds * 1000,
      timeoutMs: settings.timeoutMs,
      retries: settings.retries,
      concurrency: settings.concurrency,
      failurePolicy: settings.failurePolicy,
    },
  });
  context.onListen(() => {
    if (chainMetagraph) log.info("weights: metagraph source", { source: "chain" });
    else if (settings.metagraph)
      log.info("weights: metagraph source", {
        source: describeMetagraphSource(settings.metagraph),
      });
    else
      log.warn(
        "weights: no metagraph configured (PLATFORM_METAGRAPH); every snapshot's uid vector burns to uid 0",
      );
    collector.start();
  });
  context.onClose(() => collector.stop());
  // Read from the database at scrape time: replicas share it, and one that skipped a round
  // (another had just collected) must not report a stale time.
  context.metrics.gauge({
    name: "platform_weights_last_snapshot_timestamp_seconds",
    help: "Unix time of the newest weights snapshot in the database (any replica's)",
    async collect() {
      try {
        const at = await snapshots.latestTimestampSeconds();
        if (at === null) this.reset();
        else this.set(at);
      } catch {
        // The database is away: keep the last value (platform_ready says why), not a 500.
      }
    },
  });

  const before = [requireAdminToken(config.adminToken)];

  app.route({
    method: "GET",
    path: "/v1/weights/latest",
    summary: "The latest aggregated weights snapshot",
    description:
      "uids and weights (also as chain u16) with the hotkey view and how each challenge contributed. No credential.",
    tags: ["weights"],
    responses: {
      200: { description: "The newest snapshot", schema: WeightsSnapshot },
      404: { description: "No snapshot computed yet (code no_weights_yet)", schema: ErrorResponse },
    },
    handler: async () => {
      const latest = await snapshots.latest();
      if (!latest)
        throw new HttpError(404, "no_weights_yet", "No weights snapshot has been computed yet");
      return publicSnapshot(latest);
    },
  });

  adminApp.route({
    method: "POST",
    path: "/v1/admin/weights/collect",
    summary: "Collect weights from every active challenge now",
    description: "Joins a collection already in progress instead of starting a second one.",
    tags: ["admin", "weights"],
    security: ["adminToken"],
    before,
    responses: { 200: { description: "The new snapshot", schema: AdminWeightsSnapshot } },
    handler: () => collector.collect(),
  });

  adminApp.route({
    method: "GET",
    path: "/v1/admin/weights/history",
    summary: "Recent weights snapshots, newest first",
    tags: ["admin", "weights"],
    security: ["adminToken"],
    query: HistoryQuery,
    before,
    responses: { 200: { description: "Snapshots", schema: HistoryResponse } },
    handler: async ({ query }) => ({ snapshots: await snapshots.history(query.limit) }),
  });

  return { collector, snapshots, latest: () => snapshots.latest() };
}
