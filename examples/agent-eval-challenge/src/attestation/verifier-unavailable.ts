// The one answer of a route whose quote verifier (its collateral service) cannot be reached:
// 503 verifier_unavailable with Retry-After, nothing decided. Review reports, eval results and
// the instance seed's release park the same way, so a VM retries all three alike.
import { HttpError } from "@platform/challenge-sdk";

export const VERIFIER_RETRY_AFTER_SECONDS = 30;

/** The 503 to throw; `detail` says what was kept and what to send again. */
export function verifierUnavailable(detail: string): HttpError {
  return new HttpError(
    503,
    "verifier_unavailable",
    `The quote verifier is unavailable; ${detail}`,
    {
      headers: { "retry-after": String(VERIFIER_RETRY_AFTER_SECONDS) },
    },
  );
}
