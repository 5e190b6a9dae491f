import type Docker from "dockerode";
import type { Task, TaskLimits } from "./task.js";
import { TaskRejectedError } from "./task-errors.js";

/**
 * The hardened sandbox of a task container, in one place so that every backend (the SDK's
 * docker runner, the master's broker) builds the same container from the same task.
 * Everything here is pure: no Docker call, no clock, no randomness.
 */

/** Where task files are placed (read-only) and the default working directory. */
export const WORKSPACE = "/workspace";

/** The user a task runs as when its image would run it as root. */
export const NOBODY = "65534:65534";

/** Labels every task container (and its helper objects) carries. */
export const TASK_LABELS = {
  /** "true" on everything a platform runner created. */
  managed: "platform.managed",
  /** The task's `job_id`. */
  job: "platform.job",
  /** Which runner made it (e.g. "sdk-docker"), so reapers only touch their own. */
  runner: "platform.runner",
  /** Unix seconds after which the container is overdue and may be reaped. */
  deadline: "platform.deadline",
  /** "run" for the task container; "staging" / "files" for its helpers. */
  role: "platform.role",
} as const;

/** Defaults and maxima of a task's resources. CPU, memory and pids default to their maximum. */
export interface TaskLimitPolicy {
  cpus: number;
  memoryMb: number;
  pids: number;
  /** /tmp size by default, and its maximum. */
  tmpfsMb: number;
  maxTmpfsMb: number;
  /** Captured bytes per stream by default, and its maximum. */
  outputBytes: number;
  maxOutputBytes: number;
}

/** 2 CPUs, 4 GB, 512 pids, 256 MB /tmp (up to 2 GB), 1 MiB of output per stream (up to 16 MiB). */
export const HARDENED_LIMITS: Readonly<TaskLimitPolicy> = Object.freeze({
  cpus: 2,
  memoryMb: 4096,
  pids: 512,
  tmpfsMb: 256,
  maxTmpfsMb: 2048,
  outputBytes: 1024 * 1024,
  maxOutputBytes: 16 * 1024 * 1024,
});

/** The resources of one task, resolved against a policy. */
export interface ResolvedTaskLimits {
  cpus: number;
  memoryBytes: number;
  pids: number;
  tmpfsBytes: number;
  outputBytes: number;
}

function above(field: string, value: number, max: number): TaskRejectedError {
  return new TaskRejectedError(
    "limit_exceeded",
    `limits.${field}: ${value} is above the maximum of ${max}; a task may only lower the hardened defaults`,
    { details: { field: `limits.${field}`, maximum: max } },
  );
}

/**
 * A task's limits: CPU, memory and pids default to the policy's maximum and may only be
 * lowered; /tmp and output default lower and may rise to their maximum. Anything above a
 * maximum is refused (`limit_exceeded`), never silently clamped.
 */
export function resolveTaskLimits(
  limits: TaskLimits | undefined,
  policy: TaskLimitPolicy = HARDENED_LIMITS,
): ResolvedTaskLimits {
  const r = limits ?? {};
  if (r.cpus !== undefined && r.cpus > policy.cpus) throw above("cpus", r.cpus, policy.cpus);
  if (r.memory_mb !== undefined && r.memory_mb > policy.memoryMb) {
    throw above("memory_mb", r.memory_mb, policy.memoryMb);
  }
  if (r.pids !== undefined && r.pids > policy.pids) throw above("pids", r.pids, policy.pids);
  if (r.tmpfs_mb !== undefined && r.tmpfs_mb > policy.maxTmpfsMb) {
    throw above("tmpfs_mb", r.tmpfs_mb, policy.maxTmpfsMb);
  }
  if (r.output_bytes !== undefined && r.output_bytes > policy.maxOutputBytes) {
    throw above("output_bytes", r.output_bytes, policy.maxOutputBytes);
  }
  return {
    cpus: r.cpus ?? policy.cpus,
    memoryBytes: (r.memory_mb ?? policy.memoryMb) * 1024 * 1024,
    pids: r.pids ?? policy.pids,
    tmpfsBytes: (r.tmpfs_mb ?? Math.min(policy.tmpfsMb, policy.maxTmpfsMb)) * 1024 * 1024,
    outputBytes: r.output_bytes ?? Math.min(policy.outputBytes, policy.maxOutputBytes),
  };
}

function refuse(field: string, message: string): TaskRejectedError {
  return new TaskRejectedError(
    "weakening_refused",
    `${field}: ${message}; the sandbox is never weakened`,
    { details: { field } },
  );
}

/**
 * Refuses (`weakening_refused`, naming the field) a request asking for less isolation than the
 * hardened defaults: privileged, a network, a writable root, added capabilities, devices, host
 * mounts, or root. Asking for exactly the default is accepted. Reads core's `BrokerRunRequest`
 * fields, so it also guards requests typed loosely (JSON from elsewhere).
 */
export function refuseWeakening(request: Record<string, unknown>): void {
  if (request["privileged"] === true)
    throw refuse("privileged", "privileged containers are refused");
  const network = request["network"];
  if (network !== undefined && network !== "none") {
    throw refuse(
      "network",
      `tasks have no network ("none"); ${JSON.stringify(network)} is refused`,
    );
  }
  if (request["read_only"] === false)
    throw refuse("read_only", "the root filesystem is always read-only");
  const nonEmpty = (key: string) =>
    Array.isArray(request[key]) && (request[key] as unknown[]).length > 0;
  if (nonEmpty("cap_add"))
    throw refuse("cap_add", "every capability is dropped and none can be added");
  if (nonEmpty("devices"))
    throw refuse("devices", "host devices are refused (ask for GPUs with `gpus`)");
  if (nonEmpty("host_mounts"))
    throw refuse("host_mounts", "host paths are never mounted; ship inputs as `files`");
  const user = request["user"];
  if (user !== undefined) {
    const match = typeof user === "string" ? /^(\d+)(?::(\d+))?$/.exec(user) : null;
    if (!match)
      throw refuse(
        "user",
        `${JSON.stringify(user)} is not a numeric uid[:gid] (names may resolve to root)`,
      );
    if (Number(match[1]) === 0 || (match[2] !== undefined && Number(match[2]) === 0)) {
      throw refuse("user", "uid or gid 0 (root) is refused");
    }
  }
}

/** Refuses task labels in the `platform.` namespace: those say who owns a container. */
export function checkTaskLabels(labels: Record<string, string> | undefined): void {
  for (const key of Object.keys(labels ?? {})) {
    if (key === "platform" || key.startsWith("platform.")) {
      throw new TaskRejectedError(
        "invalid_label",
        `labels.${key}: the "platform." namespace is reserved for runners`,
        { details: { field: `labels.${key}` } },
      );
    }
  }
}

/** Is an image's configured user root? (Empty means root, as Docker reads it.) */
export function isRootUser(user: string | undefined): boolean {
  const [name = "", group] = (user ?? "").trim().split(":");
  return name === "" || name === "root" || name === "0" || group === "0" || group === "root";
}

/** The user a task runs as: the image's own when it is not root, else nobody (65534). */
export function resolveTaskUser(imageUser: string | undefined): string {
  return isRootUser(imageUser) ? NOBODY : imageUser!.trim();
}

/** What the builder needs besides the task: decisions a runner made before creating it. */
export interface HardenedContainerContext {
  /** Container name. */
  name: string;
  /** From `resolveTaskUser` (or the broker's checked request user). */
  user: string;
  limits: ResolvedTaskLimits;
  /** Ownership labels (`TASK_LABELS`), applied over the task's own. */
  labels: Record<string, string>;
  /** A volume holding the task's files, mounted read-only at /workspace. */
  filesVolume?: string | null;
  /** Paths the image declares as VOLUMEs: mounted as capped tmpfs instead of host disk. */
  imageVolumes?: readonly string[];
  /** GPU device ids leased to this task; empty or absent asks for `task.gpus` by count. */
  gpuDevices?: readonly string[];
}

/**
 * The dockerode create options of a task's container: no network, read-only root, every
 * capability dropped, no-new-privileges, init, private IPC, pids/memory (no swap)/CPU caps,
 * /tmp as a noexec tmpfs, files read-only at /workspace, a non-root user, no log driver
 * (output is read through attach), and nvidia DeviceRequests when the task asks for GPUs.
 * @example docker.createContainer(hardenedContainerOptions(task, { name, user, limits, labels }))
 */
export function hardenedContainerOptions(
  task: Task,
  context: HardenedContainerContext,
): Docker.ContainerCreateOptions {
  const { limits } = context;
  const tmpfs = `rw,noexec,nosuid,nodev,size=${limits.tmpfsBytes}`;
  const volumes = (context.imageVolumes ?? []).filter(
    (path) => path !== "/tmp" && !(context.filesVolume && path === WORKSPACE),
  );
  const hostConfig: Docker.HostConfig = {
    NetworkMode: "none",
    ReadonlyRootfs: true,
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges:true"],
    Privileged: false,
    Init: true,
    IpcMode: "private",
    PidsLimit: limits.pids,
    Memory: limits.memoryBytes,
    // Equal to Memory: no swap, so the memory limit is the limit and an OOM kill is visible.
    MemorySwap: limits.memoryBytes,
    NanoCpus: Math.round(limits.cpus * 1e9),
    // An image VOLUME would otherwise be a writable, uncapped directory on the host's disk.
    Tmpfs: Object.fromEntries([["/tmp", tmpfs], ...volumes.map((path) => [path, tmpfs])]),
    Mounts: context.filesVolume
      ? [{ Type: "volume", Source: context.filesVolume, Target: WORKSPACE, ReadOnly: true }]
      : [],
    AutoRemove: false,
    RestartPolicy: { Name: "no" },
    // Output is read (capped) through attach; nothing is written to the host's disk.
    LogConfig: { Type: "none", Config: {} },
  };
  const gpus = task.gpus ?? 0;
  if (gpus > 0) {
    hostConfig.DeviceRequests = [
      context.gpuDevices?.length
        ? { Driver: "nvidia", DeviceIDs: [...context.gpuDevices], Capabilities: [["gpu"]] }
        : { Driver: "nvidia", Count: gpus, Capabilities: [["gpu"]] },
    ];
  }
  const options: Docker.ContainerCreateOptions = {
    name: context.name,
    Image: task.image,
    WorkingDir: task.workdir ?? WORKSPACE,
    Env: Object.entries(task.env ?? {}).map(([key, value]) => `${key}=${value}`),
    User: context.user,
    Labels: { ...task.labels, ...context.labels },
    NetworkDisabled: true,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: false,
    Tty: false,
    StopTimeout: 1,
    HostConfig: hostConfig,
  };
  if (task.command) options.Cmd = [...task.command];
  if (task.entrypoint) options.Entrypoint = [...task.entrypoint];
  return options;
}
