import type { TaskEvent } from "./task.js";

/** Calls a task's `onEvent`, never letting a listener's exception disturb the run. */
export function taskEmitter(
  onEvent: ((event: TaskEvent) => void) | undefined,
): (event: TaskEvent) => void {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // Observation only: a listener bug must not leave a container behind.
    }
  };
}

/** The seconds a Retry-After header asks for (delta or HTTP date), clamped to [1, 86400]. */
export function retryAfterSeconds(
  header: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  let seconds: number;
  if (/^\d+$/.test(value.trim())) seconds = Number(value.trim());
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.ceil((at - now) / 1000);
  }
  return Math.min(Math.max(seconds, 1), 86_400);
}
