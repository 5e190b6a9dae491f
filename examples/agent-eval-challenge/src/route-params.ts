/**
 * The path parameters every route family shares, and the refusals of a route that only the
 * submission's own hotkey may call: one definition, so the OpenAPI document describes each
 * identifier the same way on every route.
 */
import { Type } from "@platform/challenge-sdk";
import { MintedId } from "./schema-primitives.js";

const SubmissionIdParams = Type.Object({
  // A bigint in the database; past 2^53 an id cannot be one this service handed out.
  submission_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});
export const SessionIdParams = Type.Object({ session_id: MintedId });
export const AssignmentIdParams = Type.Object({ assignment_id: MintedId });
export const RunIdParams = Type.Object({ eval_run_id: MintedId });

/** What every route on a submission shares: its tag, and the submission in the path. */
export const submissionRoute = (tag: string) => ({ tags: [tag], params: SubmissionIdParams });

/** The refusals of a route only the submission's own hotkey may call. */
export const OWNER_ERRORS = {
  403: { description: "not_submission_owner: the signed hotkey is not the submission's" },
  404: { description: "submission_not_found" },
};

/** The submission an owner-only route names and the hotkey that signed the request. */
export function ownerRequest(params: { submission_id: number }, miner: { hotkey: string }) {
  return { submissionId: String(params.submission_id), hotkey: miner.hotkey };
}
