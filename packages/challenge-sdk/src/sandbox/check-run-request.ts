import type { BrokerRunRequest } from "@platform/core";
import { refuseReservedLabels } from "./platform-labels.js";
import { refuseWeakening } from "./refuse-weakening.js";
import { checkTaskFiles, type PlacedFile, type TaskFileCaps } from "./task-files.js";
import { type ResolvedTaskLimits, resolveTaskLimits, type TaskLimitPolicy } from "./task-limits.js";

/** The maxima a run is checked against; null leaves that check to whoever runs it next. */
export interface SandboxPolicy {
  limits: TaskLimitPolicy | null;
  fileCaps: TaskFileCaps | null;
}

/** What checking a run decided: its resolved limits and its decoded files. */
export interface CheckedRunRequest<Limits = ResolvedTaskLimits> {
  limits: Limits;
  files: PlacedFile[];
}

/**
 * Every sandbox rule a run request (core's `BrokerRunRequest`, schema-valid) must pass, in the
 * one order every backend applies them: no weakening, no reserved label, limits within the
 * policy, files well-formed and within the caps. Throws the first `SandboxRefusal`; nothing
 * has touched Docker yet.
 * @example const { limits, files } = checkRunRequest(request, { limits: HARDENED_LIMITS, fileCaps: DEFAULT_FILE_CAPS });
 */
export function checkRunRequest(
  request: BrokerRunRequest,
  policy: { limits: TaskLimitPolicy; fileCaps: TaskFileCaps | null },
): CheckedRunRequest;
export function checkRunRequest(
  request: BrokerRunRequest,
  policy: SandboxPolicy,
): CheckedRunRequest<ResolvedTaskLimits | null>;
export function checkRunRequest(
  request: BrokerRunRequest,
  policy: SandboxPolicy,
): CheckedRunRequest<ResolvedTaskLimits | null> {
  refuseWeakening(request);
  refuseReservedLabels(request.labels);
  const limits = policy.limits ? resolveTaskLimits(request.limits, policy.limits) : null;
  return { limits, files: checkTaskFiles(request.files, policy.fileCaps) };
}
