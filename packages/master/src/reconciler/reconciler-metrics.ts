import type { MasterContext } from "../master-context.js";
import type { Reconciler } from "./reconciler.js";
import type { RuntimeAction, RuntimeStateStore } from "./runtime-state-store.js";

/**
 * The reconciler's metrics on the master's registry: what it did (a counter on the replica
 * that acted) and each challenge's state (gauges read from the database at scrape time, so
 * every replica reports the same). Slugs are registered challenges' only.
 * Returns the recorder of actions.
 */
export function registerReconcilerMetrics(
  context: MasterContext,
  state: RuntimeStateStore,
  reconciler: () => Reconciler | undefined = () => undefined,
): (slug: string, action: RuntimeAction, outcome: "ok" | "failed") => void {
  const { metrics } = context;
  const actions = metrics.counter({
    name: "platform_reconciler_actions_total",
    help: "Container actions of the reconciler on this master, by challenge, action (start, restart, replace, stop, update) and outcome (ok, failed)",
    labelNames: ["slug", "action", "outcome"],
  });
  metrics.gauge({
    name: "platform_reconciler_leader",
    help: "1 while this master holds the reconciler lease, else 0",
    collect() {
      this.set(reconciler()?.isLeader ? 1 : 0);
    },
  });
  const rows = async () => state.list().catch(() => []);
  metrics.gauge({
    name: "platform_challenge_runtime_up",
    help: "1 while the reconciler last saw the challenge's container running and ready, else 0 (challenges it manages)",
    labelNames: ["slug"],
    async collect() {
      this.reset();
      for (const row of await rows())
        if (row.desired === "running")
          this.set({ slug: row.slug }, row.observed === "running" ? 1 : 0);
    },
  });
  metrics.gauge({
    name: "platform_challenge_runtime_restarts",
    help: "Restarts for cause (crashed, exited, unhealthy) the reconciler made, by challenge",
    labelNames: ["slug"],
    async collect() {
      this.reset();
      for (const row of await rows()) this.set({ slug: row.slug }, row.restarts);
    },
  });
  return (slug, action, outcome) => {
    if (metrics.enabled) actions.inc({ slug, action, outcome });
  };
}
