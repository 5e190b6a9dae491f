import type { BrokerLimits } from "@platform/core";
import { SandboxRefusal } from "./sandbox-refusal.js";

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

/**
 * 2 CPUs, 4 GB, 512 pids, 256 MB /tmp (up to 2 GB), 1 MiB of output per stream (up to 16 MiB):
 * the SDK's docker runner's policy and the master's defaults (its PLATFORM_BROKER_* settings
 * start from these).
 */
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

function above(field: string, value: number, max: number): SandboxRefusal {
  return new SandboxRefusal(
    "limit_exceeded",
    `limits.${field}: ${value} is above the maximum of ${max}; a task may only lower the hardened defaults`,
    { field: `limits.${field}`, maximum: max },
  );
}

/**
 * A task's limits (core's `BrokerLimits`, as the broker receives them): CPU, memory and pids
 * default to the policy's maximum and may only be lowered; /tmp and output default lower and
 * may rise to their maximum. Anything above a maximum is refused (`limit_exceeded`), never
 * silently clamped.
 * @example resolveTaskLimits({ memory_mb: 512 }) // { cpus: 2, memoryBytes: 536870912, … }
 */
export function resolveTaskLimits(
  limits: BrokerLimits | undefined,
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
