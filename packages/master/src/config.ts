import { join, resolve } from "node:path";
import { loadAdminToken } from "@platform/core";
import { type ImagePolicy, PRODUCTION_IMAGE_POLICY } from "./registry/image-policy.js";

/** Everything the master needs to start. */
export interface MasterConfig {
  host: string;
  port: number;
  /** A postgres:// URL; without it, the embedded database under `dataDir`. */
  databaseUrl?: string;
  /** Where the embedded database and the generated master key live (default ./.platform). */
  dataDir: string;
  adminToken: string;
  network: string;
  apiVersion: string;
  masterUid: number;
  imagePolicy: ImagePolicy;
  proxy: {
    /** Upstream timeout for proxied requests (ms). */
    timeoutMs: number;
    /** Body cap of the signed submission upload (bytes). */
    uploadLimitBytes: number;
    /** How long a replica may trust its cached view of which challenges are active (ms). */
    activeCacheMs: number;
  };
  weights: {
    /** How often to collect and aggregate (seconds); 0 collects only on demand. */
    intervalSeconds: number;
    /** Per-request timeout when calling a challenge's get_weights (ms). */
    timeoutMs: number;
    /** Extra attempts after a failed get_weights call. */
    retries: number;
    /** A JSON file or http(s) URL mapping hotkeys to uids; none means no uid mapping yet. */
    metagraph?: string;
    /** What a failing or empty challenge's emission share becomes: burned to uid 0, or shared by the others. */
    failurePolicy: "burn" | "redistribute";
    /** How many challenges are called at once during a collection. */
    concurrency: number;
    /** How many snapshots to keep in the database (older ones are pruned on each write). */
    keepSnapshots: number;
  };
  broker: BrokerConfig;
}

/** The container broker and the challenge runtime (docs/broker.md). */
export interface BrokerConfig {
  /** "engine" runs each workload as a container; "swarm" as a replicated-job service. */
  backend: "engine" | "swarm";
  /** Images a workload may use must start with one of these; empty refuses every image. */
  allowedImagePrefixes: string[];
  /** Workloads one challenge may run at once. */
  maxConcurrent: number;
  /** GPUs one challenge may hold at once. */
  maxGpus: number;
  /** Whether GPU workloads can run here; undefined detects an nvidia runtime in `docker info`. */
  gpuHost?: boolean;
  /** GPU device ids leased one workload at a time (e.g. 0,1); empty leases by count only. */
  gpuDevices: string[];
  /** Defaults of a workload; a request may only ask for less (tmpfs and output: up to the max). */
  limits: {
    cpus: number;
    memoryMb: number;
    pids: number;
    tmpfsMb: number;
    maxTmpfsMb: number;
    outputBytes: number;
    maxOutputBytes: number;
  };
  /** Caps on the files a request places in /workspace. */
  files: { maxCount: number; maxFileBytes: number; maxTotalBytes: number };
  /** How often the reaper runs (seconds); 0 runs it only at start. */
  reaperIntervalSeconds: number;
  /** How long an image pull may take (ms). */
  pullTimeoutMs: number;
  /** The Docker network challenge containers join. */
  dockerNetwork: string;
  /** The master's URL as challenge containers reach it (PLATFORM_MASTER_URL in their env). */
  masterUrl?: string;
}

/** Flags of `platform master serve`, as the CLI parsed them. */
export interface MasterFlags {
  host?: string;
  port?: number | string;
  databaseUrl?: string;
  dataDir?: string;
}

/** Raised for a configuration a user must fix; the CLI prints its message and exits 1. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

function integer(
  value: string | number | undefined,
  name: string,
  fallback: number,
  min = 0,
): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new ConfigError(`${name} must be an integer >= ${min}, got "${value}"`);
  return n;
}

function number(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new ConfigError(`${name} must be a number > 0, got "${value}"`);
  return n;
}

function flag(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new ConfigError(`${name} must be "true" or "false", got "${value}"`);
}

function brokerBackend(value: string | undefined): "engine" | "swarm" {
  if (value === undefined || value === "") return "engine";
  if (value === "engine" || value === "swarm") return value;
  throw new ConfigError(`PLATFORM_BROKER_BACKEND must be "engine" or "swarm", got "${value}"`);
}

function failurePolicy(value: string | undefined): "burn" | "redistribute" {
  if (value === undefined || value === "") return "burn";
  if (value === "burn" || value === "redistribute") return value;
  throw new ConfigError(
    `PLATFORM_WEIGHTS_FAILURE_POLICY must be "burn" or "redistribute", got "${value}"`,
  );
}

/**
 * Build the master's configuration from CLI flags and the environment (flags win). Refuses to
 * start without an admin token: an admin API nobody can use, or anybody can, is not a default.
 */
export function loadMasterConfig(
  flags: MasterFlags = {},
  env: Record<string, string | undefined> = process.env,
): MasterConfig {
  const admin = loadAdminToken(env);
  if (!admin) {
    throw new ConfigError(
      "No admin token configured. Set ADMIN_TOKEN, or ADMIN_TOKEN_FILE to a file holding it (at least 16 characters), e.g.\n" +
        "  ADMIN_TOKEN=$(openssl rand -hex 24) platform master serve",
    );
  }
  const policy = list(env.PLATFORM_IMAGE_ALLOWLIST);
  const config: MasterConfig = {
    host: flags.host ?? env.PLATFORM_HOST ?? "127.0.0.1",
    port: integer(flags.port ?? env.PLATFORM_PORT, "port", 8080),
    dataDir: resolve(flags.dataDir ?? env.PLATFORM_DATA_DIR ?? ".platform"),
    adminToken: admin.token,
    network: env.PLATFORM_NETWORK ?? "platform",
    apiVersion: "1.0",
    masterUid: integer(env.PLATFORM_MASTER_UID, "PLATFORM_MASTER_UID", 0),
    imagePolicy: {
      allowedPrefixes: policy ?? PRODUCTION_IMAGE_POLICY.allowedPrefixes,
      requireTagOrDigest: env.PLATFORM_IMAGE_REQUIRE_TAG !== "false",
      forbidLatest: env.PLATFORM_IMAGE_ALLOW_LATEST !== "true",
    },
    proxy: {
      timeoutMs: integer(env.PLATFORM_PROXY_TIMEOUT_MS, "PLATFORM_PROXY_TIMEOUT_MS", 30_000, 1),
      uploadLimitBytes: integer(
        env.PLATFORM_UPLOAD_LIMIT_BYTES,
        "PLATFORM_UPLOAD_LIMIT_BYTES",
        2_000_000,
        1,
      ),
      activeCacheMs: integer(env.PLATFORM_PROXY_CACHE_MS, "PLATFORM_PROXY_CACHE_MS", 1000),
    },
    weights: {
      intervalSeconds: integer(
        env.PLATFORM_WEIGHTS_INTERVAL_SECONDS,
        "PLATFORM_WEIGHTS_INTERVAL_SECONDS",
        300,
      ),
      timeoutMs: integer(env.PLATFORM_WEIGHTS_TIMEOUT_MS, "PLATFORM_WEIGHTS_TIMEOUT_MS", 10_000, 1),
      retries: integer(env.PLATFORM_WEIGHTS_RETRIES, "PLATFORM_WEIGHTS_RETRIES", 2),
      failurePolicy: failurePolicy(env.PLATFORM_WEIGHTS_FAILURE_POLICY),
      concurrency: integer(env.PLATFORM_WEIGHTS_CONCURRENCY, "PLATFORM_WEIGHTS_CONCURRENCY", 8, 1),
      keepSnapshots: integer(
        env.PLATFORM_WEIGHTS_KEEP_SNAPSHOTS,
        "PLATFORM_WEIGHTS_KEEP_SNAPSHOTS",
        2016,
        1,
      ),
    },
    broker: {
      backend: brokerBackend(env.PLATFORM_BROKER_BACKEND),
      allowedImagePrefixes: list(env.PLATFORM_BROKER_IMAGES) ?? [],
      maxConcurrent: integer(
        env.PLATFORM_BROKER_MAX_CONCURRENT,
        "PLATFORM_BROKER_MAX_CONCURRENT",
        4,
        1,
      ),
      maxGpus: integer(env.PLATFORM_BROKER_MAX_GPUS, "PLATFORM_BROKER_MAX_GPUS", 0),
      gpuDevices: list(env.PLATFORM_BROKER_GPU_DEVICES) ?? [],
      limits: {
        cpus: number(env.PLATFORM_BROKER_CPUS, "PLATFORM_BROKER_CPUS", 2),
        memoryMb: integer(env.PLATFORM_BROKER_MEMORY_MB, "PLATFORM_BROKER_MEMORY_MB", 4096, 16),
        pids: integer(env.PLATFORM_BROKER_PIDS, "PLATFORM_BROKER_PIDS", 512, 8),
        tmpfsMb: integer(env.PLATFORM_BROKER_TMPFS_MB, "PLATFORM_BROKER_TMPFS_MB", 256, 1),
        maxTmpfsMb: integer(
          env.PLATFORM_BROKER_MAX_TMPFS_MB,
          "PLATFORM_BROKER_MAX_TMPFS_MB",
          2048,
          1,
        ),
        outputBytes: integer(
          env.PLATFORM_BROKER_OUTPUT_BYTES,
          "PLATFORM_BROKER_OUTPUT_BYTES",
          1024 * 1024,
          1024,
        ),
        maxOutputBytes: integer(
          env.PLATFORM_BROKER_MAX_OUTPUT_BYTES,
          "PLATFORM_BROKER_MAX_OUTPUT_BYTES",
          16 * 1024 * 1024,
          1024,
        ),
      },
      files: {
        maxCount: integer(env.PLATFORM_BROKER_MAX_FILES, "PLATFORM_BROKER_MAX_FILES", 256, 1),
        maxFileBytes: integer(
          env.PLATFORM_BROKER_MAX_FILE_BYTES,
          "PLATFORM_BROKER_MAX_FILE_BYTES",
          8 * 1024 * 1024,
          1,
        ),
        maxTotalBytes: integer(
          env.PLATFORM_BROKER_MAX_FILES_BYTES,
          "PLATFORM_BROKER_MAX_FILES_BYTES",
          16 * 1024 * 1024,
          1,
        ),
      },
      reaperIntervalSeconds: integer(
        env.PLATFORM_BROKER_REAPER_SECONDS,
        "PLATFORM_BROKER_REAPER_SECONDS",
        30,
      ),
      pullTimeoutMs: integer(
        env.PLATFORM_BROKER_PULL_TIMEOUT_MS,
        "PLATFORM_BROKER_PULL_TIMEOUT_MS",
        300_000,
        1,
      ),
      dockerNetwork: env.PLATFORM_DOCKER_NETWORK || "platform",
    },
  };
  const databaseUrl = flags.databaseUrl ?? env.DATABASE_URL;
  if (databaseUrl) config.databaseUrl = databaseUrl;
  if (env.PLATFORM_METAGRAPH) config.weights.metagraph = env.PLATFORM_METAGRAPH;
  const gpuHost = flag(env.PLATFORM_BROKER_GPU_HOST, "PLATFORM_BROKER_GPU_HOST");
  if (gpuHost !== undefined) config.broker.gpuHost = gpuHost;
  if (env.PLATFORM_MASTER_URL) config.broker.masterUrl = env.PLATFORM_MASTER_URL;
  return config;
}

/** The embedded database's folder inside the data dir. */
export function embeddedDatabaseDir(config: MasterConfig): string {
  return join(config.dataDir, "pglite");
}
