export {
  AttachedRunError,
  type AttachedRunOptions,
  type AttachedRunOutcome,
  runAttachedContainer,
} from "./attached-run.js";
export { type BrokerTaskRunnerOptions, brokerTaskRunner } from "./broker-task-runner.js";
export {
  DOCKER_RUNNER_LABEL,
  type DockerTaskRunner,
  type DockerTaskRunnerOptions,
  dockerTaskRunner,
} from "./docker-task-runner.js";
export {
  checkTaskLabels,
  HARDENED_LIMITS,
  type HardenedContainerContext,
  hardenedContainerOptions,
  isRootUser,
  NOBODY,
  type ResolvedTaskLimits,
  refuseWeakening,
  resolveTaskLimits,
  resolveTaskUser,
  TASK_LABELS,
  type TaskLimitPolicy,
  WORKSPACE,
} from "./hardened-container.js";
export { type CapturedOutput, OutputCapture } from "./output-capture.js";
export {
  type Task,
  type TaskEvent,
  type TaskFile,
  type TaskLimits,
  type TaskResult,
  type TaskRunner,
  type TaskRunOptions,
  taskFile,
} from "./task.js";
export {
  TaskAbortedError,
  TaskAuthError,
  TaskError,
  type TaskErrorOptions,
  TaskQuotaError,
  TaskRejectedError,
  TaskUnavailableError,
} from "./task-errors.js";
export {
  checkTaskFiles,
  DEFAULT_FILE_CAPS,
  type PlacedFile,
  type TaskFileCaps,
  taskFilePathProblem,
  taskFilesArchive,
} from "./task-files.js";
