/**
 * The review VM's writes (model-call-started, failure) and the miner's review/deployed: each
 * writes one write-once record through the state module's transition, in one review
 * transaction. An identical replay answers what the first write answered; a different one is a
 * 409 naming the record, never an overwrite.
 */
import { HttpError, type Sql, type Static } from "@platform/challenge-sdk";
import { type AssignmentState, transitionAssignment } from "../state/index.js";
import { lockOwnedSubmission } from "./_owned-submission.js";
import { reviewTransaction } from "./_review-transaction.js";
import { sameRecord } from "./_write-once.js";
import type { AuthorizedAssignment } from "./assignment-bearer.js";
import { REVIEW_ERROR_CODES } from "./review-errors.js";
import type { ReviewDeployedRequest } from "./review-schemas.js";
import { VM_ERROR_CODES } from "./vm-errors.js";
import type { ReviewFailureRequest, ReviewModelCallRequest } from "./vm-schemas.js";

/** review/deployed's metadata (rule 6): what the miner says it deployed. Not evidence. */
export type DeploymentMetadata = Static<typeof ReviewDeployedRequest>;

/** The one planned model request of an assignment (rule 18). */
export type PlannedModelCall = Static<typeof ReviewModelCallRequest>;

/** The VM's bounded failure record (rule 19). */
export type FailureRecord = Static<typeof ReviewFailureRequest>;

/** What a write answers: the assignment's state now and the record as stored. */
export interface RecordAnswer<R> {
  assignment_id: string;
  state: AssignmentState;
  record: R;
}

/**
 * POST review/deployed (rule 6), miner-signed: the submission must be the miner's (404/403),
 * the assignment one of its own (404 assignment_not_found); the metadata is written once with
 * the `deploy` transition. Identical replay: 200 with the stored record; different: 409
 * deployment_conflict. The record is metadata only: no verdict ever reads it as evidence.
 */
export function recordDeployment(
  sql: Sql,
  input: { submissionId: string; hotkey: string; metadata: DeploymentMetadata },
): Promise<RecordAnswer<DeploymentMetadata>> {
  const { metadata } = input;
  return reviewTransaction(sql, undefined, async (tx) => {
    const submission = await lockOwnedSubmission(tx, input.submissionId, input.hotkey);
    const [row] = await tx<{ deployed: DeploymentMetadata | null; state: AssignmentState }[]>`
      select deployed, state from review_assignments
      where id = ${metadata.assignment_id} and submission_id = ${submission.id}`;
    if (!row) {
      throw new HttpError(
        404,
        REVIEW_ERROR_CODES.assignmentNotFound,
        `Assignment ${metadata.assignment_id} not found for submission ${submission.id}.`,
      );
    }
    if (row.deployed !== null) {
      if (!sameRecord(row.deployed, metadata)) {
        throw new HttpError(
          409,
          VM_ERROR_CODES.deploymentConflict,
          `Assignment ${metadata.assignment_id} already has other deployment metadata.`,
        );
      }
      return { assignment_id: metadata.assignment_id, state: row.state, record: row.deployed };
    }
    const moved = await transitionAssignment(tx, {
      assignmentId: metadata.assignment_id,
      event: "deploy",
      actor: "miner",
      records: { deployed: { ...metadata } },
    });
    return { assignment_id: metadata.assignment_id, state: moved.to, record: metadata };
  });
}

/**
 * POST model-call-started (rule 18), for the assignment its bearer opened (a write): binds one
 * planned request durably, with the `start_model_call` transition, before the VM opens a
 * connection. Identical replay: 200; different: 409 model_call_conflict; before deployed: the
 * state module's 409 invalid_transition (it also refuses a state that moved since the bearer).
 */
export function startModelCall(
  sql: Sql,
  input: { assignment: AuthorizedAssignment; call: PlannedModelCall },
): Promise<RecordAnswer<PlannedModelCall>> {
  const { assignment } = input;
  return reviewTransaction(sql, undefined, async (tx) => {
    if (assignment.model_call !== null) {
      if (!sameRecord(assignment.model_call, input.call)) {
        throw new HttpError(
          409,
          VM_ERROR_CODES.modelCallConflict,
          `Assignment ${assignment.id} already bound another model request.`,
        );
      }
      return {
        assignment_id: assignment.id,
        state: assignment.state,
        record: assignment.model_call as unknown as PlannedModelCall,
      };
    }
    const moved = await transitionAssignment(tx, {
      assignmentId: assignment.id,
      event: "start_model_call",
      actor: "review_vm",
      records: { modelCall: { ...input.call } },
    });
    return { assignment_id: assignment.id, state: moved.to, record: input.call };
  });
}

/**
 * POST failure (rule 19), for the assignment its bearer opened (a write): one bounded failure
 * record without a report, the `fail` transition (error), which revokes the capability: any
 * later write with the token is 410 capability_revoked, a replay included. After a report, the
 * state module refuses (409).
 */
export function recordFailure(
  sql: Sql,
  input: { assignment: AuthorizedAssignment; failure: FailureRecord },
): Promise<RecordAnswer<FailureRecord>> {
  const { assignment } = input;
  return reviewTransaction(sql, undefined, async (tx) => {
    const moved = await transitionAssignment(tx, {
      assignmentId: assignment.id,
      event: "fail",
      actor: "review_vm",
      reasonCode: input.failure.reason_code,
      records: { failure: { ...input.failure } },
    });
    return { assignment_id: assignment.id, state: moved.to, record: input.failure };
  });
}
