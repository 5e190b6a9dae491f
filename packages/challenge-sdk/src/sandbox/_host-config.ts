import type Docker from "dockerode";

/**
 * What a task container and a challenge's service container share: the pieces of a HostConfig
 * that lock a container down and cap it. The two builders differ on purpose elsewhere (a
 * service has a network and a writable root); these never differ.
 */

/** Every capability dropped, no-new-privileges, Docker's init as PID 1. */
export function lockedDown(): Pick<Docker.HostConfig, "CapDrop" | "SecurityOpt" | "Init"> {
  return { CapDrop: ["ALL"], SecurityOpt: ["no-new-privileges:true"], Init: true };
}

/** A tmpfs where data may be written and nothing executed, capped at `bytes`. */
export function scratchTmpfs(bytes: number): string {
  return `rw,noexec,nosuid,nodev,size=${bytes}`;
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
