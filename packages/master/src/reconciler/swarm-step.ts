import { PLATFORM_LABELS } from "@platform/challenge-sdk/sandbox";
import type { ChallengeRow } from "../registry/challenge-row.js";
import {
  challengeContainerName,
  challengePort,
  challengeVolumes,
  PORT_LABEL,
} from "../runtime/challenge-containers.js";
import type { SwarmTask } from "../swarm/swarm-tasks.js";
import { recordStopped, type StepContext } from "./challenge-step.js";
import { desiredOf, replicasOf, serviceSpec, specHash } from "./desired-state.js";
import { isEngineUnreachable, SPEC_LABEL } from "./engine-view.js";
import { probeReadiness } from "./readiness-probe.js";
import { restartDelaySeconds } from "./restart-backoff.js";
import type { RuntimeStatePatch, RuntimeStateRow } from "./runtime-state-store.js";
import { EXITED, recordSwarmOutcome, recordTaskFailures, taskReason } from "./swarm-outcomes.js";
import { challengeServiceSpec } from "./swarm-service-spec.js";
import {
  type ChallengeService,
  IMAGE_LABEL,
  type SwarmServices,
  TASK_RUNTIME,
} from "./swarm-services.js";

const time = (at: string | Date | null | undefined) => (at ? new Date(at).getTime() : 0);

/** The swarm of a step on the Swarm backend (the reconciler gives it one there). */
export function swarmOf(ctx: StepContext): SwarmServices {
  if (!ctx.swarm) throw new Error("the Swarm backend has no swarm");
  return ctx.swarm;
}

/**
 * Bring one challenge's Swarm service to its desired state: remove it when the challenge
 * should not run, create it when missing, update its spec when the registry's differs (Swarm
 * rolls the tasks, and rolls back itself), and report what Swarm did and what runs. Restarting
 * a task that exited is Swarm's (restart policy "any"); the master records it.
 */
export async function reconcileService(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
): Promise<void> {
  const swarm = swarmOf(ctx);
  const desired = desiredOf(row);
  const service = await swarm.inspect(row.slug);
  if (service && service.Spec.Labels?.[PLATFORM_LABELS.master] !== ctx.instanceId) {
    const error = `A service named ${challengeContainerName(row.slug)} exists and does not belong to this master; remove it`;
    if (state?.observed !== "conflict" || state.last_error !== error)
      await ctx.state.write(row.slug, desired, { observed: "conflict", last_error: error });
    return;
  }
  if (desired === "stopped") return settleStopped(ctx, row, state, service);
  if (!service) return deploy(ctx, row, state, null, state?.container_id ? "restart" : "start");
  const update = service.UpdateStatus;
  if (update?.State === "updating" || update?.State === "rollback_started") {
    if (state?.observed !== "starting")
      await ctx.state.write(row.slug, "running", { observed: "starting" });
    return;
  }
  // What Swarm finished since the master last looked (an update, or its rollback) is recorded once.
  if (update?.CompletedAt && time(update.CompletedAt) > time(state?.last_action_at)) {
    await recordSwarmOutcome(ctx, row, state, service);
    return;
  }
  const spec = fingerprint(ctx, row, state);
  if (!spec || service.Spec.Labels?.[SPEC_LABEL] !== spec) {
    if (!state?.next_attempt_at || state.next_attempt_at.getTime() <= Date.now())
      return deploy(ctx, row, state, service, "update");
  }
  return observe(ctx, row, state, service);
}

/**
 * The fingerprint of the service the record asks for, or null when it cannot be known without
 * deploying: a new image to pin, or a record Swarm cannot run (bad metadata.replicas), which the
 * deploy then records as runtime_failed.
 */
export function fingerprint(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
): string | null {
  const pinned = state?.image === row.image ? state.pinned_image : null;
  try {
    return pinned ? specHash(serviceSpec(row, pinned), ctx.masterKey) : null;
  } catch {
    return null;
  }
}

/** The tasks that run now (what serves), and what the master reports of them. */
async function observe(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  service: ChallengeService,
): Promise<void> {
  const swarm = swarmOf(ctx);
  const tasks = await swarm.tasks(service);
  if (await recordTaskFailures(ctx, row, state, service, tasks)) return;
  const running = tasks.filter(
    (t) => t.Status?.State === "running" && t.DesiredState === "running",
  );
  const replicas = service.Spec.Mode?.Replicated?.Replicas ?? 1;
  const url = await swarm.address(service, running);
  if (url && row.internal_base_url !== url)
    await ctx.store.update(row.slug, { internal_base_url: url });
  const patch: RuntimeStatePatch = { container_id: service.ID };
  if (running.length === 0) {
    const last = newest(tasks);
    const failed = EXITED.has(last?.Status?.State ?? "");
    patch.observed = failed ? "exited" : "starting";
    if (failed) patch.last_error = taskReason(last);
  } else {
    const probe = url
      ? await probeReadiness(url)
      : { ready: false, detail: "no address of a task" };
    const started = Math.min(...running.map((t) => time(t.Status?.Timestamp)));
    const young = (Date.now() - started) / 1000 < ctx.config.startGraceSeconds;
    if (probe.ready && running.length >= replicas) patch.observed = "running";
    else if (probe.ready || young) patch.observed = "starting";
    else {
      patch.observed = "unhealthy";
      patch.last_error = `unhealthy: ${probe.detail}`;
    }
    if (patch.observed === "running" && state?.last_error) patch.last_error = null;
  }
  if (!state || Object.entries(patch).some(([k, v]) => state[k as keyof RuntimeStateRow] !== v))
    await ctx.state.write(row.slug, "running", patch);
}

function newest(tasks: SwarmTask[]): SwarmTask | undefined {
  return [...tasks].sort((a, b) => time(b.Status?.Timestamp) - time(a.Status?.Timestamp))[0];
}

/** Create the service, or give it the registry's spec; recorded, and retried after a backoff on failure. */
export async function deploy(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  service: ChallengeService | null,
  action: "start" | "restart" | "update",
): Promise<void> {
  if (!service && state?.next_attempt_at && state.next_attempt_at.getTime() > Date.now()) return;
  if (!(await ctx.stillLeader())) return;
  const swarm = swarmOf(ctx);
  const reason = service ? "the registry record changed" : "no service";
  try {
    const pinned =
      state?.image === row.image && state.pinned_image
        ? state.pinned_image
        : await ctx.engine.pin(row.image);
    const spec = await desiredService(ctx, row, pinned);
    if (service) await swarm.update(service, spec);
    const id = service ? service.ID : await swarm.create(spec);
    ctx.onAction(row.slug, action === "update" ? "update" : action, "ok");
    const patch: RuntimeStatePatch = {
      observed: "starting",
      container_id: id,
      last_action: action,
      last_action_at: new Date(),
      last_error: null,
    };
    if (service) {
      // The image and the digest become the state's when Swarm completes the update.
      await ctx.state.write(row.slug, "running", patch);
      return;
    }
    await ctx.state.write(
      row.slug,
      "running",
      { ...patch, image: row.image, pinned_image: pinned, next_attempt_at: null },
      {
        kind: action === "start" ? "runtime_started" : "runtime_restarted",
        detail: { reason, service: id, pinned_image: pinned, holder: ctx.holder },
      },
    );
  } catch (error) {
    if (isEngineUnreachable(error)) throw error;
    const message = String((error as Error).message)
      .split("\n")[0]!
      .slice(0, 500);
    const failures = (state?.failures ?? 0) + 1;
    const delay = restartDelaySeconds(
      failures,
      ctx.config.backoffSeconds,
      ctx.config.backoffMaxSeconds,
    );
    ctx.onAction(row.slug, action, "failed");
    await ctx.state.write(
      row.slug,
      "running",
      {
        observed: service ? (state?.observed ?? "unknown") : "failed",
        last_action: action,
        last_action_at: new Date(),
        last_error: message,
        failures,
        next_attempt_at: new Date(Date.now() + delay * 1000),
      },
      { kind: "runtime_failed", detail: { action, reason, error: message, holder: ctx.holder } },
    );
  }
}

/** The service the registry asks for, pinned to `pinned` and fingerprinted. */
export async function desiredService(ctx: StepContext, row: ChallengeRow, pinned: string) {
  const swarm = swarmOf(ctx);
  const image = await ctx.engine.image(pinned);
  const port = challengePort(row, image);
  const owner = { [PLATFORM_LABELS.challenge]: row.slug, [PLATFORM_LABELS.master]: ctx.instanceId };
  const labels = {
    ...owner,
    [PLATFORM_LABELS.runtime]: "challenge",
    [PORT_LABEL]: String(port),
    [SPEC_LABEL]: specHash(serviceSpec(row, pinned), ctx.masterKey),
    [IMAGE_LABEL]: row.image,
  };
  const volumes = challengeVolumes(row);
  return challengeServiceSpec({
    name: challengeContainerName(row.slug),
    image: pinned,
    env: ctx.runtime.environment(row, port),
    labels,
    taskLabels: { ...owner, [PLATFORM_LABELS.runtime]: TASK_RUNTIME },
    network: await swarm.ensureNetwork(),
    replicas: replicasOf(row),
    volumes,
    resources: row.resources as ChallengeResourcesLike,
    healthcheck: await swarm.healthchecks.forImage(pinned, port, ctx.config.startGraceSeconds),
    nodeId: volumes.length > 0 ? await swarm.nodeId() : null,
    monitorSeconds: ctx.config.updateReadySeconds,
  });
}

type ChallengeResourcesLike = {
  cpus?: number;
  memory_mb?: number;
  gpus?: number;
  pids_limit?: number;
};

async function settleStopped(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  service: ChallengeService | null,
): Promise<void> {
  if (!service) {
    if (state?.observed !== "stopped" || state.container_id)
      await ctx.state.write(row.slug, "stopped", { observed: "stopped", container_id: null });
    return;
  }
  if (!(await ctx.stillLeader())) return;
  await swarmOf(ctx).remove(service.ID);
  await recordStopped(ctx, row, { service: service.ID });
}
