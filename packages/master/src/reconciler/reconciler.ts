import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { SandboxRefusal } from "@platform/challenge-sdk/sandbox";
import { HttpError, type Logger, type RuntimeOperationResponse, type Sql } from "@platform/core";
import type { ReconcilerConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import type { ChallengeContainers } from "../runtime/challenge-containers.js";
import { reconcileChallenge, type StepContext } from "./challenge-step.js";
import { containerSpec, desiredOf, isManaged, specHash } from "./desired-state.js";
import { type EngineView, isEngineUnreachable, SPEC_LABEL } from "./engine-view.js";
import { operatorUpdate } from "./operator-update.js";
import { ReconcilerLease } from "./reconciler-lease.js";
import type { ProgressSink } from "./rolling-update.js";
import type { RuntimeAction, RuntimeStateRow, RuntimeStateStore } from "./runtime-state-store.js";
import { swarmRestart } from "./swarm-operations.js";
import type { SwarmServices } from "./swarm-services.js";
import { reconcileService } from "./swarm-step.js";
import { isUpdateLeftover } from "./update-names.js";

/** What a {@link Reconciler} is built from. */
export interface ReconcilerOptions {
  config: ReconcilerConfig;
  /** The Docker network challenge containers join. */
  network: string;
  sql: Sql;
  masterKey: Buffer;
  store: ChallengeStore;
  state: RuntimeStateStore;
  engine: EngineView;
  /** Challenges run as its services (PLATFORM_CHALLENGE_BACKEND=swarm); absent: as containers. */
  swarm?: SwarmServices;
  runtime: ChallengeContainers;
  instanceId: () => Promise<string>;
  log: Logger;
  onAction?: (slug: string, action: RuntimeAction, outcome: "ok" | "failed") => void;
  /** Requests the proxy has in flight to an origin (an update drains them); default none. */
  inflight?: (origin: string) => number;
  /** How long a proxy replica caches a challenge's address; default 1 s. */
  proxyCacheMs?: number;
}

/** Challenges reconciled at once in a pass (a slow pull does not hold the others up). */
const CONCURRENCY = 4;
/** How long closing waits for the pass under way (ms). */
const STOP_WAIT_MS = 5_000;
/** How often the holder looks for a registry change made on any replica (ms). */
const WATCH_MS = 1_000;

/**
 * The reconciler: one master at a time (the holder of the `reconciler` lease) brings the
 * engine to the registry, on start, at every registry change and every `intervalSeconds`.
 * The others keep trying for the lease and take over when its holder stops or stalls.
 */
export class Reconciler {
  readonly lease: ReconcilerLease;
  private leader = false;
  private stopped = true;
  private timers: NodeJS.Timeout[] = [];
  private current: Promise<void> | null = null;
  private again = false;
  private fingerprint = "";
  private readonly probeFailures = new Map<string, number>();
  /** The step or update under way per challenge: one at a time each. */
  private readonly busy = new Map<string, Promise<unknown>>();

  constructor(private readonly options: ReconcilerOptions) {
    const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
    this.lease = new ReconcilerLease(options.sql, holder, options.config.leaseSeconds);
  }

  /** Where its state per challenge is kept (the admin views read it). */
  get state(): RuntimeStateStore {
    return this.options.state;
  }

  /** Does this master hold the lease (as of its last renewal)? */
  get isLeader(): boolean {
    return this.leader;
  }

  /** Take the lease if free, then reconcile; keep renewing, watching and passing. */
  async start(): Promise<void> {
    this.stopped = false;
    const { intervalSeconds, leaseSeconds } = this.options.config;
    const every = (ms: number, run: () => unknown) => {
      const timer = setInterval(run, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every((leaseSeconds * 1000) / 3, () => void this.renew());
    every(intervalSeconds * 1000, () => this.trigger());
    every(Math.min(WATCH_MS, intervalSeconds * 1000), () => void this.watch());
    await this.renew();
  }

  /** Stop passing, wait for the pass under way, and give the lease up for another replica. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    // A pass may be pulling a large image: closing waits a little for it, never a pull's length.
    // Once stopped it takes no further action (stillLeader answers false).
    await Promise.race([this.current, sleep(STOP_WAIT_MS, undefined, { ref: false })]);
    if (this.leader) await this.lease.release().catch(() => {});
    this.leader = false;
  }

  /** Ask for a pass now (one runs at a time; a request during one runs another after it). */
  trigger(): Promise<void> {
    this.again = true;
    this.current ??= this.loop().finally(() => {
      this.current = null;
    });
    return this.current;
  }

  private async loop(): Promise<void> {
    while (this.again && !this.stopped) {
      this.again = false;
      if (this.leader) await this.pass();
    }
  }

  private async renew(): Promise<void> {
    if (this.stopped) return;
    const was = this.leader;
    try {
      this.leader = await this.lease.acquire();
    } catch (error) {
      // Without the database we cannot know we still hold it: act as if we did not.
      this.leader = false;
      this.options.log.warn("reconciler lease: renewal failed", {
        error: (error as Error).message,
      });
    }
    if (this.leader === was) return;
    this.options.log.info(this.leader ? "reconciler lease taken" : "reconciler lease lost", {
      holder: this.lease.holder,
    });
    if (this.leader) void this.trigger();
  }

  // A change made through any replica bumps a row's updated_at or the row count.
  private async watch(): Promise<void> {
    if (!this.leader || this.stopped) return;
    try {
      const [row] = await this.options.sql<{ n: number; at: Date | null }[]>`
        select count(*)::int as n, max(updated_at) as at from challenges`;
      const next = `${row?.n}:${row?.at?.getTime()}`;
      if (next !== this.fingerprint) {
        this.fingerprint = next;
        void this.trigger();
      }
    } catch {
      // The database is away: the renewal notices and logs it.
    }
  }

  /** One pass over the whole registry; the engine being unreachable ends it early. */
  private async pass(): Promise<void> {
    const { log } = this.options;
    let error: string | null = null;
    try {
      const rows = await this.options.store.list();
      const states = new Map((await this.options.state.list()).map((s) => [s.slug, s]));
      const ctx = await this.stepContext();
      await ctx.swarm?.assertManager();
      const managed = rows.filter(isManaged);
      await inPool(managed, CONCURRENCY, (row) =>
        this.step(ctx, row, states.get(row.slug) ?? null),
      );
      await this.removeOrphans(ctx, rows);
    } catch (failure) {
      error = isEngineUnreachable(failure)
        ? `the Docker engine is unreachable: ${(failure as Error).message}`
        : `the last pass failed: ${(failure as Error).message}`;
      log.warn("reconciler pass failed", { error });
    }
    await this.lease.recordPass(error).catch(() => {});
  }

  private async step(ctx: StepContext, row: ChallengeRow, state: RuntimeStateRow | null) {
    // An operator's update holds this challenge: the next pass sees what it left.
    if (this.busy.has(row.slug)) return;
    try {
      const reconcile = ctx.swarm ? reconcileService : reconcileChallenge;
      await this.exclusive(row.slug, () => reconcile(ctx, row, state));
    } catch (error) {
      if (isEngineUnreachable(error)) throw error;
      this.options.log.warn("reconciler: a challenge's step failed", {
        slug: row.slug,
        error: (error as Error).message,
      });
    }
  }

  /** Run `work` once the challenge's step or update under way has ended. */
  exclusive<T>(slug: string, work: () => Promise<T>): Promise<T> {
    const next = (this.busy.get(slug) ?? Promise.resolve()).catch(() => {}).then(work);
    this.busy.set(slug, next);
    const release = () => {
      if (this.busy.get(slug) === next) this.busy.delete(slug);
    };
    next.then(release, release);
    return next;
  }

  /** What one step needs (an operator's update builds one too). */
  async stepContext(): Promise<StepContext> {
    const o = this.options;
    return {
      config: o.config,
      network: o.network,
      masterKey: o.masterKey,
      store: o.store,
      state: o.state,
      engine: o.engine,
      swarm: o.swarm ?? null,
      runtime: o.runtime,
      instanceId: await o.instanceId(),
      holder: this.lease.holder,
      stillLeader: () => this.renewBeforeAction(),
      probeFailures: this.probeFailures,
      onAction: o.onAction ?? (() => {}),
      inflight: o.inflight ?? (() => 0),
      proxyCacheMs: o.proxyCacheMs ?? 1_000,
    };
  }

  private async renewBeforeAction(): Promise<boolean> {
    if (this.stopped) return false;
    await this.renew();
    return this.leader;
  }

  // Containers of this deployment whose challenge left the registry.
  private async removeOrphans(ctx: StepContext, rows: ChallengeRow[]): Promise<void> {
    const known = new Set(rows.map((row) => row.slug));
    if (ctx.swarm) return this.removeSwarmOrphans(ctx, ctx.swarm, known);
    for (const { slug, id, name } of await ctx.engine.owned(ctx.instanceId)) {
      // A `-next` or `-old` container no update is using: a master stopped in the middle of one.
      const leftover = isUpdateLeftover(slug, name) && !this.busy.has(slug);
      if ((known.has(slug) && !leftover) || !(await ctx.stillLeader())) continue;
      await ctx.engine.remove(id);
      this.options.log.info(
        leftover
          ? "reconciler: removed a container an interrupted update left"
          : "reconciler: removed the container of an unregistered challenge",
        { slug, container: name },
      );
    }
  }

  /**
   * On the Swarm backend: services of this deployment whose challenge left the registry, and
   * every plain challenge container of it (the engine backend's, before the switch to Swarm).
   */
  private async removeSwarmOrphans(
    ctx: StepContext,
    swarm: SwarmServices,
    known: Set<string>,
  ): Promise<void> {
    for (const { slug, id } of await swarm.owned(ctx.instanceId)) {
      if (known.has(slug) || !(await ctx.stillLeader())) continue;
      await swarm.remove(id);
      this.options.log.info("reconciler: removed the service of an unregistered challenge", {
        slug,
      });
    }
    for (const { slug, id, name } of await ctx.engine.owned(ctx.instanceId)) {
      if (!(await ctx.stillLeader())) return;
      await ctx.engine.remove(id);
      this.options.log.info("reconciler: removed a challenge container (challenges run on Swarm)", {
        slug,
        container: name,
      });
    }
  }

  /** The operator's update (POST …/update): see operator-update.ts. */
  async updateNow(
    slug: string,
    image: string,
    progress: ProgressSink,
  ): Promise<RuntimeOperationResponse> {
    const ctx = await this.stepContext();
    const result = await this.exclusive(slug, () =>
      operatorUpdate(ctx, this.leader, slug, image, progress),
    );
    if (result.status === "pending") void this.trigger();
    return result;
  }

  /**
   * The operator's restart (POST …/restart) while the reconciler runs: replace the container
   * now with the pinned image, and record it. Only an active challenge runs (409 otherwise).
   */
  restartNow(slug: string): Promise<RuntimeOperationResponse> {
    // Never while an update of it runs (or a pass's step): each would replace the other's work.
    return this.exclusive(slug, () => this.restartExclusive(slug));
  }

  private async restartExclusive(slug: string): Promise<RuntimeOperationResponse> {
    const row = await this.options.store.get(slug);
    if (desiredOf(row) !== "running" || !isManaged(row))
      throw new HttpError(
        409,
        "challenge_not_active",
        isManaged(row)
          ? `Challenge "${slug}" is ${row.status}: the reconciler runs only active challenges; activate it first`
          : `Challenge "${slug}" is not run by this master (metadata.managed is false)`,
      );
    if (this.options.swarm) return swarmRestart(await this.stepContext(), row);
    const state = await this.options.state.find(slug);
    let pinned = state?.image === row.image ? state.pinned_image : null;
    try {
      pinned ??= await this.options.engine.pin(row.image);
    } catch (error) {
      if (!(error instanceof SandboxRefusal)) throw error;
      throw new HttpError(502, "runtime_failed", error.message, {
        extra: { slug, operation: "restart", status: "failed" },
      });
    }
    const spec = specHash(containerSpec(row, pinned), this.options.masterKey);
    const result = await this.options.runtime.restart(row, {
      image: pinned,
      labels: { [SPEC_LABEL]: spec },
    });
    const info = await this.options.engine.inspect(slug);
    await this.options.state.write(
      slug,
      "running",
      {
        observed: "starting",
        image: row.image,
        pinned_image: pinned,
        container_id: info?.Id ?? null,
        last_action: "restart",
        last_action_at: new Date(),
        last_error: null,
      },
      { kind: "runtime_restarted", detail: { reason: "operator", pinned_image: pinned } },
    );
    return result;
  }
}

/** Run `work` on every item, at most `limit` at once; the first rejection rejects. */
async function inPool<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
