import { join, resolve } from "node:path";
import {
  DEFAULT_FILE_CAPS,
  HARDENED_LIMITS,
  type TaskFileCaps,
  type TaskLimitPolicy,
} from "@platform/challenge-sdk/sandbox";
import { ConfigError, type ConfigIssue, loadAdminToken, readEnvironment } from "@platform/core";
import { type Static, Type } from "@sinclair/typebox";
import { readDatabaseUrl } from "./database-url.js";
import { loadMetricsTokenHash } from "./ops/metrics-token.js";
import { type ImagePolicy, PRODUCTION_IMAGE_POLICY } from "./registry/image-policy.js";
import type { InternalUrlPolicy } from "./registry/internal-url-policy.js";

/** Everything the master needs to start. */
export interface MasterConfig {
  /** The public listener: registry, proxy, submission read, weights, dashboard. */
  host: string;
  port: number;
  /**
   * The admin listener: admin pages and API, container broker. Its own origin, so challenge
   * content served on the public one can never script it (docs/master.md, "Two listeners").
   */
  adminHost: string;
  adminPort: number;
  /**
   * A postgres:// URL (DATABASE_URL, or the file DATABASE_URL_FILE names, with the password of
   * DATABASE_PASSWORD_FILE put in); without it, the embedded database under `dataDir`. It may
   * hold a password: never log it (core's `redactDatabaseUrl`).
   */
  databaseUrl?: string;
  /**
   * How long the master waits at start for PostgreSQL to accept connections (seconds): a fresh
   * deployment starts it beside the database. 0 tries once.
   */
  databaseWaitSeconds: number;
  /** Where the embedded database and the generated master key live (default ./.platform). */
  dataDir: string;
  adminToken: string;
  /**
   * sha256 of the scrape-only token for GET /metrics (PLATFORM_METRICS_TOKEN or its _FILE);
   * absent: only the admin token scrapes. The token itself is never kept.
   */
  metricsTokenHash?: string;
  network: string;
  apiVersion: string;
  masterUid: number;
  imagePolicy: ImagePolicy;
  /** What a challenge's internal_base_url may name (link-local and metadata refused by default). */
  internalUrlPolicy: InternalUrlPolicy;
  proxy: {
    /** Upstream timeout for proxied requests (ms). */
    timeoutMs: number;
    /** Body cap of the signed submission upload (bytes). */
    uploadLimitBytes: number;
    /** How long a replica may trust its cached view of which challenges are active (ms). */
    activeCacheMs: number;
    /** Threads checking upload signatures off the event loop; 0 checks on the main thread. */
    verifyWorkers: number;
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
  /** The reconciler that keeps every active challenge's container running (docs/master.md). */
  reconciler: ReconcilerConfig;
  /** The chain (docs/chain.md): absent when PLATFORM_CHAIN_ENDPOINTS is unset. */
  chain?: ChainConfig;
}

/** Where the master reads the metagraph and, as the subnet owner's validator, sets weights. */
export interface ChainConfig {
  /** ws:// or wss:// URLs, tried in order (failover to the next on a dead or stalled one). */
  endpoints: string[];
  /** The subnet. */
  netuid: number;
  /** Read hotkey -> uid from the chain (PLATFORM_METAGRAPH=chain). */
  metagraphFromChain: boolean;
  /** How long a metagraph read is reused (seconds). */
  metagraphCacheSeconds: number;
  /** A wallet hotkey file or a saved `platform keys` file: run the validator in-process. */
  validatorHotkeyFile?: string;
  /** Submit an all-burn vector when nothing valid exists (off: keep the chain's last weights). */
  allowBurn: boolean;
  /** Per-call timeout against the chain (ms). */
  callTimeoutMs: number;
  /** The chain's block time (ms): a head silent for 3 of them marks the endpoint stalled. */
  blockTimeMs: number;
  /**
   * PLATFORM_DRAND_PUBLIC_KEY: the drand beacon key commits are encrypted to (96-byte G2, hex).
   * Unset: drand quicknet on finney and testnet, the local subtensor's own key on it.
   */
  drandPublicKey?: string;
  /** Failed collections in a row a challenge with emission may have before weights are held. */
  healthGateGrace: number;
  /** Commit even while the health gate is closed (logged at every round). */
  overrideHealthGate: boolean;
}

/** The reconciler (docs/master.md, "The reconciler"). */
export interface ReconcilerConfig {
  /** Run the reconciler (off: challenge containers start only on an operator's restart). */
  enabled: boolean;
  /** Seconds between full passes (a registry change triggers one at once). */
  intervalSeconds: number;
  /** How long the lease lasts without a renewal (seconds); renewed every third of it. */
  leaseSeconds: number;
  /** The first delay between two restarts of a failing challenge (seconds); it doubles. */
  backoffSeconds: number;
  /** The longest delay between two restarts (seconds). */
  backoffMaxSeconds: number;
  /** How long a (re)started container may take to become ready before probes count (seconds). */
  startGraceSeconds: number;
  /** Failed readiness probes in a row after which a running challenge is restarted. */
  unhealthyAfter: number;
  /** How long an update's new container may take to become ready before it is rolled back (seconds). */
  updateReadySeconds: number;
  /** How long an update waits for the old container's in-flight requests before stopping it (seconds). */
  drainSeconds: number;
  /** "engine" runs each active challenge as a container; "swarm" as a Swarm service (docs/master.md). */
  backend: "engine" | "swarm";
  /**
   * How the master reaches a challenge's service on the swarm backend: "dns", its service name
   * on the network (the master runs on that network, as in docker-stack.yml); "task", a running
   * task's address on this node's docker_gwbridge (a master outside the swarm's networks).
   */
  swarmAddress: "dns" | "task";
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
  limits: TaskLimitPolicy;
  /** Caps on the files a request places in /workspace. */
  files: TaskFileCaps;
  /** How often the reaper runs (seconds); 0 runs it only at start. */
  reaperIntervalSeconds: number;
  /** How long an image pull may take (ms). */
  pullTimeoutMs: number;
  /** The Docker network challenge containers join. */
  dockerNetwork: string;
  /**
   * The master's admin listener (where the broker is) as challenge containers reach it
   * (PLATFORM_MASTER_URL in their env).
   */
  masterUrl?: string;
}

/** Flags of `platform master serve`, as the CLI parsed them. */
export interface MasterFlags {
  host?: string;
  port?: number | string;
  adminHost?: string;
  adminPort?: number | string;
  databaseUrl?: string;
  dataDir?: string;
}

/** The one ConfigError of every platform package (core's), for callers that import it here. */
export { ConfigError };

const int = (minimum: number, fallback: number, description: string, maximum?: number) =>
  Type.Integer({
    minimum,
    ...(maximum === undefined ? {} : { maximum }),
    default: fallback,
    description,
  });
const bool = (fallback: boolean, description: string) =>
  Type.Boolean({ default: fallback, description });
const text = (description: string, fallback: string, pattern?: string) =>
  Type.String({ minLength: 1, default: fallback, description, ...(pattern ? { pattern } : {}) });
const optionalText = (description: string, pattern?: string) =>
  Type.Optional(Type.String({ minLength: 1, description, ...(pattern ? { pattern } : {}) }));

/**
 * Every environment variable the master reads (docs/master.md, docs/broker.md, docs/weights.md),
 * checked in one pass so a bad deployment hears about all of its mistakes at once. The admin
 * token is read by core's `loadAdminToken` (it may come from a file) and the master key by
 * `loadMasterKey`.
 */
const MasterEnvironment = Type.Object({
  PLATFORM_HOST: text("address to listen on", "127.0.0.1"),
  PLATFORM_PORT: int(0, 8080, "port to listen on (0 picks a free one)", 65_535),
  PLATFORM_ADMIN_HOST: text("address the admin pages, admin API and broker listen on", "127.0.0.1"),
  PLATFORM_ADMIN_PORT: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 65_535,
      description: "port of the admin listener (default: PLATFORM_PORT + 1; 0 picks a free one)",
    }),
  ),
  PLATFORM_DATA_DIR: text("embedded database and master key", ".platform"),
  DATABASE_URL: optionalText("PostgreSQL URL", "^postgres(ql)?://"),
  DATABASE_URL_FILE: optionalText("a file holding the PostgreSQL URL (a secret)"),
  DATABASE_PASSWORD_FILE: optionalText(
    "a file whose first line is the password of DATABASE_URL (given without one)",
  ),
  PLATFORM_DATABASE_WAIT_SECONDS: int(
    0,
    60,
    "how long to wait at start for PostgreSQL to accept connections; 0 tries once",
    3600,
  ),
  PLATFORM_NETWORK: text("network in the public registry", "platform"),
  PLATFORM_MASTER_UID: int(0, 0, "master_uid in the public registry"),
  PLATFORM_IMAGE_ALLOWLIST: optionalText("comma-separated image prefixes the registry accepts"),
  PLATFORM_IMAGE_REQUIRE_TAG: bool(true, "refuse images with neither tag nor digest"),
  PLATFORM_ALLOW_LINK_LOCAL_UPSTREAMS: bool(
    false,
    "accept link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10) as internal_base_url",
  ),
  PLATFORM_IMAGE_ALLOW_LATEST: bool(false, "accept the moving latest tag"),
  PLATFORM_PROXY_TIMEOUT_MS: int(1, 30_000, "upstream timeout of the proxy"),
  PLATFORM_UPLOAD_LIMIT_BYTES: int(1, 2_000_000, "body cap of signed submission uploads"),
  PLATFORM_PROXY_CACHE_MS: int(0, 1000, "how long the active-challenge view is cached"),
  PLATFORM_PROXY_VERIFY_WORKERS: int(
    0,
    0,
    "threads checking upload signatures; 0 = main thread",
    64,
  ),
  PLATFORM_WEIGHTS_INTERVAL_SECONDS: int(0, 300, "collection period; 0 = on demand only"),
  PLATFORM_WEIGHTS_TIMEOUT_MS: int(1, 10_000, "per get_weights attempt"),
  PLATFORM_WEIGHTS_RETRIES: int(0, 2, "extra attempts for retryable failures"),
  PLATFORM_WEIGHTS_FAILURE_POLICY: Type.Union(
    [Type.Literal("burn"), Type.Literal("redistribute")],
    {
      default: "burn",
      description: "what a failing challenge's share becomes",
    },
  ),
  PLATFORM_WEIGHTS_CONCURRENCY: int(1, 8, "challenges called at once"),
  PLATFORM_WEIGHTS_KEEP_SNAPSHOTS: int(1, 2016, "snapshots kept in the database"),
  PLATFORM_METAGRAPH: optionalText(
    "`chain` (read from PLATFORM_CHAIN_ENDPOINTS), or a JSON file, file: URL or http(s) URL mapping hotkeys to uids",
  ),
  PLATFORM_CHAIN_ENDPOINTS: optionalText(
    "comma-separated ws:// or wss:// subtensor endpoints, tried in order",
  ),
  PLATFORM_NETUID: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 65_535, description: "the subnet (not 0: root)" }),
  ),
  PLATFORM_METAGRAPH_CACHE_SECONDS: int(0, 300, "how long a chain metagraph read is reused"),
  PLATFORM_VALIDATOR_HOTKEY_FILE: optionalText(
    "a wallet hotkey file or a saved platform key: set weights on chain from the master",
  ),
  PLATFORM_VALIDATOR_ALLOW_BURN: Type.Boolean({
    default: false,
    description: "submit an all-burn vector when nothing valid exists",
  }),
  PLATFORM_CHAIN_TIMEOUT_MS: int(100, 10_000, "per call to the chain"),
  PLATFORM_CHAIN_BLOCK_MS: int(10, 12_000, "the chain's block time"),
  PLATFORM_DRAND_PUBLIC_KEY: optionalText(
    "the drand beacon's public key (96-byte compressed G2, hex) weight commits are encrypted to",
  ),
  PLATFORM_HEALTH_GATE_GRACE: int(
    0,
    3,
    "failed collections in a row a challenge with emission may have before weights are held",
    1000,
  ),
  PLATFORM_HEALTH_GATE_OVERRIDE: Type.Boolean({
    default: false,
    description: "set weights even while a challenge with emission keeps failing its collections",
  }),
  PLATFORM_BROKER_BACKEND: Type.Union([Type.Literal("engine"), Type.Literal("swarm")], {
    default: "engine",
    description: "where workloads run",
  }),
  PLATFORM_BROKER_IMAGES: optionalText("comma-separated image prefixes workloads may use"),
  PLATFORM_BROKER_MAX_CONCURRENT: int(1, 4, "workloads per challenge"),
  PLATFORM_BROKER_MAX_GPUS: int(0, 0, "GPUs per challenge"),
  PLATFORM_BROKER_GPU_HOST: Type.Optional(Type.Boolean({ description: "unset: detected" })),
  PLATFORM_BROKER_GPU_DEVICES: optionalText("device ids leased one workload at a time"),
  // Workload defaults are the SDK sandbox's hardened ones (one definition, HARDENED_LIMITS).
  PLATFORM_BROKER_CPUS: Type.Number({
    exclusiveMinimum: 0,
    default: HARDENED_LIMITS.cpus,
    description: "CPUs",
  }),
  PLATFORM_BROKER_MEMORY_MB: int(16, HARDENED_LIMITS.memoryMb, "memory of a workload"),
  PLATFORM_BROKER_PIDS: int(8, HARDENED_LIMITS.pids, "processes of a workload"),
  PLATFORM_BROKER_TMPFS_MB: int(1, HARDENED_LIMITS.tmpfsMb, "default /tmp size"),
  PLATFORM_BROKER_MAX_TMPFS_MB: int(1, HARDENED_LIMITS.maxTmpfsMb, "largest /tmp size"),
  PLATFORM_BROKER_OUTPUT_BYTES: int(1024, HARDENED_LIMITS.outputBytes, "output kept per stream"),
  PLATFORM_BROKER_MAX_OUTPUT_BYTES: int(
    1024,
    HARDENED_LIMITS.maxOutputBytes,
    "largest output kept",
  ),
  PLATFORM_BROKER_MAX_FILES: int(1, DEFAULT_FILE_CAPS.maxCount, "files per request"),
  PLATFORM_BROKER_MAX_FILE_BYTES: int(1, DEFAULT_FILE_CAPS.maxFileBytes, "bytes per file"),
  PLATFORM_BROKER_MAX_FILES_BYTES: int(1, DEFAULT_FILE_CAPS.maxTotalBytes, "bytes of all files"),
  PLATFORM_BROKER_REAPER_SECONDS: int(0, 30, "reaper period; 0 reaps only at start"),
  PLATFORM_BROKER_PULL_TIMEOUT_MS: int(1, 300_000, "image pull timeout"),
  PLATFORM_RECONCILER: bool(true, "keep every active challenge's container running"),
  PLATFORM_RECONCILE_INTERVAL_SECONDS: int(1, 10, "seconds between reconciler passes", 3600),
  PLATFORM_RECONCILE_LEASE_SECONDS: int(3, 30, "reconciler lease length", 3600),
  PLATFORM_RECONCILE_BACKOFF_SECONDS: int(
    1,
    5,
    "first delay between restarts of a failing challenge",
  ),
  PLATFORM_RECONCILE_BACKOFF_MAX_SECONDS: int(1, 300, "longest delay between restarts"),
  PLATFORM_RECONCILE_START_GRACE_SECONDS: int(
    0,
    30,
    "time a started challenge has to become ready",
  ),
  PLATFORM_RECONCILE_UNHEALTHY_AFTER: int(
    1,
    3,
    "failed readiness probes in a row before a restart",
    100,
  ),
  PLATFORM_UPDATE_READY_SECONDS: int(
    1,
    60,
    "seconds an update's new container has to become ready before rollback",
    3600,
  ),
  PLATFORM_CHALLENGE_BACKEND: Type.Union([Type.Literal("engine"), Type.Literal("swarm")], {
    default: "engine",
    description: "where active challenges run: containers on the engine, or Swarm services",
  }),
  PLATFORM_CHALLENGE_SWARM_ADDRESS: Type.Union([Type.Literal("dns"), Type.Literal("task")], {
    default: "dns",
    description:
      "how the master reaches a challenge's Swarm service: its DNS name, or a task's address",
  }),
  PLATFORM_UPDATE_DRAIN_SECONDS: int(
    0,
    30,
    "seconds an update waits for the old container's in-flight requests",
    3600,
  ),
  PLATFORM_DOCKER_NETWORK: text(
    "network challenge containers join",
    "platform",
    "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
  ),
  PLATFORM_MASTER_URL: optionalText(
    "the master's admin listener (the broker) as challenge containers reach it",
    "^https?://[^\\s]+$",
  ),
});

// A flag stands in for its variable, and an issue names the flag the user typed.
const FLAGS = {
  host: ["PLATFORM_HOST", "--host"],
  port: ["PLATFORM_PORT", "--port"],
  adminHost: ["PLATFORM_ADMIN_HOST", "--admin-host"],
  adminPort: ["PLATFORM_ADMIN_PORT", "--admin-port"],
  databaseUrl: ["DATABASE_URL", "--database-url"],
  dataDir: ["PLATFORM_DATA_DIR", "--data-dir"],
} as const;

function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

/**
 * Build the master's configuration from CLI flags and the environment (flags win). Every bad
 * setting is reported at once in one {@link ConfigError} (never with its value). Refuses to
 * start without an admin token: an admin API nobody can use, or anybody can, is not a default.
 */
export function loadMasterConfig(
  flags: MasterFlags = {},
  env: Record<string, string | undefined> = process.env,
): MasterConfig {
  const issues: ConfigIssue[] = [];
  let adminToken = "";
  try {
    const admin = loadAdminToken(env);
    if (admin) adminToken = admin.token;
    else
      issues.push({
        variable: "ADMIN_TOKEN",
        message:
          "No admin token configured. Set ADMIN_TOKEN, or ADMIN_TOKEN_FILE to a file holding it (at least 16 characters), e.g.\n" +
          "      ADMIN_TOKEN=$(openssl rand -hex 24) platform master serve",
      });
  } catch (error) {
    const variable = env.ADMIN_TOKEN ? "ADMIN_TOKEN" : "ADMIN_TOKEN_FILE";
    issues.push({ variable, message: (error as Error).message });
  }
  let metricsTokenHash: string | null = null;
  try {
    metricsTokenHash = loadMetricsTokenHash(env);
  } catch (error) {
    const variable = env.PLATFORM_METRICS_TOKEN
      ? "PLATFORM_METRICS_TOKEN"
      : "PLATFORM_METRICS_TOKEN_FILE";
    issues.push({ variable, message: (error as Error).message });
  }

  const source: Record<string, string | undefined> = { ...env };
  const flagOf = new Map<string, string>();
  for (const [key, [variable, flag]] of Object.entries(FLAGS)) {
    const value = flags[key as keyof MasterFlags];
    if (value === undefined) continue;
    source[variable] = String(value);
    flagOf.set(variable, flag);
  }
  const read = readEnvironment(MasterEnvironment, source);
  if (!read.ok) {
    for (const issue of read.issues)
      issues.push({ ...issue, variable: flagOf.get(issue.variable) ?? issue.variable });
  }
  if (read.ok) {
    const { PLATFORM_PORT: port, PLATFORM_ADMIN_PORT: adminPort } = read.value;
    // Port 0 asks for any free port: the admin listener then gets its own free one too.
    const admin = adminPort ?? (port === 0 ? 0 : port + 1);
    const variable = flagOf.get("PLATFORM_ADMIN_PORT") ?? "PLATFORM_ADMIN_PORT";
    if (admin > 65_535)
      issues.push({
        variable,
        message: `the default admin port (${flagOf.get("PLATFORM_PORT") ?? "PLATFORM_PORT"} + 1) is past 65535: set the admin port`,
      });
    else if (admin !== 0 && admin === port)
      issues.push({ variable, message: "must differ from the public port" });
  }
  if (read.ok) issues.push(...chainIssues(read.value));
  // Only the reconciler runs challenges as services: an operator's restart would start a container.
  if (
    read.ok &&
    read.value.PLATFORM_CHALLENGE_BACKEND === "swarm" &&
    !read.value.PLATFORM_RECONCILER
  )
    issues.push({
      variable: "PLATFORM_CHALLENGE_BACKEND",
      message: "swarm needs the reconciler: set PLATFORM_RECONCILER=true",
    });
  const database = read.ok
    ? readDatabaseUrl(read.value, flagOf.get("DATABASE_URL") ?? "DATABASE_URL")
    : undefined;
  if (database && !database.ok) issues.push(...database.issues);
  if (!read.ok || !database?.ok || issues.length > 0)
    throw new ConfigError(issues, "master configuration");
  const e = read.value;

  const config: MasterConfig = {
    host: e.PLATFORM_HOST,
    port: e.PLATFORM_PORT,
    adminHost: e.PLATFORM_ADMIN_HOST,
    adminPort: e.PLATFORM_ADMIN_PORT ?? (e.PLATFORM_PORT === 0 ? 0 : e.PLATFORM_PORT + 1),
    dataDir: resolve(e.PLATFORM_DATA_DIR),
    databaseWaitSeconds: e.PLATFORM_DATABASE_WAIT_SECONDS,
    adminToken,
    network: e.PLATFORM_NETWORK,
    apiVersion: "1.0",
    masterUid: e.PLATFORM_MASTER_UID,
    internalUrlPolicy: { allowLinkLocal: e.PLATFORM_ALLOW_LINK_LOCAL_UPSTREAMS },
    imagePolicy: {
      allowedPrefixes: list(e.PLATFORM_IMAGE_ALLOWLIST) ?? PRODUCTION_IMAGE_POLICY.allowedPrefixes,
      requireTagOrDigest: e.PLATFORM_IMAGE_REQUIRE_TAG,
      forbidLatest: !e.PLATFORM_IMAGE_ALLOW_LATEST,
    },
    proxy: {
      timeoutMs: e.PLATFORM_PROXY_TIMEOUT_MS,
      uploadLimitBytes: e.PLATFORM_UPLOAD_LIMIT_BYTES,
      activeCacheMs: e.PLATFORM_PROXY_CACHE_MS,
      verifyWorkers: e.PLATFORM_PROXY_VERIFY_WORKERS,
    },
    weights: {
      intervalSeconds: e.PLATFORM_WEIGHTS_INTERVAL_SECONDS,
      timeoutMs: e.PLATFORM_WEIGHTS_TIMEOUT_MS,
      retries: e.PLATFORM_WEIGHTS_RETRIES,
      failurePolicy: e.PLATFORM_WEIGHTS_FAILURE_POLICY,
      concurrency: e.PLATFORM_WEIGHTS_CONCURRENCY,
      keepSnapshots: e.PLATFORM_WEIGHTS_KEEP_SNAPSHOTS,
    },
    broker: {
      backend: e.PLATFORM_BROKER_BACKEND,
      allowedImagePrefixes: list(e.PLATFORM_BROKER_IMAGES) ?? [],
      maxConcurrent: e.PLATFORM_BROKER_MAX_CONCURRENT,
      maxGpus: e.PLATFORM_BROKER_MAX_GPUS,
      gpuDevices: list(e.PLATFORM_BROKER_GPU_DEVICES) ?? [],
      limits: {
        cpus: e.PLATFORM_BROKER_CPUS,
        memoryMb: e.PLATFORM_BROKER_MEMORY_MB,
        pids: e.PLATFORM_BROKER_PIDS,
        tmpfsMb: e.PLATFORM_BROKER_TMPFS_MB,
        maxTmpfsMb: e.PLATFORM_BROKER_MAX_TMPFS_MB,
        outputBytes: e.PLATFORM_BROKER_OUTPUT_BYTES,
        maxOutputBytes: e.PLATFORM_BROKER_MAX_OUTPUT_BYTES,
      },
      files: {
        maxCount: e.PLATFORM_BROKER_MAX_FILES,
        maxFileBytes: e.PLATFORM_BROKER_MAX_FILE_BYTES,
        maxTotalBytes: e.PLATFORM_BROKER_MAX_FILES_BYTES,
      },
      reaperIntervalSeconds: e.PLATFORM_BROKER_REAPER_SECONDS,
      pullTimeoutMs: e.PLATFORM_BROKER_PULL_TIMEOUT_MS,
      dockerNetwork: e.PLATFORM_DOCKER_NETWORK,
    },
    reconciler: {
      enabled: e.PLATFORM_RECONCILER,
      intervalSeconds: e.PLATFORM_RECONCILE_INTERVAL_SECONDS,
      leaseSeconds: e.PLATFORM_RECONCILE_LEASE_SECONDS,
      backoffSeconds: e.PLATFORM_RECONCILE_BACKOFF_SECONDS,
      backoffMaxSeconds: Math.max(
        e.PLATFORM_RECONCILE_BACKOFF_MAX_SECONDS,
        e.PLATFORM_RECONCILE_BACKOFF_SECONDS,
      ),
      startGraceSeconds: e.PLATFORM_RECONCILE_START_GRACE_SECONDS,
      unhealthyAfter: e.PLATFORM_RECONCILE_UNHEALTHY_AFTER,
      updateReadySeconds: e.PLATFORM_UPDATE_READY_SECONDS,
      drainSeconds: e.PLATFORM_UPDATE_DRAIN_SECONDS,
      backend: e.PLATFORM_CHALLENGE_BACKEND,
      swarmAddress: e.PLATFORM_CHALLENGE_SWARM_ADDRESS,
    },
  };
  if (database.url) config.databaseUrl = database.url;
  if (metricsTokenHash) config.metricsTokenHash = metricsTokenHash;
  if (e.PLATFORM_METAGRAPH && e.PLATFORM_METAGRAPH !== "chain")
    config.weights.metagraph = e.PLATFORM_METAGRAPH;
  const endpoints = list(e.PLATFORM_CHAIN_ENDPOINTS);
  if (endpoints?.length && e.PLATFORM_NETUID !== undefined) {
    config.chain = {
      endpoints,
      netuid: e.PLATFORM_NETUID,
      metagraphFromChain: e.PLATFORM_METAGRAPH === "chain",
      metagraphCacheSeconds: e.PLATFORM_METAGRAPH_CACHE_SECONDS,
      allowBurn: e.PLATFORM_VALIDATOR_ALLOW_BURN,
      callTimeoutMs: e.PLATFORM_CHAIN_TIMEOUT_MS,
      blockTimeMs: e.PLATFORM_CHAIN_BLOCK_MS,
      healthGateGrace: e.PLATFORM_HEALTH_GATE_GRACE,
      overrideHealthGate: e.PLATFORM_HEALTH_GATE_OVERRIDE,
    };
    if (e.PLATFORM_DRAND_PUBLIC_KEY)
      config.chain.drandPublicKey = e.PLATFORM_DRAND_PUBLIC_KEY.trim();
    if (e.PLATFORM_VALIDATOR_HOTKEY_FILE)
      config.chain.validatorHotkeyFile = resolve(e.PLATFORM_VALIDATOR_HOTKEY_FILE);
  }
  if (e.PLATFORM_BROKER_GPU_HOST !== undefined) config.broker.gpuHost = e.PLATFORM_BROKER_GPU_HOST;
  if (e.PLATFORM_MASTER_URL) config.broker.masterUrl = e.PLATFORM_MASTER_URL;
  return config;
}

/** The chain settings that only make sense together; each problem names its variable. */
function chainIssues(e: Static<typeof MasterEnvironment>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const endpoints = list(e.PLATFORM_CHAIN_ENDPOINTS) ?? [];
  for (const endpoint of endpoints) {
    if (!/^wss?:\/\/[^\s/]+/.test(endpoint)) {
      issues.push({
        variable: "PLATFORM_CHAIN_ENDPOINTS",
        message: "every endpoint must be a ws:// or wss:// URL",
      });
      break;
    }
  }
  const needsChain: [string, boolean][] = [
    ["PLATFORM_METAGRAPH", e.PLATFORM_METAGRAPH === "chain"],
    ["PLATFORM_VALIDATOR_HOTKEY_FILE", Boolean(e.PLATFORM_VALIDATOR_HOTKEY_FILE)],
  ];
  for (const [variable, wanted] of needsChain) {
    if (!wanted) continue;
    if (endpoints.length === 0)
      issues.push({ variable, message: "needs PLATFORM_CHAIN_ENDPOINTS (the chain to use)" });
    if (e.PLATFORM_NETUID === undefined)
      issues.push({ variable, message: "needs PLATFORM_NETUID (the subnet)" });
  }
  const drandKey = e.PLATFORM_DRAND_PUBLIC_KEY?.trim();
  if (drandKey && !/^(0x)?[0-9a-fA-F]{192}$/.test(drandKey))
    issues.push({
      variable: "PLATFORM_DRAND_PUBLIC_KEY",
      message: "must be a 96-byte compressed G2 public key in hex (192 hex digits, 0x optional)",
    });
  if (endpoints.length > 0 && e.PLATFORM_NETUID === undefined && issues.length === 0)
    issues.push({
      variable: "PLATFORM_NETUID",
      message: "is required with PLATFORM_CHAIN_ENDPOINTS",
    });
  return issues;
}

/** The embedded database's folder inside the data dir. */
export function embeddedDatabaseDir(config: MasterConfig): string {
  return join(config.dataDir, "pglite");
}
