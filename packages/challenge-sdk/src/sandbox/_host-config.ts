import type Docker from "dockerode";

/**
 * What a task container and a challenge's service container share: the pieces of a HostConfig
 * that lock a container down and cap it. The two builders differ on purpose elsewhere (a
 * service has a network and a writable root); these never differ.
 */

/**
 * Every capability dropped, no-new-privileges, and Docker's init as PID 1 unless `init` is
 * false (the command is PID 1 then: a task that must have no process of its uid above it).
 */
export function lockedDown(
  init = true,
): Pick<Docker.HostConfig, "CapDrop" | "SecurityOpt" | "Init"> {
  return { CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges:true"], Init: init };
}

/** A tmpfs where data may be written and nothing executed, capped at `bytes`. */
export function scratchTmpfs(bytes: number): string {
  return `rw,noexec,nosuid,nodev,size=${bytes}`;
}

/**
 * An empty, read-only tmpfs for /dev/shm. Docker otherwise mounts a writable 64 MiB tmpfs there
 * in every container, outside the read-only root and the capped /tmp: a second scratch space
 * the sandbox would not account for. A mount of our own replaces Docker's (Docker creates its
 * shm mount only when nothing else is mounted at /dev/shm); read-only, it takes no write even
 * from root, so /tmp stays the one writable place.
 */
export function sealedShmTmpfs(bytes: number): string {
  return `ro,noexec,nosuid,nodev,size=${bytes}`;
}

/** Memory with swap equal to it: the memory limit is the limit and an OOM kill is visible. */
export function memoryCap(bytes: number): Pick<Docker.HostConfig, "Memory" | "MemorySwap"> {
  return { Memory: bytes, MemorySwap: bytes };
}

/** CPUs as Docker's NanoCpus. */
export function nanoCpus(cpus: number): number {
  return Math.round(cpus * 1e9);
}

/** nvidia DeviceRequests: `count` GPUs, or exactly the leased `devices`. */
export function gpuRequests(
  count: number,
  devices: readonly string[] = [],
): Docker.DeviceRequest[] {
  return [
    devices.length
      ? { Driver: "nvidia", DeviceIDs: [...devices], Capabilities: [["gpu"]] }
      : { Driver: "nvidia", Count: count, Capabilities: [["gpu"]] },
  ];
}

/** `KEY=value` strings, as Docker takes an environment. */
export function envList(env: Record<string, string> | undefined): string[] {
  return Object.entries(env ?? {}).map(([key, value]) => `${key}=${value}`);
}
