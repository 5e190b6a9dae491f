import { HttpError, type TransactionSql } from "@platform/challenge-sdk";

/** Who caused a state change (recorded on every status event). */
export type Actor = "miner" | "review_vm" | "eval_vm" | "operator" | "owner" | "system";

/** Which machine a status event belongs to. */
export type StatusMachine = "submission" | "assignment" | "eval_run";

/** One status event, before it has its seq. */
export interface StatusEventInput {
  submissionId: string;
  machine: StatusMachine;
  /** The submission, assignment or run id. */
  subjectId: string;
  event: string;
  /** Null for the event that created the subject. */
  fromState: string | null;
  toState: string;
  actor: Actor;
  /** A stable machine-readable reason, e.g. a failure reason_code. */
  reasonCode?: string | null;
  /** A bounded human sentence (<= 1024 characters). */
  reason?: string | null;
  /** The event time; the database's now() when omitted. */
  at?: Date | null;
}

/**
 * Appends one status event with the submission's next seq, inside `tx`. The seq comes from the
 * submission row's counter, incremented in the same transaction: the row lock makes concurrent
 * writers queue, and a writer that rolls back takes its increment with it, so seqs are unique
 * and gap-free per submission.
 */
export async function appendStatusEvent(
  tx: TransactionSql,
  input: StatusEventInput,
): Promise<number> {
  const [counter] = await tx<{ seq: number }[]>`
    update submissions set last_event_seq = last_event_seq + 1
    where id = ${input.submissionId}
    returning last_event_seq as seq`;
  if (!counter) {
    throw new HttpError(404, "submission_not_found", `Submission ${input.submissionId} not found.`);
  }
  await tx`
    insert into submission_status_events
      (submission_id, seq, machine, subject_id, event, from_state, to_state, reason_code, reason,
       actor, at)
    values (${input.submissionId}, ${counter.seq}, ${input.machine}, ${input.subjectId},
            ${input.event}, ${input.fromState}, ${input.toState}, ${input.reasonCode ?? null},
            ${input.reason ?? null}, ${input.actor}, coalesce(${input.at ?? null}::timestamptz, now()))`;
  return counter.seq;
}

/** The first event of a submission's history: it was stored, in state `received`. */
export function recordSubmissionReceived(
  tx: TransactionSql,
  submissionId: string,
  actor: Actor,
  at?: Date,
): Promise<number> {
  return appendStatusEvent(tx, {
    submissionId,
    machine: "submission",
    subjectId: submissionId,
    event: "receive",
    fromState: null,
    toState: "received",
    actor,
    at: at ?? null,
  });
}
