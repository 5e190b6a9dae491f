import { BrokerRunRequest, validateValue } from "@platform/core";
import {
  checkTaskLabels,
  type ResolvedTaskLimits,
  refuseWeakening,
  resolveTaskLimits,
  type TaskLimitPolicy,
} from "./hardened-container.js";
import type { Task } from "./task.js";
import { TaskRejectedError } from "./task-errors.js";
import { checkTaskFiles, type PlacedFile, type TaskFileCaps } from "./task-files.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const LABEL_KEY = /^[a-z0-9][a-z0-9_.-]{0,127}$/;

/** A task that passed every check, with its defaults filled in. */
export interface CheckedTask {
  task: Task & { timeout_seconds: number; gpus: number };
  /** Null when the limits are left to the broker. */
  limits: ResolvedTaskLimits | null;
  files: PlacedFile[];
}

/**
 * Checks a task the same way on every backend, before anything is created or sent: weakening
 * fields refused, core's BrokerRunRequest schema (ids, env names, sizes, timeout 1-86400),
 * no `platform.` labels, files. `limits`/`caps` null leave those to the broker, whose
 * configured maxima may differ from the SDK's defaults.
 */
export function checkTask(
  task: unknown,
  policy: { limits: TaskLimitPolicy | null; fileCaps: TaskFileCaps | null },
): CheckedTask {
  if (typeof task !== "object" || task === null || Array.isArray(task)) {
    throw new TaskRejectedError("invalid_task", "A task must be an object");
  }
  refuseWeakening(task as Record<string, unknown>);
  const checked = validateValue<Task & { timeout_seconds: number; gpus: number }>(
    BrokerRunRequest,
    task,
    "body",
  );
  if (!checked.ok) {
    const detail = checked.issues
      .slice(0, 5)
      .map((issue) => `${issue.loc.slice(1).join(".") || "task"}: ${issue.msg}`)
      .join("; ");
    throw new TaskRejectedError("invalid_task", `Invalid task: ${detail}`);
  }
  const value = checked.value;
  // core's schema declares these key patterns, but a TypeBox Record does not enforce them.
  for (const key of Object.keys(value.env ?? {})) {
    if (!ENV_NAME.test(key) || key.length > 128) {
      throw new TaskRejectedError(
        "invalid_task",
        `Invalid task: env: ${JSON.stringify(key)} is not a variable name`,
      );
    }
  }
  for (const key of Object.keys(value.labels ?? {})) {
    if (!LABEL_KEY.test(key)) {
      throw new TaskRejectedError(
        "invalid_task",
        `Invalid task: labels: ${JSON.stringify(key)} is not a label key`,
      );
    }
  }
  checkTaskLabels(value.labels);
  const limits = policy.limits ? resolveTaskLimits(value.limits, policy.limits) : null;
  const files = checkTaskFiles(value.files, policy.fileCaps);
  return { task: value, limits, files };
}
