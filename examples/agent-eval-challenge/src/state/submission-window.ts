import type { TransactionSql } from "@platform/challenge-sdk";
import { transitionTime } from "./_clock.js";

/** One accepted submission per hotkey per this many seconds (3 h). */
export const SUBMISSION_WINDOW_SECONDS = 3 * 60 * 60;

export type SubmissionWindowReservation =
  | { reserved: true; nextAllowedAt: Date }
  | { reserved: false; nextAllowedAt: Date };

/**
 * Reserves the hotkey's submission window for `submissionId` (inserted earlier in the same `tx`),
 * or reports when the next one is allowed (the caller answers 429 with next_allowed_at and rolls
 * back). One upsert decides: the hotkey's row lock makes two concurrent submissions queue, and
 * the second one's "where next_allowed_at <= now" sees the first one's window, so both cannot pass.
 */
export async function reserveSubmissionWindow(
  tx: TransactionSql,
  input: { hotkey: string; submissionId: string; now?: Date; windowSeconds?: number },
): Promise<SubmissionWindowReservation> {
  const at = await transitionTime(tx, input.now);
  const seconds = input.windowSeconds ?? SUBMISSION_WINDOW_SECONDS;
  const [won] = await tx<{ next_allowed_at: Date }[]>`
    insert into hotkey_submission_windows as w (hotkey, submission_id, accepted_at, next_allowed_at)
    values (${input.hotkey}, ${input.submissionId}, ${at},
            ${at}::timestamptz + make_interval(secs => ${seconds}))
    on conflict (hotkey) do update
      set submission_id = excluded.submission_id,
          accepted_at = excluded.accepted_at,
          next_allowed_at = excluded.next_allowed_at
      where w.next_allowed_at <= excluded.accepted_at
    returning next_allowed_at`;
  if (won) return { reserved: true, nextAllowedAt: won.next_allowed_at };
  const [held] = await tx<{ next_allowed_at: Date }[]>`
    select next_allowed_at from hotkey_submission_windows where hotkey = ${input.hotkey}`;
  return { reserved: false, nextAllowedAt: held!.next_allowed_at };
}
