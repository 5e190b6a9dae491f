import type { MasterContext } from "../master-context.js";
import type { StoredWeightsSnapshot } from "../weights/weights-snapshot-store.js";
import {
  buildDashboardModel,
  type DashboardChainWeights,
  renderDashboardSvg,
} from "./dashboard-svg.js";

/** Where the dashboard reads the last weights collection (the weights group's service). */
export interface DashboardWeightsSource {
  latest(): Promise<StoredWeightsSnapshot | null>;
}

/** Where the dashboard reads the master's validator's last confirmed weights on chain. */
export interface DashboardChainSource {
  /** null before the first confirmation; undefined when the master sets no weights on chain. */
  lastConfirmed(): Promise<DashboardChainWeights | null | undefined>;
}

/**
 * Mount the public GET /v1/challenges/dashboard.svg: one card per non-draft challenge, and with
 * a chain, the block where the master's validator last had its weights confirmed.
 */
export function registerDashboardRoutes(
  context: MasterContext,
  weights: DashboardWeightsSource,
  chain?: DashboardChainSource,
): void {
  const { app, store, config } = context;
  app.route({
    method: "GET",
    path: "/v1/challenges/dashboard.svg",
    summary: "SVG dashboard of the challenges",
    description:
      "Status, emission share, upstream health and weights of every non-draft challenge. No credential.",
    tags: ["registry"],
    responses: { 200: { description: "A self-contained SVG image", contentType: "image/svg+xml" } },
    handler: async () => {
      const [challenges, latest, onChain] = await Promise.all([
        store.list(["active", "inactive", "disabled"]),
        weights.latest(),
        chain?.lastConfirmed(),
      ]);
      const svg = renderDashboardSvg(
        buildDashboardModel(challenges, latest, {
          network: config.network,
          ...(onChain === undefined ? {} : { chain: onChain }),
        }),
      );
      return new Response(svg, {
        headers: {
          "content-type": "image/svg+xml; charset=utf-8",
          "cache-control": "no-store",
          // Opened directly, an SVG is a document: forbid scripts and every outside fetch anyway.
          "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
          "x-content-type-options": "nosniff",
        },
      });
    },
  });
}
