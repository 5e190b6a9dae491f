import { dockerMessage } from "@platform/challenge-sdk/sandbox";
import type { Logger } from "@platform/core";
import type { ChallengeStore } from "../registry/challenge-store.js";
import type { Executor } from "./executor.js";
import type { RunLedger } from "./run-ledger.js";

/** What one reaper pass did. */
export interface ReapReport {
  /** Workloads removed, with why: orphan (no live row), deadline, disabled, abandoned (exited, nobody waiting). */
  removed: { name: string; reason: string }[];
  /** Rows closed because their workload no longer exists. */
  lost: string[];
  /** Helper objects (files volumes, staging containers, networks, configs) removed. */
  leftovers: number;
}

/** Time past a workload's deadline before the reaper removes it (its own runner should have). */
const DEADLINE_GRACE_SECONDS = 30;
/** Time a live row may exist before its workload does, when another process owns it. */
const CREATE_GRACE_SECONDS = 60;
/** Time an exited workload may wait for its runner to read and remove it. */
const ABANDONED_SECONDS = 60;
/** How long ended rows (and GPU lease history) are kept. */
const HISTORY_DAYS = 30;

/** What the reaper needs from the broker it belongs to. */
export interface ReaperContext {
  executor: Executor;
  ledger: RunLedger;
  store: ChallengeStore;
  log: Logger;
  /** This process, as the runner of the rows it admitted. */
  runner: string;
  /** Is this process running the workload right now? Those are never reaped. */
  isRunning: (name: string) => boolean;
  /** Seconds between passes; 0 reaps only at start. */
  intervalSeconds: number;
}

/**
 * Reconciles Docker with the ledger: removes this deployment's workloads that have no live row
 * (orphans of a crashed master), are past their deadline, belong to a disabled challenge, or
 * exited with nobody left to read them; closes rows whose workload is gone; removes leftover
 * helpers. Runs at start, then every `intervalSeconds`.
 */
export class BrokerReaper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private reaping: Promise<ReapReport> | undefined;
  private nextReap: Promise<ReapReport> | undefined;
  private stopped = false;

  constructor(private readonly context: ReaperContext) {}

  /**
   * One pass. Passes never overlap: a call during a pass gets the next pass, which starts when
   * it ends (so what the caller just did is seen), shared with any other caller meanwhile.
   */
  reap(): Promise<ReapReport> {
    if (this.reaping) {
      this.nextReap ??= this.reaping
        .catch(() => {})
        .then(() => {
          this.nextReap = undefined;
          return this.reap();
        });
      return this.nextReap;
    }
    this.reaping = this.reapOnce().finally(() => {
      this.reaping = undefined;
    });
    return this.reaping;
  }

  /** Reconcile now, then every interval; a failing pass is logged, never fatal. */
  start(): void {
    if (this.timer || this.stopped) return;
    const pass = () =>
      void this.reap().catch((error) =>
        this.context.log.warn("broker reaper pass failed", { reason: dockerMessage(error) }),
      );
    pass();
    if (this.context.intervalSeconds > 0) {
      this.timer = setInterval(pass, this.context.intervalSeconds * 1000);
      this.timer.unref();
    }
  }

  /** Stop reaping and wait for a pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.nextReap?.catch(() => {});
    await this.reaping?.catch(() => {});
  }

  private async reapOnce(): Promise<ReapReport> {
    const { executor, ledger, store, log, isRunning } = this.context;
    const report: ReapReport = { removed: [], lost: [], leftovers: 0 };
    const facts = await executor.facts();
    const masterId = await ledger.instanceId();
    const live = new Map((await ledger.live()).map((row) => [row.container_name, row]));
    const workloads = await executor.list(masterId);
    const disabled = new Set((await store.list(["disabled"])).map((row) => row.slug));
    const now = Date.now() / 1000;
    for (const workload of workloads) {
      let row = live.get(workload.name);
      // A row always exists before its workload: one admitted after the snapshot above is
      // read now, so a workload created meanwhile is never mistaken for an orphan.
      if (!row) {
        const fresh = await ledger.get(workload.name);
        if (fresh && fresh.ended_at === null) row = fresh;
      }
      let reason: string | null = null;
      if (!row) reason = "orphan";
      else if (workload.deadline + DEADLINE_GRACE_SECONDS < now) reason = "deadline";
      else if (disabled.has(workload.slug)) reason = "disabled";
      else if (
        !workload.running &&
        !isRunning(workload.name) &&
        workload.finishedAt &&
        now - workload.finishedAt.getTime() / 1000 > ABANDONED_SECONDS
      ) {
        reason = "abandoned";
      }
      if (!reason) continue;
      try {
        if (row) await ledger.finish(workload.name, "reaped");
        await executor.remove(workload.name);
        report.removed.push({ name: workload.name, reason });
        log.info("reaped a workload", { name: workload.name, challenge: workload.slug, reason });
      } catch (error) {
        log.warn("could not reap a workload", {
          name: workload.name,
          reason: dockerMessage(error),
        });
      }
    }
    const present = new Set(workloads.map((workload) => workload.name));
    for (const row of live.values()) {
      if (
        present.has(row.container_name) ||
        row.backend !== executor.kind ||
        row.engine_id !== facts.engineId
      )
        continue;
      if (isRunning(row.container_name)) continue;
      const age = now - row.started_at.getTime() / 1000;
      if (row.runner !== this.context.runner && age < CREATE_GRACE_SECONDS) continue;
      await ledger.finish(row.container_name, "lost");
      report.lost.push(row.container_name);
    }
    // Listed first, then checked: a helper's row exists before the helper does.
    const leftovers = await executor.leftovers(masterId);
    const stillLive = new Set((await ledger.live()).map((row) => row.container_name));
    for (const leftover of leftovers) {
      if (stillLive.has(leftover.workload) || isRunning(leftover.workload)) continue;
      try {
        await executor.removeLeftover(leftover);
        report.leftovers++;
      } catch (error) {
        log.debug("leftover not removed yet", { id: leftover.id, reason: dockerMessage(error) });
      }
    }
    await ledger.prune(HISTORY_DAYS);
    return report;
  }
}
