import { HttpError } from "@platform/challenge-sdk";

/**
 * The stable codes a refused state change answers with. Every refusal is an HttpError: a state
 * change is never a silent no-op.
 */
export const TRANSITION_ERROR_CODES = {
  /** 409: the machine's table has no row for (current state, event). */
  invalidTransition: "invalid_transition",
  /** 409: the state changed between the read and the compare-and-swap (a concurrent writer won). */
  transitionConflict: "transition_conflict",
  /** 409: the named assignment is not its session's current one. */
  staleAssignment: "stale_assignment",
  /** 409: the named run is not its submission's current one. */
  staleRun: "stale_run",
  /** 409: `expire` asked before the TTL elapsed. */
  notExpired: "not_expired",
  /** 410: the assignment's TTL elapsed; only expiry may happen to it now. */
  assignmentExpired: "assignment_expired",
  /** 410: the run's TTL elapsed; only expiry may happen to it now. */
  runExpired: "run_expired",
  submissionNotFound: "submission_not_found",
  assignmentNotFound: "assignment_not_found",
  runNotFound: "run_not_found",
} as const;

export type TransitionErrorCode =
  (typeof TRANSITION_ERROR_CODES)[keyof typeof TRANSITION_ERROR_CODES];

export function invalidTransition(
  machine: string,
  id: string,
  from: string,
  event: string,
): HttpError {
  return new HttpError(
    409,
    TRANSITION_ERROR_CODES.invalidTransition,
    `The ${machine} ${id} cannot "${event}" from state "${from}".`,
    { extra: { state: from, event } },
  );
}

export function transitionConflict(machine: string, id: string, from: string): HttpError {
  return new HttpError(
    409,
    TRANSITION_ERROR_CODES.transitionConflict,
    `The ${machine} ${id} left state "${from}" while this request was changing it; read it again.`,
  );
}

/** 404 `code`: "<what> not found." */
export function notFound(code: string, what: string): HttpError {
  return new HttpError(404, code, `${what} not found.`);
}

/** 409 stale_assignment naming the current assignment. */
export function staleAssignment(named: string, current: string | null): HttpError {
  return new HttpError(
    409,
    TRANSITION_ERROR_CODES.staleAssignment,
    `Assignment ${named} is not the current assignment of its review session.`,
    { extra: { current_assignment_id: current } },
  );
}

/** 409 stale_run naming the current run. */
export function staleRun(named: string, current: string | null): HttpError {
  return new HttpError(
    409,
    TRANSITION_ERROR_CODES.staleRun,
    `Eval run ${named} is not the current run of its submission.`,
    { extra: { current_eval_run_id: current } },
  );
}
