import { randomBytes } from "node:crypto";
import {
  checkRunRequest,
  dockerMessage,
  type PlacedFile,
  type ResolvedTaskLimits,
  resolveTaskUser,
  SandboxRefusal,
  WORKSPACE,
} from "@platform/challenge-sdk/sandbox";
import { type BrokerRunRequest, HttpError } from "@platform/core";
import type { BrokerConfig } from "../config.js";
import type { ChallengeRow } from "../registry/challenge-row.js";
import { enforceImagePolicy, type ImagePolicy } from "../registry/image-policy.js";
import {
  type EngineFacts,
  type Executor,
  ExecutorError,
  type ExecutorKind,
  type PreparedImage,
  type WorkloadSpec,
} from "./executor.js";
import type { RunLedger } from "./run-ledger.js";
import { SWARM_MAX_FILE_BYTES } from "./swarm-executor.js";

/**
 * Run `check` (a sandbox rule of `@platform/challenge-sdk/sandbox`), answering its refusal as
 * the broker's 400 with the same code and message, and its details (`field`, `maximum`,
 * `index`) as extra body fields.
 */
export function asBrokerRefusal<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof SandboxRefusal)) throw error;
    throw new HttpError(400, error.code, error.message, {
      extra: { ...error.details },
      cause: error,
    });
  }
}

/**
 * The broker's image policy: registry/image-policy.ts's validator with the broker's prefixes
 * (PLATFORM_BROKER_IMAGES). An empty list refuses every image: workloads run miners' code,
 * so only images an operator listed may carry it. Tags are not required (a task image is
 * the challenge's to pin).
 */
export function brokerImagePolicy(config: Pick<BrokerConfig, "allowedImagePrefixes">): ImagePolicy {
  return {
    allowedPrefixes: config.allowedImagePrefixes,
    whenNoPrefixes: "refuse-all",
    setting: "PLATFORM_BROKER_IMAGES",
    requireTagOrDigest: false,
    forbidLatest: false,
  };
}

/** What the rules decided about a request that passed them. */
export interface CheckedWorkload {
  limits: ResolvedTaskLimits;
  files: PlacedFile[];
}

/**
 * Every rule a request must pass that needs neither the engine nor the database, so it is
 * refused before anything is written or created: the sandbox's (no weakening, no reserved
 * label, limits within the configured maxima, files well-formed and within the caps), the
 * image policy, and what the swarm backend cannot ship. 400 with a stable code.
 */
export function checkWorkloadRequest(
  request: BrokerRunRequest,
  config: BrokerConfig,
  backend: ExecutorKind,
): CheckedWorkload {
  const fileCaps = { ...config.files };
  if (backend === "swarm")
    fileCaps.maxFileBytes = Math.min(fileCaps.maxFileBytes, SWARM_MAX_FILE_BYTES);
  const checked = asBrokerRefusal(() =>
    checkRunRequest(request, { limits: config.limits, fileCaps }),
  );
  enforceImagePolicy(request.image, brokerImagePolicy(config));
  const empty =
    backend === "swarm" ? checked.files.findIndex((file) => file.data.length === 0) : -1;
  if (empty >= 0) {
    throw new HttpError(
      400,
      "invalid_file",
      `files[${empty}]: the swarm backend cannot ship an empty file (a swarm config holds 1 byte or more)`,
      { extra: { index: empty } },
    );
  }
  return checked;
}

function workloadName(slug: string, jobId: string, kind: ExecutorKind): string {
  const suffix = randomBytes(4).toString("hex");
  if (kind === "engine") return `platform-${slug}-${jobId}-${suffix}`;
  // Swarm names are DNS labels (63 characters, letters, digits and "-"), with room for "-f<n>" configs.
  const job = jobId.toLowerCase().replace(/[^a-z0-9-]+/g, "-");
  return `${`platform-${slug}-${job}`.slice(0, 46).replace(/-+$/, "")}-${suffix}`;
}

/** What admission needs from the broker it belongs to. */
export interface AdmissionContext {
  config: BrokerConfig;
  executor: Executor;
  ledger: RunLedger;
  /** This process, as the runner of the rows it admits. */
  runner: string;
  /** The engine's facts, or 503 when no engine answers. */
  facts: () => Promise<EngineFacts>;
  /** Can GPU workloads run here? */
  gpuHost: () => Promise<boolean>;
}

/**
 * Admits one workload: checks the request (`checkWorkloadRequest`), then what needs the engine
 * (GPU host, the image present or pulled), then reserves its slot and GPUs in the ledger (429
 * past the quota). Answers the spec the executor runs; its row exists before its container.
 */
export async function admitWorkload(
  context: AdmissionContext,
  challenge: ChallengeRow,
  request: BrokerRunRequest,
): Promise<WorkloadSpec> {
  const { config, executor, ledger } = context;
  const { limits, files } = checkWorkloadRequest(request, config, executor.kind);
  const gpus = request.gpus ?? 0;
  if (gpus > 0 && !(await context.gpuHost())) {
    throw new HttpError(
      400,
      "gpu_unavailable",
      `This master has no GPU host: a run asking for ${gpus} GPU(s) is refused, never run on CPU`,
    );
  }
  if (gpus > config.maxGpus) {
    // Never admissible, so not a 429 a client would retry.
    throw new HttpError(
      400,
      "limit_exceeded",
      `gpus: ${gpus} is above the challenge's GPU quota of ${config.maxGpus}`,
      { extra: { field: "gpus", maximum: config.maxGpus } },
    );
  }
  const facts = await context.facts();
  const image = await prepareImage(executor, request.image);
  const masterId = await ledger.instanceId();
  const name = workloadName(challenge.slug, request.job_id, executor.kind);
  const timeoutSeconds = request.timeout_seconds ?? 3600;
  const deadline = Math.ceil(Date.now() / 1000) + timeoutSeconds;
  const { gpuDevices } = await ledger.admit(
    {
      containerName: name,
      slug: challenge.slug,
      jobId: request.job_id,
      backend: executor.kind,
      engineId: facts.engineId,
      runner: context.runner,
      image: request.image,
      gpus,
      deadline: new Date(deadline * 1000),
    },
    {
      maxConcurrent: config.maxConcurrent,
      maxGpus: config.maxGpus,
      gpuDevices: executor.kind === "engine" ? config.gpuDevices : [],
    },
  );
  const spec: WorkloadSpec = {
    name,
    slug: challenge.slug,
    jobId: request.job_id,
    masterId,
    image: request.image,
    workdir: request.workdir ?? WORKSPACE,
    env: request.env ?? {},
    labels: request.labels ?? {},
    user: resolveTaskUser(image.user, request.user),
    limits,
    files,
    imageVolumes: image.volumes,
    gpus,
    gpuDevices,
    timeoutSeconds,
    init: request.init ?? true,
    deadline,
  };
  if (request.command) spec.command = request.command;
  if (request.entrypoint) spec.entrypoint = request.entrypoint;
  return spec;
}

/** The image's user and volumes; 400 when the engine cannot have it or cannot say. */
async function prepareImage(executor: Executor, image: string): Promise<PreparedImage> {
  try {
    return await executor.prepareImage(image);
  } catch (error) {
    if (error instanceof ExecutorError) throw new HttpError(400, error.code, error.message);
    throw new HttpError(
      400,
      "executor_error",
      `Docker could not inspect the image: ${dockerMessage(error)}`,
    );
  }
}
