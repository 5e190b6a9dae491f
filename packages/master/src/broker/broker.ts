import { randomUUID } from "node:crypto";
import { dockerMessage } from "@platform/challenge-sdk/sandbox";
import {
  type BrokerCleanupRequest,
  type BrokerContainer,
  type BrokerRunRequest,
  type BrokerRunResponse,
  HttpError,
  isHttpError,
  type Logger,
  type Sql,
  type TraceContext,
  withSpan,
} from "@platform/core";
import Docker from "dockerode";
import type { BrokerConfig } from "../config.js";
import type { BrokerRunOutcome, MasterMetrics } from "../ops/master-metrics.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import type { ChallengeStore } from "../registry/challenge-store.js";
import { BrokerReaper, type ReapReport } from "./broker-reaper.js";
import { EngineExecutor } from "./engine-executor.js";
import { type EngineFacts, type Executor, ExecutorError } from "./executor.js";
import { type GpuLease, RunLedger } from "./run-ledger.js";
import { SwarmExecutor } from "./swarm-executor.js";
import { admitWorkload } from "./workload-admission.js";
import { WorkloadExecution } from "./workload-execution.js";
import { WorkloadListing } from "./workload-listing.js";

export type { ReapReport };

/** What the broker is built from. */
export interface BrokerOptions {
  config: BrokerConfig;
  sql: Sql;
  store: ChallengeStore;
  log: Logger;
  /** A Docker client (default: DOCKER_HOST with its TLS settings, else the local socket). */
  docker?: Docker;
  /** Where runs are counted (platform_broker_runs_total, platform_broker_running, ...). */
  metrics?: MasterMetrics;
}

/**
 * The container broker: admits a challenge's workload against the hardened sandbox and its
 * quota in Postgres (workload-admission.ts), runs it on the executor, engine or swarm
 * (workload-execution.ts), lists and cleans up a challenge's own workloads
 * (workload-listing.ts), and reaps whatever a crash or a stuck run leaves behind
 * (broker-reaper.ts). This class only wires them together.
 */
export class Broker {
  readonly ledger: RunLedger;
  readonly executor: Executor;
  readonly config: BrokerConfig;
  /** This process, as the runner of the rows it admits. */
  readonly runner = randomUUID();
  private readonly log: Logger;
  private readonly metrics: MasterMetrics | undefined;
  private readonly execution: WorkloadExecution;
  private readonly listing: WorkloadListing;
  private readonly reaper: BrokerReaper;

  constructor(options: BrokerOptions) {
    this.config = options.config;
    this.log = options.log;
    this.metrics = options.metrics;
    this.ledger = new RunLedger(options.sql);
    // dockerode reads DOCKER_HOST (unix, tcp with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH, ssh) as the docker CLI does.
    const docker = options.docker ?? new Docker();
    const executorOptions = { pullTimeoutMs: options.config.pullTimeoutMs };
    this.executor =
      options.config.backend === "swarm"
        ? new SwarmExecutor(docker, executorOptions)
        : new EngineExecutor(docker, executorOptions);
    this.execution = new WorkloadExecution(this.executor, this.ledger, this.log);
    this.listing = new WorkloadListing(this.executor, this.ledger);
    this.reaper = new BrokerReaper({
      executor: this.executor,
      ledger: this.ledger,
      store: options.store,
      log: this.log,
      runner: this.runner,
      isRunning: (name) => this.execution.isRunning(name),
      intervalSeconds: options.config.reaperIntervalSeconds,
    });
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

  /**
   * Validate, admit and run one workload for `challenge`; the answer once it has ended. Counted
   * by outcome, and with tracing on a span inside the caller's request (its traceparent).
   */
  run(
    challenge: ChallengeRow,
    request: BrokerRunRequest,
    { signal, trace }: { signal?: AbortSignal; trace?: TraceContext | undefined } = {},
  ): Promise<BrokerRunResponse> {
    return withSpan("broker run workload", () => this.measuredRun(challenge, request, signal), {
      ...(trace ? { parent: trace } : {}),
      attributes: {
        "platform.challenge.slug": challenge.slug,
        "container.image.name": request.image,
        "platform.task.job_id": request.job_id,
      },
    });
  }

  private async measuredRun(
    challenge: ChallengeRow,
    request: BrokerRunRequest,
    signal?: AbortSignal,
  ): Promise<BrokerRunResponse> {
    const slug = challenge.slug;
    let spec: Awaited<ReturnType<typeof admitWorkload>>;
    try {
      spec = await admitWorkload(
        {
          config: this.config,
          executor: this.executor,
          ledger: this.ledger,
          runner: this.runner,
          facts: () => this.facts(),
          gpuHost: () => this.gpuHost(),
        },
        challenge,
        request,
      );
    } catch (error) {
      const status = isHttpError(error) ? error.status : 500;
      const outcome = status === 429 ? "quota" : status < 500 ? "refused" : "error";
      this.metrics?.brokerRunEnded(slug, outcome, 0, false);
      throw error;
    }
    const started = performance.now();
    this.metrics?.brokerRunStarted(slug);
    let outcome: BrokerRunOutcome = "error";
    try {
      const result = await this.execution.run(spec, signal);
      outcome = signal?.aborted
        ? "aborted"
        : result.timed_out
          ? "timed_out"
          : result.oom_killed
            ? "oom_killed"
            : result.returncode === 0
              ? "succeeded"
              : "exited_nonzero";
      return result;
    } catch (error) {
      outcome = signal?.aborted
        ? "aborted"
        : isHttpError(error) && error.code === "workload_removed"
          ? "removed"
          : "error";
      throw error;
    } finally {
      this.metrics?.brokerRunEnded(slug, outcome, (performance.now() - started) / 1000, true);
    }
  }

  /** The caller's workloads (verified by label), optionally of one job. */
  async list(slug: string, jobId?: string): Promise<BrokerContainer[]> {
    await this.facts();
    return this.listing.list(slug, jobId);
  }

  /** Remove the caller's workloads (all, one job's, or one by name); others' are never touched. */
  async cleanup(slug: string, request: BrokerCleanupRequest): Promise<string[]> {
    await this.facts();
    return this.listing.cleanup(slug, request);
  }

  /** The GPU leases of a challenge, newest first. */
  gpuLeases(slug: string, limit?: number): Promise<GpuLease[]> {
    return this.ledger.gpuLeases(slug, limit);
  }

  /** One reaper pass (see `BrokerReaper.reap`). */
  reap(): Promise<ReapReport> {
    return this.reaper.reap();
  }

  /** Reconcile now, then reap every `reaperIntervalSeconds`. */
  start(): void {
    this.reaper.start();
  }

  /** Stop reaping; kill and remove every workload this process is running, and wait for that. */
  async stop(): Promise<void> {
    const reaping = this.reaper.stop();
    await this.execution.stopAll();
    await reaping;
  }
}
