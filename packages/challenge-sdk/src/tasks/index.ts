/**
 * @platform/challenge-sdk/tasks: running work in hardened containers. A `Task` (camelCase),
 * its `TaskResult` and `TaskEvent`s, two runners behind one `TaskRunner` interface (the
 * master's broker in production, a local Docker engine otherwise, `taskRunnerFor` picks), and
 * the `TaskError` family a job worker reads to retry or bury. docs/jobs-and-tasks.md.
 */

export { type BrokerTaskRunnerOptions, brokerTaskRunner } from "./broker-task-runner.js";
export {
  DOCKER_RUNNER_LABEL,
  type DockerTaskRunner,
  type DockerTaskRunnerOptions,
  dockerTaskRunner,
} from "./docker-task-runner.js";
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
  type TaskRunnerForOptions,
  type TaskRunnerSettings,
  taskRunnerFor,
} from "./task-runner-for.js";
