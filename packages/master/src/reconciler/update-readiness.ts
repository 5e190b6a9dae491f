import { setTimeout as sleep } from "node:timers/promises";
import type Docker from "dockerode";
import type { StepContext } from "./challenge-step.js";
import { containerUrl } from "./engine-view.js";
import { probeReadiness } from "./readiness-probe.js";
import type { ProgressSink } from "./rolling-update.js";

const POLL_MS = 500;

/** The new container is ready (where it answers), or why it will not be. */
export type Readiness =
  | { ok: true; info: Docker.ContainerInspectInfo; url: string; detail: string }
  | { ok: false; reason: string };

/** Probe the new container until it is ready, exits, or its time is up. */
export async function awaitReady(
  ctx: StepContext,
  name: string,
  progress: ProgressSink,
): Promise<Readiness> {
  const deadline = Date.now() + ctx.config.updateReadySeconds * 1000;
  let last = "not probed yet";
  while (Date.now() < deadline) {
    const info = await ctx.engine.inspectName(name);
    if (!info) return { ok: false, reason: "the new container disappeared before it was ready" };
    // Docker's restart policy may already be restarting it: it exited all the same.
    if (!info.State.Running || info.State.Restarting || info.RestartCount > 0)
      return {
        ok: false,
        reason: `the new container exited with code ${info.State.ExitCode}${info.State.OOMKilled ? " (out of memory)" : ""} before it was ready`,
      };
    const url = containerUrl(info, ctx.network);
    const probe = url
      ? await probeReadiness(url, info.State.Health?.Status)
      : { ready: false, detail: `no address on network ${ctx.network}` };
    if (probe.ready && url) return { ok: true, info, url, detail: probe.detail };
    if (probe.detail !== last) progress({ step: "waiting", detail: probe.detail });
    last = probe.detail;
    await sleep(POLL_MS);
  }
  return {
    ok: false,
    reason: `the new container was not ready within ${ctx.config.updateReadySeconds} s (last probe: ${last})`,
  };
}
