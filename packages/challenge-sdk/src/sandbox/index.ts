/**
 * @platform/challenge-sdk/sandbox: the one Docker layer under every task container, shared by
 * the SDK's docker task runner and the master's broker and challenge runtime. The checks a run
 * must pass, the hardened container builders, getting an image onto the engine, files staging,
 * the attached run with capped output, ownership labels, and reading Docker's errors. Challenge
 * authors use `@platform/challenge-sdk/tasks` instead; docs/broker.md describes the sandbox.
 */

export {
  type CheckedRunRequest,
  checkRunRequest,
  type SandboxPolicy,
} from "./check-run-request.js";
export { ContainerRunError, type ContainerRunStep } from "./container-run-error.js";
export { isRootUser, NOBODY, resolveTaskUser } from "./container-user.js";
export {
  dockerMessage,
  dockerStatus,
  ignoreMissing,
  isConflict,
  isMissing,
} from "./docker-errors.js";
export { type EngineFacts, engineFacts, probeDocker } from "./engine-facts.js";
export {
  type EnsureImageOptions,
  ensureImage,
  type ImageRunFacts,
  imageRunFacts,
  localImage,
} from "./engine-image.js";
export { removeFilesVolume } from "./files-volume.js";
export {
  type HardenedContainerContext,
  hardenedContainerOptions,
  type SandboxSpec,
  SHM_PATH,
  SHM_TMPFS_BYTES,
  scratchVolumePaths,
  WORKSPACE,
} from "./hardened-container.js";
export { type PullOptions, type PullProgress, pullImage, pullProgress } from "./image-pull.js";
export { IN_USE_RETRY, type InUseRetryPolicy, retryWhileInUse } from "./in-use-retry.js";
export { type CapturedOutput, OutputCapture } from "./output-capture.js";
export {
  deadlineOf,
  labelFilters,
  ownershipLabels,
  PLATFORM_LABELS,
  refuseReservedLabels,
  type TaskObjectRole,
  type TaskOwner,
} from "./platform-labels.js";
export { refuseWeakening } from "./refuse-weakening.js";
export { SandboxRefusal, type SandboxRefusalCode } from "./sandbox-refusal.js";
export { type ServiceContainerSpec, serviceContainerOptions } from "./service-container.js";
export {
  runTaskContainer,
  type TaskContainerOutcome,
  type TaskContainerRun,
} from "./task-container.js";
export {
  checkTaskFiles,
  DEFAULT_FILE_CAPS,
  type PlacedFile,
  type TaskFileCaps,
} from "./task-files.js";
export {
  HARDENED_LIMITS,
  type ResolvedTaskLimits,
  resolveTaskLimits,
  type TaskLimitPolicy,
} from "./task-limits.js";
