import { setTimeout as sleep } from "node:timers/promises";
import { HttpError, type RuntimeOperationResponse } from "@platform/core";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { StepContext } from "./challenge-step.js";
import { SPEC_LABEL } from "./engine-view.js";
import type { ProgressSink } from "./rolling-update.js";
import { recordSwarmOutcome } from "./swarm-outcomes.js";
import { deploy, fingerprint, swarmOf } from "./swarm-step.js";

const POLL_MS = 500;

const answer = (
  slug: string,
  operation: string,
  status: string,
  detail: string,
): RuntimeOperationResponse => ({ slug, operation, status, detail });

/** The operator's restart on the Swarm backend: Swarm replaces every task, one at a time. */
export async function swarmRestart(
  ctx: StepContext,
  row: ChallengeRow,
): Promise<RuntimeOperationResponse> {
  const swarm = swarmOf(ctx);
  const service = await swarm.inspect(row.slug);
  if (!service)
    return answer(row.slug, "restart", "pending", "No service yet: the reconciler creates it");
  await swarm.forceRestart(service);
  await ctx.state.write(
    row.slug,
    "running",
    { observed: "starting", last_action: "restart", last_action_at: new Date(), last_error: null },
    { kind: "runtime_restarted", detail: { reason: "operator", service: service.ID } },
  );
  return answer(row.slug, "restart", "running", `Swarm replaces the tasks of ${service.Spec.Name}`);
}

/**
 * The operator's update on the Swarm backend: give the service the new spec, then follow
 * Swarm's rolling update until it completes or rolls back (reported as progress), and record
 * it. Swarm keeps rolling when the wait ends first: `pending`, the next pass records it.
 */
export async function swarmUpdate(
  ctx: StepContext,
  row: ChallengeRow,
  progress: ProgressSink,
): Promise<RuntimeOperationResponse> {
  const swarm = swarmOf(ctx);
  const service = await swarm.inspect(row.slug);
  if (!service)
    return answer(row.slug, "update", "pending", "No service yet: the reconciler creates it");
  const state = await ctx.state.find(row.slug);
  const spec = fingerprint(ctx, row, state);
  if (spec && service.Spec.Labels?.[SPEC_LABEL] === spec)
    return answer(
      row.slug,
      "update",
      "unchanged",
      `${row.slug} already runs ${state?.pinned_image}`,
    );
  await deploy(ctx, row, state, service, "update");
  const after = await ctx.state.find(row.slug);
  if (after?.last_action === "update" && after.next_attempt_at && after.last_error)
    throw new HttpError(502, "runtime_failed", after.last_error, {
      extra: { slug: row.slug, operation: "update", status: "failed" },
    });
  progress({ step: "started", detail: "Swarm is rolling the service, new task before old" });
  // Swarm watches each new task for updateReadySeconds (its Monitor) before it calls it done.
  const deadline = Date.now() + (ctx.config.updateReadySeconds * 2 + 30) * 1000;
  let last = "";
  while (Date.now() < deadline) {
    const now = await swarm.inspect(row.slug);
    const update = now?.UpdateStatus;
    if (now && update?.CompletedAt && update.State !== "updating") {
      const reason = await recordSwarmOutcome(ctx, row, after, now);
      const done = update.State === "completed";
      if (done) progress({ step: "ready", detail: update.Message ?? "update completed" });
      return answer(
        row.slug,
        "update",
        done ? "updated" : "rolled_back",
        done ? `${row.slug} runs ${now.Spec.TaskTemplate?.ContainerSpec?.Image}` : reason,
      );
    }
    const message = update?.Message ?? "waiting for Swarm";
    if (message !== last) progress({ step: "waiting", detail: message });
    last = message;
    await sleep(POLL_MS);
  }
  return answer(
    row.slug,
    "update",
    "pending",
    "Swarm is still rolling the service; the reconciler records how it ends",
  );
}
