import { setTimeout as sleep } from "node:timers/promises";
import { HttpError } from "@platform/core";
import type Docker from "dockerode";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { challengeContainerName } from "../runtime/challenge-containers.js";
import type { StepContext } from "./challenge-step.js";
import { containerSpec, specHash } from "./desired-state.js";
import { containerUrl, isEngineUnreachable, SPEC_LABEL } from "./engine-view.js";
import type { RuntimeStateRow } from "./runtime-state-store.js";
import { drainingName, nextName } from "./update-names.js";
import { awaitReady } from "./update-readiness.js";
import { rollBack } from "./update-rollback.js";

/** One step of an update, as `platform challenge update` shows it. */
export interface UpdateProgress {
  step: "pinned" | "started" | "waiting" | "ready" | "switched" | "draining" | "stopped_old";
  detail: string;
}

/** How an update ended: the new container serves, or the old one still does (and why). */
export interface UpdateOutcome {
  status: "updated" | "rolled_back";
  detail: string;
  pinned_image: string | null;
}

export type ProgressSink = (progress: UpdateProgress) => void;

/**
 * Replace the challenge's running container `old` without a gap: pin the registry's image to
 * a digest, start the new container beside the old one, move the proxy to it once it answers
 * ready, then stop the old one when its in-flight requests have ended. A new container that is
 * not ready within `updateReadySeconds` is removed and the old one keeps serving: rolled back.
 * Throws only when the engine is out of reach.
 */
export async function updateBeside(
  ctx: StepContext,
  row: ChallengeRow,
  state: RuntimeStateRow | null,
  old: Docker.ContainerInspectInfo,
  reason: string,
  progress: ProgressSink = () => {},
): Promise<UpdateOutcome> {
  let pinned: string | null = null;
  try {
    pinned =
      state?.image === row.image && state.pinned_image
        ? state.pinned_image
        : await ctx.engine.pin(row.image);
    progress({ step: "pinned", detail: `${row.image} is ${pinned}` });
    await removeLeftovers(ctx, row.slug);
    const spec = specHash(containerSpec(row, pinned), ctx.masterKey);
    await ctx.runtime.restart(row, {
      image: pinned,
      labels: { [SPEC_LABEL]: spec },
      name: nextName(row.slug),
      publish: false,
    });
    progress({ step: "started", detail: `${nextName(row.slug)} started beside the old container` });
  } catch (error) {
    if (isEngineUnreachable(error)) throw error;
    return rollBack(ctx, row, state, old, pinned, messageOf(error));
  }
  const ready = await awaitReady(ctx, nextName(row.slug), progress);
  if (!ready.ok) return rollBack(ctx, row, state, old, pinned, ready.reason);
  progress({ step: "ready", detail: ready.detail });
  await switchOver(ctx, row, old, ready.info, ready.url, pinned, reason);
  progress({ step: "switched", detail: `the proxy now sends ${row.slug}'s requests to it` });
  await drainAndStop(ctx, old, progress);
  return { status: "updated", detail: `${row.slug} runs ${pinned}`, pinned_image: pinned };
}

/** A `-next` or `-old` container an interrupted update left behind. */
async function removeLeftovers(ctx: StepContext, slug: string): Promise<void> {
  for (const name of [nextName(slug), drainingName(slug)]) {
    const info = await ctx.engine.inspectName(name);
    if (info) await ctx.engine.remove(info.Id, 0);
  }
}

/** Hand the challenge's name and address to the new container; record the update. */
async function switchOver(
  ctx: StepContext,
  row: ChallengeRow,
  old: Docker.ContainerInspectInfo,
  next: Docker.ContainerInspectInfo,
  url: string,
  pinned: string,
  reason: string,
): Promise<void> {
  await ctx.engine.rename(old.Id, drainingName(row.slug));
  await ctx.engine.rename(next.Id, challengeContainerName(row.slug));
  // This replica's proxy uses the new address from the next request on (the write invalidates
  // its cache); another replica's within its cache's ttl.
  await ctx.store.update(row.slug, { internal_base_url: url });
  ctx.probeFailures.delete(old.Id);
  ctx.onAction(row.slug, "update", "ok");
  await ctx.state.write(
    row.slug,
    "running",
    {
      observed: "running",
      image: row.image,
      pinned_image: pinned,
      container_id: next.Id,
      last_action: "update",
      last_action_at: new Date(),
      last_error: null,
      next_attempt_at: null,
    },
    {
      kind: "runtime_updated",
      detail: {
        reason,
        from: old.Config.Image,
        pinned_image: pinned,
        container_id: next.Id,
        holder: ctx.holder,
      },
    },
  );
}

/** Wait (at most `drainSeconds`) for the old container's requests to end, then stop it. */
async function drainAndStop(
  ctx: StepContext,
  old: Docker.ContainerInspectInfo,
  progress: ProgressSink,
): Promise<void> {
  // Another replica's proxy may use the old address for as long as it caches a challenge.
  await sleep(ctx.proxyCacheMs + 100);
  const origin = new URL(containerUrl(old, ctx.network) ?? "http://0.0.0.0").origin;
  const deadline = Date.now() + ctx.config.drainSeconds * 1000;
  let inflight = ctx.inflight(origin);
  if (inflight > 0) progress({ step: "draining", detail: `${inflight} request(s) in flight` });
  while (inflight > 0 && Date.now() < deadline) {
    await sleep(100);
    inflight = ctx.inflight(origin);
  }
  // SIGTERM lets the old service finish what another replica may still have sent it.
  await ctx.engine.remove(old.Id, 10);
  progress({
    step: "stopped_old",
    detail: inflight > 0 ? `stopped with ${inflight} request(s) still open` : "stopped",
  });
}

function messageOf(error: unknown): string {
  const message = error instanceof HttpError ? error.message : (error as Error).message;
  return String(message).split("\n")[0]!.slice(0, 500);
}
