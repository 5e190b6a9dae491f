import type { ChallengeRow } from "../registry/challenge-row.js";
import type { SwarmTask } from "../swarm/swarm-tasks.js";
import type { StepContext } from "./challenge-step.js";
import type { RuntimeStateRow } from "./runtime-state-store.js";
import { type ChallengeService, IMAGE_LABEL } from "./swarm-services.js";
import { recordRollback } from "./update-rollback.js";

/** Task states of a task that ended on its own (an update's or a removal's end is "shutdown"). */
export const EXITED = new Set(["complete", "failed", "rejected"]);

const time = (at: string | Date | null | undefined) => (at ? new Date(at).getTime() : 0);

/**
 * Record what Swarm finished: an update completed (the service's image becomes the state's),
 * or rolled back (the reason is Swarm's UpdateStatus.Message; the registry goes back to the
 * image that runs, as on the engine backend, and another try of a changed record waits its
 * backoff). Stamped with Swarm's completion time, so each is recorded once.
 */
export async function recordSwarmOutcome(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  service: ChallengeService,
): Promise<string> {
  const update = service.UpdateStatus!;
  const at = new Date(update.CompletedAt!);
  const runs = {
    image: service.Spec.Labels?.[IMAGE_LABEL] ?? row.image,
    pinned_image: service.Spec.TaskTemplate?.ContainerSpec?.Image ?? null,
  };
  if (update.State !== "rollback_completed") {
    const reason = update.Message ?? "";
    const patch = { ...runs, last_action_at: at, last_error: null, next_attempt_at: null };
    // An operator's restart is an update to Swarm (ForceUpdate): its restart is recorded already.
    if (state?.last_action !== "update") {
      await ctx.state.write(row.slug, "running", patch);
      return reason;
    }
    ctx.onAction(row.slug, "update", "ok");
    await ctx.state.write(
      row.slug,
      "running",
      { ...patch, observed: "starting", last_action: "update", failures: 0 },
      {
        kind: "runtime_updated",
        detail: {
          reason,
          from: state?.pinned_image ?? null,
          pinned_image: runs.pinned_image,
          service: service.ID,
          holder: ctx.holder,
        },
      },
    );
    return reason;
  }
  const reason = await rollbackReason(ctx, service);
  await recordRollback(ctx, row, state, {
    reason,
    restoredImage: runs.image,
    patch: { ...runs, observed: "starting" },
    detail: { kept: runs.pinned_image, service: service.ID },
    at,
  });
  return reason;
}

/**
 * Why Swarm rolled back: its UpdateStatus.Message ("rollback completed" once done) and how the
 * new spec's task ended (its image is not the one the service runs again).
 */
async function rollbackReason(ctx: StepContext, service: ChallengeService): Promise<string> {
  const message = service.UpdateStatus?.Message ?? "rolled back";
  const image = service.Spec.TaskTemplate?.ContainerSpec?.Image;
  const started = time(service.UpdateStatus?.StartedAt);
  const tasks = ctx.swarm ? await ctx.swarm.tasks(service) : [];
  // The new spec's tasks, newest first; one that ended on its own says why (the rest were shut down).
  const tried = tasks
    .filter((t) => t.Spec?.ContainerSpec?.Image !== image && time(t.CreatedAt) >= started)
    .sort((a, b) => time(b.CreatedAt) - time(a.CreatedAt));
  const failed = tried.find((t) => EXITED.has(t.Status?.State ?? "")) ?? tried[0];
  return failed ? `${message}: the new ${taskReason(failed)}` : message;
}

/**
 * Record each task that failed since the master last acted or recorded (Swarm restarts it by
 * its restart policy): a restart with the task's reason. True when one was recorded.
 */
export async function recordTaskFailures(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  service: ChallengeService,
  tasks: SwarmTask[],
): Promise<boolean> {
  const since = time(state?.last_action_at);
  const failed = tasks
    .filter((t) => EXITED.has(t.Status?.State ?? "") && time(t.Status?.Timestamp) > since)
    .sort((a, b) => time(a.Status?.Timestamp) - time(b.Status?.Timestamp));
  for (const task of failed) {
    ctx.onAction(row.slug, "restart", "ok");
    await ctx.state.write(
      row.slug,
      "running",
      {
        observed: "starting",
        container_id: service.ID,
        last_action: "restart",
        last_action_at: new Date(task.Status!.Timestamp!),
        last_error: taskReason(task),
        restarted: true,
      },
      {
        kind: "runtime_restarted",
        detail: {
          reason: taskReason(task),
          task: task.ID,
          by: "swarm",
          service: service.ID,
          holder: ctx.holder,
        },
      },
    );
  }
  return failed.length > 0;
}

/** Why a task stopped, in one line: Swarm's error, else its message. */
export function taskReason(task: SwarmTask | undefined): string {
  const exit = task?.Status?.ContainerStatus?.ExitCode;
  const err = task?.Status?.Err || task?.Status?.Message || "no reason given";
  return `task ${task?.Status?.State ?? "gone"}: ${err}${exit !== undefined && !err.includes(String(exit)) ? ` (exit ${exit})` : ""}`.slice(
    0,
    500,
  );
}
