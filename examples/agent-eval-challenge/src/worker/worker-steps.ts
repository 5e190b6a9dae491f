/**
 * The steps both reference workers take alike: the agent ZIP fetched and hashed here (never the
 * sender's word), and the one attested document they post (the eval result, the review report)
 * delivered as identical bytes until a receipt. Each failure is the run's WorkerFailure.
 */
import {
  type ClientAnswer,
  type DeliverOptions,
  WorkerClientError,
} from "@platform/challenge-sdk/client";
import { sha256Hex } from "../crypto/index.js";
import { WorkerFailure } from "./worker-failure.js";

/**
 * The artifact's bytes and their sha256, or an artifact_mismatch: not served (not a 200), or not
 * the ZIP `expected` names (`by`: "the plan's", "the assignment's"; a size, when given, too).
 */
export async function checkedArtifact(
  fetched: Promise<ClientAnswer>,
  expected: { sha256: string; size?: number; by: string },
): Promise<{ bytes: Buffer; sha256: string }> {
  const answer = await fetched;
  if (answer.status !== 200) {
    throw new WorkerFailure(
      "artifact_mismatch",
      `the artifact route answered HTTP ${answer.status}`,
    );
  }
  const { bytes } = answer;
  const sha256 = sha256Hex(bytes);
  const size = expected.size === undefined ? "" : ` (${bytes.length} bytes)`;
  if (sha256 !== expected.sha256 || (expected.size ?? bytes.length) !== bytes.length) {
    throw new WorkerFailure(
      "artifact_mismatch",
      `the artifact's sha256 ${sha256}${size} is not ${expected.by} ${expected.sha256}`,
    );
  }
  return { bytes, sha256 };
}

/**
 * `deliver` until a receipt: no answer, 429 or 5xx (the verifier away) sends the identical bytes
 * again after Retry-After or a backoff, within the budget; a refusal or the budget's end is the
 * `refused` failure. Answers the receipt's state. The lines name the document ("result"), what a
 * retry sends ("the same bytes") and whose state the receipt is ("run").
 */
export async function deliverDocument<Reason extends string>(
  deliver: (options: DeliverOptions) => Promise<ClientAnswer>,
  document: { name: string; again: string; holder: string; refused: Reason; outcome?: true },
  say: (line: string) => void,
  budgetMs: number,
): Promise<string> {
  let answer: ClientAnswer;
  try {
    answer = await deliver({
      budgetMs,
      onRetry: ({ attempt, waitMs, reason }) =>
        say(
          `${document.name} attempt ${attempt}: ${reason}; ${document.again} again in ${Math.round(waitMs / 1000)} s`,
        ),
    });
  } catch (error) {
    if (!(error instanceof WorkerClientError)) throw error;
    throw new WorkerFailure(document.refused, error.message);
  }
  const receipt = answer.body as {
    state?: string;
    verification?: { status?: string; outcome?: string; code?: string | null };
  } | null;
  const verification = receipt?.verification;
  say(
    `${document.name} receipted (HTTP ${answer.status}): ${document.holder} ${receipt?.state}, verification ${verification?.status}` +
      `${verification?.code ? ` (${verification.code})` : ""}` +
      (document.outcome ? `, outcome ${verification?.outcome}` : ""),
  );
  return String(receipt?.state);
}
