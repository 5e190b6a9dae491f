import { PLATFORM_LABELS } from "@platform/challenge-sdk/sandbox";
import { HttpError } from "@platform/core";
import type Docker from "dockerode";
import type { ReconcilerConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import type { ChallengeContainers } from "../runtime/challenge-containers.js";
import { challengeContainerName } from "../runtime/challenge-containers.js";
import { containerSpec, desiredOf, specHash } from "./desired-state.js";
import { containerUrl, type EngineView, isEngineUnreachable, SPEC_LABEL } from "./engine-view.js";
import { probeReadiness } from "./readiness-probe.js";
import { restartDelaySeconds, STABLE_SECONDS } from "./restart-backoff.js";
import { updateBeside } from "./rolling-update.js";
import type {
  ObservedRuntime,
  RuntimeAction,
  RuntimeStatePatch,
  RuntimeStateRow,
  RuntimeStateStore,
} from "./runtime-state-store.js";
import type { SwarmServices } from "./swarm-services.js";

/** What one challenge's step needs: the engine, the registry, the state and the settings. */
export interface StepContext {
  config: ReconcilerConfig;
  network: string;
  masterKey: Buffer;
  store: ChallengeStore;
  state: RuntimeStateStore;
  engine: EngineView;
  /** The swarm challenges run on, with PLATFORM_CHALLENGE_BACKEND=swarm (swarm-step.ts); else null. */
  swarm: SwarmServices | null;
  runtime: ChallengeContainers;
  instanceId: string;
  holder: string;
  /** Renew the lease right before acting: false when this master no longer holds it. */
  stillLeader: () => Promise<boolean>;
  /** Failed readiness probes in a row, by container id (this holder's memory). */
  probeFailures: Map<string, number>;
  onAction: (slug: string, action: RuntimeAction, outcome: "ok" | "failed") => void;
  /** Requests this master's proxy has in flight to an origin (an update drains them). */
  inflight: (origin: string) => number;
  /** How long a proxy replica caches a challenge's address (PLATFORM_PROXY_CACHE_MS). */
  proxyCacheMs: number;
}

const ACTION_EVENT = {
  start: "runtime_started",
  restart: "runtime_restarted",
  replace: "runtime_replaced",
  stop: "runtime_stopped",
} as const;

const seconds = (since: string | Date | null | undefined) =>
  since ? (Date.now() - new Date(since).getTime()) / 1000 : Number.POSITIVE_INFINITY;

/** The message of a failure, one line, without Docker's wrapping. */
function reasonOf(error: unknown): string {
  const message = error instanceof HttpError ? error.message : (error as Error).message;
  return String(message).split("\n")[0]!.slice(0, 500);
}

/**
 * Bring one challenge to its desired state: stop what should not run, start what is missing,
 * restart what crashed or stays unready (with backoff), replace what no longer matches the
 * registry. Throws only when the engine is out of reach (the whole pass stops then).
 */
export async function reconcileChallenge(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
): Promise<void> {
  const desired = desiredOf(row);
  const info = await ctx.engine.inspect(row.slug);
  if (info && info.Config.Labels?.[PLATFORM_LABELS.master] !== ctx.instanceId) {
    const error = `A container named ${challengeContainerName(row.slug)} exists and does not belong to this master; remove it`;
    if (state?.observed !== "conflict" || state.last_error !== error)
      await ctx.state.write(row.slug, desired, { observed: "conflict", last_error: error });
    return;
  }
  if (desired === "stopped") return settleStopped(ctx, row, state, info);
  if (!info) {
    const action = state?.container_id ? "restart" : "start";
    return act(ctx, row, state, { action, reason: "no container", observed: "missing" });
  }
  if (!info.State.Running) {
    const reason = `exited with code ${info.State.ExitCode}${info.State.OOMKilled ? " (out of memory)" : ""}`;
    return act(ctx, row, state, { action: "restart", reason, observed: "exited" });
  }
  const pinned = state?.image === row.image ? state.pinned_image : null;
  const spec = pinned ? specHash(containerSpec(row, pinned), ctx.masterKey) : null;
  // A running container of another spec is updated beside itself, with rollback.
  if (!spec || info.Config.Labels?.[SPEC_LABEL] !== spec)
    return replaceBeside(
      ctx,
      row,
      state,
      info,
      pinned ? "the registry record changed" : "new image",
    );
  return checkRunning(ctx, row, state, info);
}

/** An update of a running container (rolling-update.ts), unless a rollback's backoff says wait. */
async function replaceBeside(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  info: Docker.ContainerInspectInfo,
  reason: string,
): Promise<void> {
  if (state?.next_attempt_at && state.next_attempt_at.getTime() > Date.now()) return;
  if (!(await ctx.stillLeader())) return;
  await updateBeside(ctx, row, state, info, reason);
}

async function settleStopped(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  info: Docker.ContainerInspectInfo | null,
): Promise<void> {
  if (!info) {
    if (state?.observed !== "stopped" || state.container_id)
      await ctx.state.write(row.slug, "stopped", { observed: "stopped", container_id: null });
    return;
  }
  if (!(await ctx.stillLeader())) return;
  await ctx.engine.remove(info.Id);
  ctx.probeFailures.delete(info.Id);
  await recordStopped(ctx, row, { container: info.Id });
}

/**
 * Records that the reconciler stopped what ran for a challenge that should not run (its status):
 * the state reset and a `runtime_stopped` event naming what was removed.
 */
export async function recordStopped(
  ctx: StepContext,
  row: ChallengeRow,
  removed: { container: string } | { service: string },
): Promise<void> {
  ctx.onAction(row.slug, "stop", "ok");
  await ctx.state.write(
    row.slug,
    "stopped",
    {
      observed: "stopped",
      container_id: null,
      last_action: "stop",
      last_action_at: new Date(),
      last_error: null,
      failures: 0,
      next_attempt_at: null,
    },
    {
      kind: "runtime_stopped",
      detail: { reason: `status ${row.status}`, ...removed, holder: ctx.holder },
    },
  );
}

/** A running container of the current spec: keep its address current, probe it, count failures. */
async function checkRunning(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  info: Docker.ContainerInspectInfo,
): Promise<void> {
  const url = containerUrl(info, ctx.network);
  if (url && row.internal_base_url !== url)
    await ctx.store.update(row.slug, { internal_base_url: url });
  const probe = url
    ? await probeReadiness(url, info.State.Health?.Status)
    : { ready: false, detail: `no address on network ${ctx.network}` };
  const uptime = seconds(info.State.StartedAt);
  let observed: ObservedRuntime;
  if (probe.ready) {
    ctx.probeFailures.delete(info.Id);
    observed = "running";
  } else if (uptime < ctx.config.startGraceSeconds) {
    observed = "starting";
  } else {
    const failures = (ctx.probeFailures.get(info.Id) ?? 0) + 1;
    ctx.probeFailures.set(info.Id, failures);
    if (failures >= ctx.config.unhealthyAfter) {
      // This container is about to be replaced: its count goes with it.
      ctx.probeFailures.delete(info.Id);
      return act(ctx, row, state, {
        action: "restart",
        reason: `unhealthy: ${probe.detail}`,
        observed: "unhealthy",
      });
    }
    observed = "unhealthy";
  }
  const patch: RuntimeStatePatch = { observed, container_id: info.Id };
  if (observed === "running" && state?.last_error) patch.last_error = null;
  if (observed === "running" && (state?.failures ?? 0) > 0 && uptime >= STABLE_SECONDS)
    patch.failures = 0;
  if (changed(state, patch)) await ctx.state.write(row.slug, "running", patch);
}

function changed(state: RuntimeStateRow | null, patch: RuntimeStatePatch): boolean {
  if (!state) return true;
  return Object.entries(patch).some(
    ([key, value]) => state[key as keyof RuntimeStateRow] !== value,
  );
}

/**
 * Start, restart or replace the challenge's container, unless its backoff says wait. A start
 * that fails is recorded (runtime_failed) and waits its backoff; the engine being unreachable
 * is not the challenge's failure and is thrown to the pass.
 */
async function act(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  { action, reason, observed }: PlannedAction,
): Promise<void> {
  if (state?.next_attempt_at && state.next_attempt_at.getTime() > Date.now()) {
    // Waiting out the backoff: what is seen now is recorded, a failed start stays "failed".
    if (state.observed !== observed && state.observed !== "failed")
      await ctx.state.write(row.slug, "running", { observed });
    return;
  }
  if (!(await ctx.stillLeader())) return;
  // A replacement is not a failure; a restart for cause is, and so it grows the backoff.
  const failures = (state?.failures ?? 0) + (action === "restart" ? 1 : 0);
  try {
    const started = await startContainer(ctx, row, state);
    ctx.onAction(row.slug, action, "ok");
    await ctx.state.write(
      row.slug,
      "running",
      {
        ...started,
        observed: "starting",
        last_action: action,
        last_action_at: new Date(),
        last_error: null,
        failures,
        next_attempt_at: new Date(Date.now() + delayMs(ctx, failures)),
        restarted: action === "restart",
      },
      { kind: ACTION_EVENT[action], detail: { reason, ...started, holder: ctx.holder } },
    );
  } catch (error) {
    if (isEngineUnreachable(error)) throw error;
    await recordFailure(ctx, row, action, reason, failures + (action === "restart" ? 0 : 1), error);
  }
}

/** What a step decided to do, why, and what it saw. */
interface PlannedAction {
  action: "start" | "restart" | "replace";
  reason: string;
  observed: ObservedRuntime;
}

const delayMs = (ctx: StepContext, failures: number) =>
  restartDelaySeconds(failures, ctx.config.backoffSeconds, ctx.config.backoffMaxSeconds) * 1000;

/** Pin the image (when the registry's changed), then build and start the container. */
async function startContainer(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
): Promise<{ image: string; pinned_image: string; container_id: string | null }> {
  const pinned =
    state?.image === row.image && state.pinned_image
      ? state.pinned_image
      : await ctx.engine.pin(row.image);
  const spec = specHash(containerSpec(row, pinned), ctx.masterKey);
  await ctx.runtime.restart(row, { image: pinned, labels: { [SPEC_LABEL]: spec } });
  const info = await ctx.engine.inspect(row.slug);
  return { image: row.image, pinned_image: pinned, container_id: info?.Id ?? null };
}

async function recordFailure(
  ctx: StepContext,
  row: ChallengeRow,
  action: RuntimeAction,
  reason: string,
  failures: number,
  error: unknown,
): Promise<void> {
  const message = reasonOf(error);
  ctx.onAction(row.slug, action, "failed");
  await ctx.state.write(
    row.slug,
    "running",
    {
      observed: "failed",
      last_action: action,
      last_action_at: new Date(),
      last_error: message,
      failures,
      next_attempt_at: new Date(Date.now() + delayMs(ctx, failures)),
    },
    { kind: "runtime_failed", detail: { action, reason, error: message, holder: ctx.holder } },
  );
}
