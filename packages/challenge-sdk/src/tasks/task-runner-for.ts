import { type BrokerTaskRunnerOptions, brokerTaskRunner } from "./broker-task-runner.js";
import { type DockerTaskRunnerOptions, dockerTaskRunner } from "./docker-task-runner.js";
import type { TaskRunner } from "./task.js";

/** The settings that decide where tasks run (a challenge's `ChallengeSettings` has them). */
export interface TaskRunnerSettings {
  /** PLATFORM_MASTER_URL, set by the master. */
  masterUrl: string | null;
  /** BROKER_TOKEN, set by the master. */
  brokerToken: string | null;
  slug: string;
}

/** Options of {@link taskRunnerFor}, passed to whichever runner it makes. */
export interface TaskRunnerForOptions {
  broker?: Omit<BrokerTaskRunnerOptions, "masterUrl" | "brokerToken" | "slug">;
  docker?: DockerTaskRunnerOptions;
}

/**
 * The task runner for where this challenge runs: the master's broker when the master set
 * PLATFORM_MASTER_URL and BROKER_TOKEN (production), else the local Docker engine
 * (development, a self-hosted challenge). The same code runs tasks in both places.
 * @example const runner = taskRunnerFor(settings); const result = await runner.run(task);
 */
export function taskRunnerFor(
  settings: TaskRunnerSettings,
  options: TaskRunnerForOptions = {},
): TaskRunner {
  if (settings.masterUrl && settings.brokerToken) {
    return brokerTaskRunner({
      ...options.broker,
      masterUrl: settings.masterUrl,
      brokerToken: settings.brokerToken,
      slug: settings.slug,
    });
  }
  return dockerTaskRunner(options.docker);
}
