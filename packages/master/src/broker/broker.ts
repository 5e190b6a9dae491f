import { randomBytes, randomUUID } from "node:crypto";
import { WORKSPACE } from "@platform/challenge-sdk";
import {
  type BrokerCleanupRequest,
  type BrokerContainer,
  type BrokerRunRequest,
  type BrokerRunResponse,
  HttpError,
  type Logger,
  type Sql,
} from "@platform/core";
import type Docker from "dockerode";
import type { BrokerConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import { validateFiles } from "./broker-files.js";
import { createDockerClient, dockerMessage } from "./docker-client.js";
import { EngineExecutor } from "./engine-executor.js";
import {
  type EngineFacts,
  type Executor,
  ExecutorError,
  type WorkloadResult,
  type WorkloadSpec,
} from "./executor.js";
import {
  checkLabels,
  enforceBrokerImage,
  refuseWeakening,
  resolveLimits,
  resolveUser,
} from "./hardening.js";
import { type GpuLease, RunLedger, type RunStatus } from "./run-ledger.js";
import { SWARM_MAX_FILE_BYTES, SwarmExecutor } from "./swarm-executor.js";

/** What the broker is built from. */
export interface BrokerOptions {
  config: BrokerConfig;
  sql: Sql;
  store: ChallengeStore;
  log: Logger;
  /** A Docker client (default: from DOCKER_HOST or the local socket). */
  docker?: Docker;
}

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

function workloadName(slug: string, jobId: string, kind: Executor["kind"]): string {
  const suffix = randomBytes(4).toString("hex");
  if (kind === "engine") return `platform-${slug}-${jobId}-${suffix}`;
  // Swarm names are DNS labels (63 characters, letters, digits and "-"), with room for "-f<n>" configs.
  const job = jobId.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  return `${`platform-${slug}-${job}`.slice(0, 46).replace(/-+$/, "")}-${suffix}`;
}

const EXECUTOR_STATUS: Record<ExecutorError["code"], number> = {
  image_unavailable: 400,
  executor_error: 400,
  gpu_unavailable: 400,
};

/**
 * The container broker: validates a challenge's workload against the hardened defaults,
 * admits it against the challenge's quota in Postgres, runs it on the executor (engine or
 * swarm), and reaps whatever a crash or a stuck run leaves behind.
 */
export class Broker {
  readonly ledger: RunLedger;
  readonly executor: Executor;
  readonly config: BrokerConfig;
  /** This process, as the runner of the rows it admits. */
  readonly runner = randomUUID();
  private readonly store: ChallengeStore;
  private readonly log: Logger;
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<unknown> }>();
  private reaperTimer: ReturnType<typeof setInterval> | undefined;
  private reaping: Promise<ReapReport> | undefined;
  private nextReap: Promise<ReapReport> | undefined;
  private stopped = false;

  constructor(options: BrokerOptions) {
    this.config = options.config;
    this.store = options.store;
    this.log = options.log;
    this.ledger = new RunLedger(options.sql);
    const docker = options.docker ?? createDockerClient();
    const executorOptions = { pullTimeoutMs: options.config.pullTimeoutMs };
    this.executor =
      options.config.backend === "swarm"
        ? new SwarmExecutor(docker, executorOptions)
        : new EngineExecutor(docker, executorOptions);
  }

  /** The engine's facts, or 503 `docker_unavailable` when no engine answers. */
  async facts(): Promise<EngineFacts> {
    try {
      return await this.executor.facts();
    } catch (error) {
      this.log.warn("docker engine unavailable", { reason: dockerMessage(error) });
      // An engine that answers but cannot serve this backend (swarm, not a manager) says why.
      const detail =
        error instanceof ExecutorError
          ? error.message
          : "The container engine is not reachable; try again later";
      throw new HttpError(503, "docker_unavailable", detail, {
        headers: { "retry-after": "10" },
      });
    }
  }

  /** Can this master run GPU workloads? Config wins; otherwise an nvidia runtime in `docker info`. */
  async gpuHost(): Promise<boolean> {
    if (this.config.gpuHost !== undefined) return this.config.gpuHost;
    return (await this.facts()).nvidia;
  }

  /** Validate, admit and run one workload for `challenge`; the answer once it has ended. */
  async run(
    challenge: ChallengeRow,
    request: BrokerRunRequest,
    signal?: AbortSignal,
  ): Promise<BrokerRunResponse> {
    const started = Date.now();
    // Everything a request can get wrong is refused before anything is written or created.
    refuseWeakening(request);
    checkLabels(request.labels);
    enforceBrokerImage(request.image, this.config.allowedImagePrefixes);
    const limits = resolveLimits(request.limits, this.config);
    const caps = { ...this.config.files };
    if (this.executor.kind === "swarm")
      caps.maxFileBytes = Math.min(caps.maxFileBytes, SWARM_MAX_FILE_BYTES);
    const files = validateFiles(request.files, caps);
    const empty =
      this.executor.kind === "swarm" ? files.findIndex((file) => file.data.length === 0) : -1;
    if (empty >= 0) {
      throw new HttpError(
        400,
        "invalid_file",
        `files[${empty}]: the swarm backend cannot ship an empty file (a swarm config holds 1 byte or more)`,
        {
          extra: { index: empty },
        },
      );
    }
    const gpus = request.gpus ?? 0;
    if (gpus > 0 && !(await this.gpuHost())) {
      throw new HttpError(
        400,
        "gpu_unavailable",
        `This master has no GPU host: a run asking for ${gpus} GPU(s) is refused, never run on CPU`,
      );
    }
    if (gpus > this.config.maxGpus) {
      // Never admissible, so not a 429 a client would retry.
      throw new HttpError(
        400,
        "limit_exceeded",
        `gpus: ${gpus} is above the challenge's GPU quota of ${this.config.maxGpus}`,
        {
          extra: { field: "gpus", maximum: this.config.maxGpus },
        },
      );
    }
    const facts = await this.facts();
    const image = await this.prepare(request.image);
    const masterId = await this.ledger.instanceId();
    const name = workloadName(challenge.slug, request.job_id, this.executor.kind);
    const timeoutSeconds = request.timeout_seconds ?? 3600;
    const deadline = Math.ceil(Date.now() / 1000) + timeoutSeconds;
    const { gpuDevices } = await this.ledger.admit(
      {
        containerName: name,
        slug: challenge.slug,
        jobId: request.job_id,
        backend: this.executor.kind,
        engineId: facts.engineId,
        runner: this.runner,
        image: request.image,
        gpus,
        deadline: new Date(deadline * 1000),
      },
      {
        maxConcurrent: this.config.maxConcurrent,
        maxGpus: this.config.maxGpus,
        gpuDevices: this.executor.kind === "engine" ? this.config.gpuDevices : [],
      },
    );
    const spec: WorkloadSpec = {
      name,
      slug: challenge.slug,
      jobId: request.job_id,
      masterId,
      image: request.image,
      workdir: request.workdir ?? WORKSPACE,
      env: request.env ?? {},
      labels: request.labels ?? {},
      user: resolveUser(request.user, image.user),
      limits,
      files,
      imageVolumes: image.volumes,
      gpus,
      gpuDevices,
      timeoutSeconds,
      deadline,
    };
    if (request.command) spec.command = request.command;
    if (request.entrypoint) spec.entrypoint = request.entrypoint;

    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) abort.abort();
    const execution = this.execute(spec, abort.signal);
    this.inFlight.set(name, { abort, done: execution.catch(() => {}) });
    try {
      const result = await execution;
      if (result.removed) {
        throw new HttpError(
          409,
          "workload_removed",
          `Workload ${name} was removed (cleanup, reaper or a disabled challenge) before it finished`,
          {
            extra: { container_name: name },
          },
        );
      }
      return {
        container_name: name,
        stdout: result.stdout,
        stderr: result.stderr,
        returncode: result.returncode,
        timed_out: result.timed_out,
        stdout_truncated: result.stdout_truncated,
        stderr_truncated: result.stderr_truncated,
        oom_killed: result.oom_killed,
        duration_ms: Date.now() - started,
      };
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.inFlight.delete(name);
    }
  }

  private async prepare(image: string) {
    try {
      return await this.executor.prepareImage(image);
    } catch (error) {
      if (error instanceof ExecutorError) throw new HttpError(400, error.code, error.message);
      throw new HttpError(
        400,
        "executor_error",
        `Docker could not inspect the image: ${dockerMessage(error)}`,
      );
    }
  }

  /**
   * Run on the executor and always end the row, before the workload is removed (so a live
   * row whose workload is gone was lost). A remover (cleanup, reaper) also ends the row before
   * removing the workload, so a row already ended here means the workload was taken away: the
   * run reports `removed` whatever exit code the kill produced.
   */
  private async execute(spec: WorkloadSpec, signal: AbortSignal): Promise<WorkloadResult> {
    let first = true;
    const ended = async (result: WorkloadResult) => {
      const status: Exclude<RunStatus, "running"> = signal.aborted
        ? "failed"
        : result.removed
          ? "lost"
          : result.timed_out
            ? "timed_out"
            : result.oom_killed
              ? "oom_killed"
              : "exited";
      first = await this.ledger.finish(spec.name, status, result.returncode);
    };
    try {
      const result = await this.executor.run(spec, signal, ended);
      return first ? result : { ...result, removed: true, returncode: null };
    } catch (error) {
      await this.ledger
        .finish(spec.name, "failed")
        .catch((e) => this.log.error("could not end a broker row", { name: spec.name, error: e }));
      if (error instanceof ExecutorError)
        throw new HttpError(EXECUTOR_STATUS[error.code], error.code, error.message);
      throw error;
    }
  }

  /** The caller's workloads (verified by label), optionally of one job. */
  async list(slug: string, jobId?: string): Promise<BrokerContainer[]> {
    await this.facts();
    const masterId = await this.ledger.instanceId();
    const workloads = await this.executor.list(masterId, slug);
    return workloads
      .filter((workload) => workload.slug === slug && (!jobId || workload.jobId === jobId))
      .map((workload) => ({
        container_name: workload.name,
        job_id: workload.jobId,
        image: workload.image,
        state: workload.state,
        created_at: workload.createdAt.toISOString(),
        gpus: workload.gpus,
      }));
  }

  /** Remove the caller's workloads (all, one job's, or one by name); others' are never touched. */
  async cleanup(slug: string, request: BrokerCleanupRequest): Promise<string[]> {
    await this.facts();
    const masterId = await this.ledger.instanceId();
    const targets = (await this.executor.list(masterId, slug)).filter(
      (workload) =>
        workload.slug === slug &&
        (!request.job_id || workload.jobId === request.job_id) &&
        (!request.container_name || workload.name === request.container_name),
    );
    // Rows end first, so a run waiting on one of these knows it was cleaned, not finished.
    await this.ledger.finishMany(
      targets.map((workload) => workload.name),
      "cleaned",
    );
    const removed: string[] = [];
    for (const workload of targets) {
      if (await this.executor.remove(workload.name)) removed.push(workload.name);
    }
    return removed;
  }

  /** The GPU leases of a challenge, newest first. */
  gpuLeases(slug: string, limit?: number): Promise<GpuLease[]> {
    return this.ledger.gpuLeases(slug, limit);
  }

  /**
   * One reaper pass: remove this deployment's workloads that have no live row (orphans of a
   * crashed master), are past their deadline, belong to a disabled challenge, or exited with
   * nobody left to read them; close rows whose workload is gone; remove leftover helpers.
   * Passes never overlap: a call during a pass gets the next pass, which starts when it ends
   * (so what the caller just did is seen), shared with any other caller meanwhile.
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

  private async reapOnce(): Promise<ReapReport> {
    const report: ReapReport = { removed: [], lost: [], leftovers: 0 };
    const facts = await this.executor.facts();
    const masterId = await this.ledger.instanceId();
    const live = new Map((await this.ledger.live()).map((row) => [row.container_name, row]));
    const workloads = await this.executor.list(masterId);
    const disabled = new Set((await this.store.list(["disabled"])).map((row) => row.slug));
    const now = Date.now() / 1000;
    for (const workload of workloads) {
      let row = live.get(workload.name);
      // A row always exists before its workload: one admitted after the snapshot above is
      // read now, so a workload created meanwhile is never mistaken for an orphan.
      if (!row) {
        const fresh = await this.ledger.get(workload.name);
        if (fresh && fresh.ended_at === null) row = fresh;
      }
      let reason: string | null = null;
      if (!row) reason = "orphan";
      else if (workload.deadline + DEADLINE_GRACE_SECONDS < now) reason = "deadline";
      else if (disabled.has(workload.slug)) reason = "disabled";
      else if (
        !workload.running &&
        !this.inFlight.has(workload.name) &&
        workload.finishedAt &&
        now - workload.finishedAt.getTime() / 1000 > ABANDONED_SECONDS
      ) {
        reason = "abandoned";
      }
      if (!reason) continue;
      try {
        if (row) await this.ledger.finish(workload.name, "reaped");
        await this.executor.remove(workload.name);
        report.removed.push({ name: workload.name, reason });
        this.log.info("reaped a workload", {
          name: workload.name,
          challenge: workload.slug,
          reason,
        });
      } catch (error) {
        this.log.warn("could not reap a workload", {
          name: workload.name,
          reason: dockerMessage(error),
        });
      }
    }
    const present = new Set(workloads.map((workload) => workload.name));
    for (const row of live.values()) {
      if (
        present.has(row.container_name) ||
        row.backend !== this.executor.kind ||
        row.engine_id !== facts.engineId
      )
        continue;
      if (this.inFlight.has(row.container_name)) continue;
      const age = now - row.started_at.getTime() / 1000;
      if (row.runner !== this.runner && age < CREATE_GRACE_SECONDS) continue;
      await this.ledger.finish(row.container_name, "lost");
      report.lost.push(row.container_name);
    }
    // Listed first, then checked: a helper's row exists before the helper does.
    const leftovers = await this.executor.leftovers(masterId);
    const stillLive = new Set((await this.ledger.live()).map((row) => row.container_name));
    for (const leftover of leftovers) {
      if (stillLive.has(leftover.workload) || this.inFlight.has(leftover.workload)) continue;
      try {
        await this.executor.removeLeftover(leftover);
        report.leftovers++;
      } catch (error) {
        this.log.debug("leftover not removed yet", {
          id: leftover.id,
          reason: dockerMessage(error),
        });
      }
    }
    await this.ledger.prune(HISTORY_DAYS);
    return report;
  }

  /** Reconcile now, then reap every `reaperIntervalSeconds`; a failing pass is logged, never fatal. */
  start(): void {
    if (this.reaperTimer || this.stopped) return;
    const pass = () =>
      void this.reap().catch((error) =>
        this.log.warn("broker reaper pass failed", { reason: dockerMessage(error) }),
      );
    pass();
    if (this.config.reaperIntervalSeconds > 0) {
      this.reaperTimer = setInterval(pass, this.config.reaperIntervalSeconds * 1000);
      this.reaperTimer.unref();
    }
  }

  /** Stop reaping; kill and remove every workload this process is running, and wait for that. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.reaperTimer);
    this.reaperTimer = undefined;
    const running = [...this.inFlight.values()];
    for (const { abort } of running) abort.abort();
    await Promise.all(running.map(({ done }) => done));
    await this.nextReap?.catch(() => {});
    await this.reaping?.catch(() => {});
  }
}
