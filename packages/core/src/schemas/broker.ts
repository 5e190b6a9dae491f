import { type Static, Type } from "@sinclair/typebox";
import { ENV_NAME, keyedRecord } from "./_keyed-record.js";

/**
 * Docker HostConfig knobs a run request may name only to be refused (`weakening_refused`);
 * `BrokerRunRequest` lists each as an optional unknown.
 */
export const WEAKENING_FIELDS = [
  "security_opt",
  "pid_mode",
  "ipc_mode",
  "userns_mode",
  "uts_mode",
  "cgroup_parent",
  "sysctls",
  "ulimits",
  "binds",
  "mounts",
  "volumes_from",
  "runtime",
] as const;

/** Ids of jobs and names of labels: safe in a container name and a Docker label. */
const JobId = Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$" });

/** Resource caps of one run; each is capped again by the broker's configured maximum. */
export const BrokerLimits = Type.Object(
  {
    cpus: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 64 })),
    memory_mb: Type.Optional(Type.Integer({ minimum: 16, maximum: 1_048_576 })),
    pids: Type.Optional(Type.Integer({ minimum: 8, maximum: 32_768 })),
    tmpfs_mb: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    output_bytes: Type.Optional(Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024 })),
  },
  { additionalProperties: false },
);
export type BrokerLimits = Static<typeof BrokerLimits>;

/** One file placed into the container before it starts (relative to `/workspace`). */
export const BrokerFile = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: 1024 }),
    content_base64: Type.String({ maxLength: 64 * 1024 * 1024 }),
    // Above 0o777 (setuid, setgid, sticky) is a weakening: the sandbox answers 400
    // weakening_refused, like every other one, so the schema lets it through to say so.
    mode: Type.Optional(Type.Integer({ minimum: 0, maximum: 0o7777 })),
  },
  { additionalProperties: false },
);
export type BrokerFile = Static<typeof BrokerFile>;

/**
 * POST /v1/docker/run. The hardening fields (`network`, `privileged`, `read_only`, `cap_add`,
 * `devices`, `host_mounts`, `user`) exist so that a request asking to weaken the sandbox is
 * answered 400 with a clear code instead of being silently ignored.
 */
export const BrokerRunRequest = Type.Object(
  {
    job_id: JobId,
    image: Type.String({ minLength: 1, maxLength: 512 }),
    command: Type.Optional(Type.Array(Type.String({ maxLength: 65_536 }), { maxItems: 1024 })),
    entrypoint: Type.Optional(Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 64 })),
    workdir: Type.Optional(Type.String({ pattern: "^/", maxLength: 1024 })),
    env: Type.Optional(keyedRecord(ENV_NAME, Type.String({ maxLength: 65_536 }))),
    labels: Type.Optional(
      keyedRecord("^[a-z0-9][a-z0-9_.-]{0,127}$", Type.String({ maxLength: 1024 })),
    ),
    limits: Type.Optional(BrokerLimits),
    files: Type.Optional(Type.Array(BrokerFile, { maxItems: 1024 })),
    timeout_seconds: Type.Integer({ minimum: 1, maximum: 86_400, default: 3600 }),
    gpus: Type.Integer({ minimum: 0, maximum: 16, default: 0 }),
    // Docker's init as PID 1 (default true). false: the command itself is PID 1, so that no
    // process of the workload's uid sits above it (init's environment and descriptors are
    // readable to that uid); it must then reap its own children. Not a weakening either way.
    init: Type.Optional(Type.Boolean()),
    network: Type.Optional(Type.String({ maxLength: 128 })),
    privileged: Type.Optional(Type.Boolean()),
    read_only: Type.Optional(Type.Boolean()),
    cap_add: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
    devices: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 64 })),
    host_mounts: Type.Optional(Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 64 })),
    user: Type.Optional(Type.String({ maxLength: 64 })),
    // Docker knobs that only loosen the sandbox: accepted here so that the broker answers them
    // 400 weakening_refused like every other weakening (a 422 would read as a typo).
    security_opt: Type.Optional(Type.Unknown()),
    pid_mode: Type.Optional(Type.Unknown()),
    ipc_mode: Type.Optional(Type.Unknown()),
    userns_mode: Type.Optional(Type.Unknown()),
    uts_mode: Type.Optional(Type.Unknown()),
    cgroup_parent: Type.Optional(Type.Unknown()),
    sysctls: Type.Optional(Type.Unknown()),
    ulimits: Type.Optional(Type.Unknown()),
    binds: Type.Optional(Type.Unknown()),
    mounts: Type.Optional(Type.Unknown()),
    volumes_from: Type.Optional(Type.Unknown()),
    runtime: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type BrokerRunRequest = Static<typeof BrokerRunRequest>;

/** Answer of a finished run. */
export const BrokerRunResponse = Type.Object({
  container_name: Type.String(),
  stdout: Type.String(),
  stderr: Type.String(),
  returncode: Type.Union([Type.Integer(), Type.Null()]),
  timed_out: Type.Boolean(),
  stdout_truncated: Type.Boolean(),
  stderr_truncated: Type.Boolean(),
  oom_killed: Type.Boolean(),
  duration_ms: Type.Integer({ minimum: 0 }),
});
export type BrokerRunResponse = Static<typeof BrokerRunResponse>;

/** POST /v1/docker/cleanup: remove the caller's containers, all or those of one job. */
export const BrokerCleanupRequest = Type.Object(
  { job_id: Type.Optional(JobId), container_name: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
export type BrokerCleanupRequest = Static<typeof BrokerCleanupRequest>;

/** Answer of cleanup. */
export const BrokerCleanupResponse = Type.Object({
  status: Type.String(),
  removed: Type.Array(Type.String()),
});
export type BrokerCleanupResponse = Static<typeof BrokerCleanupResponse>;

/** POST /v1/docker/list: the caller's containers, optionally of one job. */
export const BrokerListRequest = Type.Object(
  { job_id: Type.Optional(JobId) },
  { additionalProperties: false },
);
export type BrokerListRequest = Static<typeof BrokerListRequest>;

/** One container as the broker lists it. */
export const BrokerContainer = Type.Object({
  container_name: Type.String(),
  job_id: Type.String(),
  image: Type.String(),
  state: Type.String(),
  created_at: Type.String({ format: "date-time" }),
  gpus: Type.Integer(),
});
export type BrokerContainer = Static<typeof BrokerContainer>;

/** Answer of list. */
export const BrokerListResponse = Type.Object({ containers: Type.Array(BrokerContainer) });
export type BrokerListResponse = Static<typeof BrokerListResponse>;
