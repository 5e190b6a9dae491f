import { type BrokerRunRequest, HttpError } from "@platform/core";
import type { BrokerConfig } from "../config.js";

/** The user a workload runs as when its image would run it as root. */
export const NOBODY = "65534:65534";

/** The resources one workload gets, after the request's limits are checked against the config. */
export interface ResolvedLimits {
  cpus: number;
  memoryBytes: number;
  pids: number;
  tmpfsBytes: number;
  outputBytes: number;
}

function refuse(field: string, message: string): HttpError {
  return new HttpError(
    400,
    "weakening_refused",
    `${field}: ${message}; the broker never weakens its sandbox`,
    { extra: { field } },
  );
}

/**
 * Refuse (400 `weakening_refused`, naming the field) a request that asks for less isolation
 * than the hardened defaults: privileged, a network, a writable root, added capabilities,
 * devices, host mounts, or root. Asking for exactly the default is accepted.
 */
export function refuseWeakening(request: BrokerRunRequest): void {
  if (request.privileged === true) throw refuse("privileged", "privileged containers are refused");
  if (request.network !== undefined && request.network !== "none") {
    throw refuse("network", `workloads have no network ("none"), "${request.network}" is refused`);
  }
  if (request.read_only === false)
    throw refuse("read_only", "the root filesystem is always read-only");
  if (request.cap_add?.length)
    throw refuse("cap_add", "every capability is dropped and none can be added");
  if (request.devices?.length)
    throw refuse("devices", "host devices are refused (GPUs are asked for with `gpus`)");
  if (request.host_mounts?.length)
    throw refuse("host_mounts", "host paths are never mounted; ship inputs as `files`");
  if (request.user !== undefined) checkUser(request.user);
}

function checkUser(user: string): void {
  const match = /^(\d+)(?::(\d+))?$/.exec(user);
  // A name is resolved by the image's /etc/passwd and may be root: only numbers are checkable.
  if (!match)
    throw refuse("user", `"${user}" is not a numeric uid[:gid] (a name may resolve to root)`);
  if (Number(match[1]) === 0 || (match[2] !== undefined && Number(match[2]) === 0)) {
    throw refuse("user", "uid or gid 0 (root) is refused");
  }
}

/** Is an image's configured user root (empty means root)? */
export function isRootUser(user: string | undefined): boolean {
  const name = (user ?? "").split(":")[0]?.trim() ?? "";
  return name === "" || name === "root" || name === "0";
}

/**
 * The user a workload runs as: the request's (already checked non-root), else the image's own
 * when it is not root, else nobody (65534).
 */
export function resolveUser(requested: string | undefined, imageUser: string | undefined): string {
  if (requested !== undefined) return requested;
  if (!isRootUser(imageUser)) return imageUser!;
  return NOBODY;
}

function above(field: string, value: number, max: number, unit = ""): HttpError {
  return new HttpError(
    400,
    "limit_exceeded",
    `limits.${field}: ${value}${unit} is above the broker's maximum of ${max}${unit}`,
    {
      extra: { field: `limits.${field}`, maximum: max },
    },
  );
}

/**
 * The limits of one workload. CPU, memory and pids default to the configured maxima and a
 * request may only lower them; tmpfs and output default lower and may rise to their maxima.
 * Anything above a maximum is 400 `limit_exceeded` (never silently clamped).
 */
export function resolveLimits(
  requested: BrokerRunRequest["limits"],
  config: BrokerConfig,
): ResolvedLimits {
  const l = config.limits;
  const r = requested ?? {};
  if (r.cpus !== undefined && r.cpus > l.cpus) throw above("cpus", r.cpus, l.cpus);
  if (r.memory_mb !== undefined && r.memory_mb > l.memoryMb)
    throw above("memory_mb", r.memory_mb, l.memoryMb);
  if (r.pids !== undefined && r.pids > l.pids) throw above("pids", r.pids, l.pids);
  if (r.tmpfs_mb !== undefined && r.tmpfs_mb > l.maxTmpfsMb)
    throw above("tmpfs_mb", r.tmpfs_mb, l.maxTmpfsMb);
  if (r.output_bytes !== undefined && r.output_bytes > l.maxOutputBytes)
    throw above("output_bytes", r.output_bytes, l.maxOutputBytes);
  return {
    cpus: r.cpus ?? l.cpus,
    memoryBytes: (r.memory_mb ?? l.memoryMb) * 1024 * 1024,
    pids: r.pids ?? l.pids,
    tmpfsBytes: (r.tmpfs_mb ?? Math.min(l.tmpfsMb, l.maxTmpfsMb)) * 1024 * 1024,
    outputBytes: r.output_bytes ?? Math.min(l.outputBytes, l.maxOutputBytes),
  };
}

/** Refuse labels in the `platform.` namespace: ownership labels are the broker's alone. */
export function checkLabels(labels: Record<string, string> | undefined): void {
  for (const key of Object.keys(labels ?? {})) {
    if (key === "platform" || key.startsWith("platform.")) {
      throw new HttpError(
        400,
        "invalid_label",
        `labels.${key}: the "platform." namespace is reserved for the broker`,
        {
          extra: { field: `labels.${key}` },
        },
      );
    }
  }
}

/** Check an image against the broker's allow-list of prefixes; 400 `image_not_allowed`. */
export function enforceBrokerImage(image: string, prefixes: readonly string[]): void {
  // Docker reads "a/b:1" and "docker.io/a/b:1" alike; the list is matched against what was sent.
  const valid =
    /^[a-z0-9][a-z0-9._/:@-]*$/i.test(image) && !image.includes("..") && !image.includes("//");
  if (!valid || !prefixes.some((prefix) => prefix !== "" && image.startsWith(prefix))) {
    const allowed = prefixes.length
      ? prefixes.join(", ")
      : "none configured (set PLATFORM_BROKER_IMAGES)";
    throw new HttpError(
      400,
      "image_not_allowed",
      `Image "${image}" is not allowed for workloads; allowed prefixes: ${allowed}`,
    );
  }
}
