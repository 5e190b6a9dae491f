import {
  type CapturedOutput,
  deadlineOf,
  type EngineFacts,
  labelFilters,
  ownershipLabels,
  PLATFORM_LABELS,
  type PlacedFile,
  type ResolvedTaskLimits,
  type TaskObjectRole,
} from "@platform/challenge-sdk/sandbox";

export type { EngineFacts };

/** Which Docker backend runs workloads. */
export type ExecutorKind = "engine" | "swarm";

/** Everything an executor needs to run one workload; all of it already validated. */
export interface WorkloadSpec {
  name: string;
  slug: string;
  jobId: string;
  /** The deployment's id (broker_instance), the `platform.master` label. */
  masterId: string;
  image: string;
  command?: string[];
  entrypoint?: string[];
  workdir: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  user: string;
  limits: ResolvedTaskLimits;
  files: PlacedFile[];
  /** Paths the image declares as VOLUMEs: mounted as capped tmpfs, never as disk volumes. */
  imageVolumes: string[];
  gpus: number;
  /** Specific GPU device ids leased to this workload; empty asks for `gpus` by count. */
  gpuDevices: string[];
  timeoutSeconds: number;
  /** Docker's init as PID 1; false: the command is PID 1 (`BrokerRunRequest.init`). */
  init: boolean;
  /** Unix seconds past which the reaper removes the workload whatever happens to this master. */
  deadline: number;
}

/** How a workload ended (the broker's wire names). */
export interface WorkloadResult {
  stdout: string;
  stderr: string;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  returncode: number | null;
  timed_out: boolean;
  oom_killed: boolean;
  /** Removed from outside (cleanup, reaper) before it finished. */
  removed: boolean;
}

/** A broker workload as the executor sees it, from its labels. */
export interface ManagedWorkload {
  name: string;
  slug: string;
  jobId: string;
  masterId: string;
  image: string;
  /** running, exited, created, complete, failed, … */
  state: string;
  running: boolean;
  createdAt: Date;
  /** When the workload finished (exited or a final task state); null while it runs. */
  finishedAt: Date | null;
  deadline: number;
  gpus: number;
}

/** A helper object (staging container, files volume, network, config) left behind. */
export interface ManagedLeftover {
  kind: string;
  id: string;
  /** The workload it belongs to. */
  workload: string;
}

/** Raised by an executor when Docker refuses the workload (image, configuration). */
export class ExecutorError extends Error {
  override readonly name = "ExecutorError";
  constructor(
    readonly code: "image_unavailable" | "executor_error" | "gpu_unavailable",
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** What the broker needs to know of an image before running it. */
export interface PreparedImage {
  /** Its configured user (empty: root). */
  user: string | undefined;
  /** Paths it declares as VOLUMEs. */
  volumes: string[];
}

/** A Docker backend for broker workloads: one engine, or a swarm. */
export interface Executor {
  readonly kind: ExecutorKind;
  /** The engine's facts; `engineId` is the swarm's cluster id on the swarm backend. */
  facts(): Promise<EngineFacts>;
  /** The image's user and declared volumes, pulling it first if it is not local; ExecutorError when unavailable. */
  prepareImage(image: string): Promise<PreparedImage>;
  /**
   * Run to completion, timeout or abort, then remove everything it created. `ended` is
   * awaited with the result BEFORE anything is removed, so the broker's row always ends
   * before its workload disappears (a live row without its workload means it was lost).
   */
  run(
    spec: WorkloadSpec,
    signal: AbortSignal,
    ended?: (result: WorkloadResult) => Promise<void>,
  ): Promise<WorkloadResult>;
  /** Workloads of deployment `masterId`, optionally of one challenge. */
  list(masterId: string, slug?: string): Promise<ManagedWorkload[]>;
  /** Remove a workload and its helpers, whatever its state; false when it was already gone. */
  remove(name: string): Promise<boolean>;
  /** Helper objects of `masterId` (staging containers, volumes, networks, configs). */
  leftovers(masterId: string): Promise<ManagedLeftover[]>;
  removeLeftover(leftover: ManagedLeftover): Promise<void>;
}

/** Captured output under the broker's wire names. */
export function workloadOutput(
  output: CapturedOutput,
): Pick<WorkloadResult, "stdout" | "stderr" | "stdout_truncated" | "stderr_truncated"> {
  return {
    stdout: output.stdout,
    stderr: output.stderr,
    stdout_truncated: output.stdoutTruncated,
    stderr_truncated: output.stderrTruncated,
  };
}

/** The labels of a workload (or, with `role`, of one of its helpers): its own, then the ownership ones. */
export function workloadLabels(
  spec: WorkloadSpec,
  role: TaskObjectRole = "run",
): Record<string, string> {
  return { ...spec.labels, ...workloadOwnership(spec, role) };
}

/** The ownership labels of a workload's object (the sandbox's, with the broker's owner fields). */
export function workloadOwnership(
  spec: WorkloadSpec,
  role: TaskObjectRole = "run",
): Record<string, string> {
  return ownershipLabels(
    {
      job: spec.jobId,
      deadline: spec.deadline,
      challenge: spec.slug,
      master: spec.masterId,
      gpus: spec.gpus,
    },
    role,
  );
}

/** Read a workload's identity back from its labels; null when they are not all there. */
export function workloadFromLabels(
  name: string,
  labels: Record<string, string> | undefined,
  rest: Pick<ManagedWorkload, "image" | "state" | "running" | "createdAt" | "finishedAt">,
): ManagedWorkload | null {
  const L = PLATFORM_LABELS;
  if (labels?.[L.managed] !== "true" || (labels[L.role] ?? "run") !== "run") return null;
  const slug = labels[L.challenge];
  const jobId = labels[L.job];
  const masterId = labels[L.master];
  const deadline = deadlineOf(labels);
  if (!slug || !jobId || !masterId || deadline === null) return null;
  return {
    name,
    slug,
    jobId,
    masterId,
    deadline,
    gpus: Number(labels[L.gpus] ?? 0) || 0,
    ...rest,
  };
}

/** Docker label filters selecting the objects of one deployment (and challenge, and role). */
export function workloadFilters(masterId: string, slug?: string, role?: TaskObjectRole): string[] {
  return labelFilters({ managed: "true", master: masterId, challenge: slug, role });
}
