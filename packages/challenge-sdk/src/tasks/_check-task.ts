import {
  checkRunRequest,
  type PlacedFile,
  type ResolvedTaskLimits,
  refuseWeakening,
  type SandboxPolicy,
  SandboxRefusal,
} from "@platform/challenge-sdk/sandbox";
import { BrokerRunRequest, validateValue } from "@platform/core";
import { inTaskTerms, toBrokerRunRequest } from "./_wire.js";
import { TaskRejectedError } from "./task-errors.js";

/** A task that passed every check, in the broker's wire format with its defaults filled in. */
export interface CheckedTask {
  /** What the broker is sent; `timeout_seconds` and `gpus` hold their defaults. */
  request: BrokerRunRequest;
  /** Null when the limits are left to the broker. */
  limits: ResolvedTaskLimits | null;
  files: PlacedFile[];
}

/** A sandbox refusal in the task API's terms: `TaskRejectedError`, naming the author's fields. */
export function taskRejection(refusal: SandboxRefusal): TaskRejectedError {
  const details = Object.fromEntries(
    Object.entries(refusal.details).map(([key, value]) => [
      key,
      typeof value === "string" ? inTaskTerms(value) : value,
    ]),
  );
  return new TaskRejectedError(refusal.code, inTaskTerms(refusal.message), {
    details,
    cause: refusal,
  });
}

/**
 * Checks a task the same way on every backend, before anything is created or sent: turned into
 * core's `BrokerRunRequest` (camelCase in, snake_case out), weakening refused, the request
 * schema (ids, env names, label keys, sizes, timeout 1-86400, no unknown field), then the
 * sandbox's own rules (`checkRunRequest`). Policy nulls leave limits and file caps to the
 * broker, whose configured maxima may differ from the SDK's defaults.
 */
export function checkTask(task: unknown, policy: SandboxPolicy): CheckedTask {
  if (typeof task !== "object" || task === null || Array.isArray(task)) {
    throw new TaskRejectedError("invalid_task", "A task must be an object");
  }
  try {
    const wire = toBrokerRunRequest(task as Record<string, unknown>);
    // Before the schema: a weakened task is told so, whatever else is wrong with it.
    refuseWeakening(wire);
    const checked = validateValue<BrokerRunRequest>(BrokerRunRequest, wire, "body");
    if (!checked.ok) {
      const detail = checked.issues
        .slice(0, 5)
        .map((issue) => `${issue.loc.slice(1).join(".") || "task"}: ${issue.msg}`)
        .join("; ");
      throw new TaskRejectedError("invalid_task", `Invalid task: ${inTaskTerms(detail)}`);
    }
    const { limits, files } = checkRunRequest(checked.value, policy);
    return { request: checked.value, limits, files };
  } catch (error) {
    throw error instanceof SandboxRefusal ? taskRejection(error) : error;
  }
}
