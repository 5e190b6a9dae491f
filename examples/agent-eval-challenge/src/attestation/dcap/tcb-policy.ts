// Which TCB statuses a deployment accepts. Intel's status says how current the platform's
// microcode, SEAM module and QE are; whether "OutOfDate" is good enough is the operator's call,
// but "Revoked" never is (Intel revoked the platform's keys), so it cannot be configured.

import { TCB_STATUSES, type TcbStatus } from "./tcb-status.js";

export const DEFAULT_ACCEPTED_TCB_STATUSES: readonly TcbStatus[] = [
  "UpToDate",
  "SWHardeningNeeded",
];

export const CONFIGURABLE_TCB_STATUSES = TCB_STATUSES.filter((s) => s !== "Revoked");

/** Parses a comma-separated setting; throws RangeError naming an unknown or refused entry. */
export function parseAcceptedTcbStatuses(setting: string | undefined): readonly TcbStatus[] {
  if (setting === undefined || setting.trim() === "") return DEFAULT_ACCEPTED_TCB_STATUSES;
  const statuses = setting.split(",").map((s) => s.trim());
  for (const status of statuses) {
    if (!(CONFIGURABLE_TCB_STATUSES as readonly string[]).includes(status)) {
      throw new RangeError(`"${status}" is not an acceptable TCB status`);
    }
  }
  return [...new Set(statuses)] as TcbStatus[];
}
