import type { BrokerRunRequest } from "@platform/core";
import type Docker from "dockerode";
import {
  envList,
  gpuRequests,
  lockedDown,
  memoryCap,
  nanoCpus,
  scratchTmpfs,
  sealedShmTmpfs,
} from "./_host-config.js";
import type { ResolvedTaskLimits } from "./task-limits.js";

/**
 * The hardened sandbox of a task container, in one place so that every backend (the SDK's
 * docker runner, the master's broker) builds the same container from the same task.
 * Everything here is pure: no Docker call, no clock, no randomness.
 */

/** Where task files are placed (read-only) and the default working directory. */
export const WORKSPACE = "/workspace";

/**
 * Docker's shared-memory mount. A task gets an empty, read-only tmpfs there instead of Docker's
 * writable 64 MiB one (so /tmp is the only writable place), and an image VOLUME at this path is
 * never turned into a writable tmpfs. Python's multiprocessing locks and anything else that
 * needs POSIX shared memory fail in a task container; threads and /tmp files still work.
 */
export const SHM_PATH = "/dev/shm";

/** The read-only /dev/shm tmpfs's size: it holds nothing, the size only bounds the mount. */
export const SHM_TMPFS_BYTES = 4096;

/**
 * The image's VOLUME paths that become capped tmpfs mounts: all of them but /tmp (the scratch
 * tmpfs already), /dev/shm and anything below it (kept read-only and empty: a mount point below
 * it could not even be created) and, when the task's files are mounted there, /workspace.
 * Trailing slashes are dropped first: "/dev/shm/" is the same mount point.
 */
export function scratchVolumePaths(
  imageVolumes: readonly string[],
  options: { workspaceTaken: boolean },
): string[] {
  const reserved = new Set(["/tmp", ...(options.workspaceTaken ? [WORKSPACE] : [])]);
  const paths = imageVolumes.map((path) => path.replace(/\/+$/, "") || "/");
  return [...new Set(paths)].filter(
    (path) => !reserved.has(path) && path !== SHM_PATH && !path.startsWith(`${SHM_PATH}/`),
  );
}

/**
 * What a task container is built from: the fields of core's `BrokerRunRequest` that shape the
 * container (the SDK's camelCase `Task` has the same ones). Limits, user and files are decided
 * before, and passed in the {@link HardenedContainerContext}.
 */
export type SandboxSpec = Pick<
  BrokerRunRequest,
  "image" | "command" | "entrypoint" | "workdir" | "env" | "labels" | "init"
> & { gpus?: number };

/** What the builder needs besides the spec: decisions a runner made before creating it. */
export interface HardenedContainerContext {
  /** Container name. */
  name: string;
  /** From `resolveTaskUser`. */
  user: string;
  limits: ResolvedTaskLimits;
  /** Ownership labels (`ownershipLabels`), applied over the task's own. */
  labels: Record<string, string>;
  /** A volume holding the task's files, mounted read-only at /workspace. */
  filesVolume?: string | null;
  /** Paths the image declares as VOLUMEs: mounted as capped tmpfs instead of host disk. */
  imageVolumes?: readonly string[];
  /** GPU device ids leased to this task; empty or absent asks for `spec.gpus` by count. */
  gpuDevices?: readonly string[];
}

/**
 * The dockerode create options of a task's container: no network, read-only root, every
 * capability dropped, no-new-privileges, Docker's init (unless `spec.init` is false), private IPC, pids/memory (no swap)/CPU caps,
 * /tmp as a noexec tmpfs, an empty read-only /dev/shm, files read-only at /workspace, a non-root
 * user, no log driver (output is read through attach), and nvidia DeviceRequests when the task
 * asks for GPUs.
 * @example docker.createContainer(hardenedContainerOptions(spec, { name, user, limits, labels }))
 */
export function hardenedContainerOptions(
  spec: SandboxSpec,
  context: HardenedContainerContext,
): Docker.ContainerCreateOptions {
  const { limits } = context;
  const tmpfs = scratchTmpfs(limits.tmpfsBytes);
  const volumes = scratchVolumePaths(context.imageVolumes ?? [], {
    workspaceTaken: Boolean(context.filesVolume),
  });
  const hostConfig: Docker.HostConfig = {
    NetworkMode: "none",
    ReadonlyRootfs: true,
    ...lockedDown(spec.init ?? true),
    Privileged: false,
    IpcMode: "private",
    PidsLimit: limits.pids,
    ...memoryCap(limits.memoryBytes),
    NanoCpus: nanoCpus(limits.cpus),
    // An image VOLUME would otherwise be a writable, uncapped directory on the host's disk.
    Tmpfs: Object.fromEntries([
      ["/tmp", tmpfs],
      [SHM_PATH, sealedShmTmpfs(SHM_TMPFS_BYTES)],
      ...volumes.map((path) => [path, tmpfs]),
    ]),
    Mounts: context.filesVolume
      ? [{ Type: "volume", Source: context.filesVolume, Target: WORKSPACE, ReadOnly: true }]
      : [],
    AutoRemove: false,
    RestartPolicy: { Name: "no" },
    // Output is read (capped) through attach; nothing is written to the host's disk.
    LogConfig: { Type: "none", Config: {} },
  };
  const gpus = spec.gpus ?? 0;
  if (gpus > 0) hostConfig.DeviceRequests = gpuRequests(gpus, context.gpuDevices);
  const options: Docker.ContainerCreateOptions = {
    name: context.name,
    Image: spec.image,
    WorkingDir: spec.workdir ?? WORKSPACE,
    Env: envList(spec.env),
    User: context.user,
    Labels: { ...spec.labels, ...context.labels },
    NetworkDisabled: true,
    AttachStdin: false,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: false,
    Tty: false,
    StopTimeout: 1,
    HostConfig: hostConfig,
  };
  if (spec.command) options.Cmd = [...spec.command];
  if (spec.entrypoint) options.Entrypoint = [...spec.entrypoint];
  return options;
}
