/**
 * The pipeline's first stage: take the submission (pending, or running after a worker was lost)
 * and mark it running under the job's fence, then re-read its bundle from the database and run
 * the structural checks again (the bundle is re-opened, never trusted from the submit request).
 */
import type { Sql } from "@platform/challenge-sdk";
import type { JobContext } from "@platform/challenge-sdk/jobs";
import type { SubmissionState } from "../api-schemas.js";
import { type Bundle, type BundleResult, openBundle } from "../bundle/index.js";
import { fenced } from "./fenced.js";

/** A submission this worker now runs. */
export interface ClaimedSubmission {
  id: string;
  hotkey: string;
  codeHash: string;
  zip: Buffer;
  /** The epoch it was accepted in: its stream is that epoch's (scored-bytes.ts). */
  epochId: number;
  /** Failures of the platform while it evaluated this bundle so far (see migrations/0005). */
  platformFailures: number;
}

/** What claiming found. */
export type Claim =
  | { kind: "claimed"; submission: ClaimedSubmission }
  /** Already decided (completed, failed, rejected) or held: nothing to do. */
  | { kind: "settled"; status: SubmissionState }
  | { kind: "missing" };

/** Mark submission `id` running (fenced), unless it is already settled or held. */
export async function claimSubmission(
  sql: Sql,
  id: string,
  job: Pick<JobContext, "fence">,
): Promise<Claim> {
  return fenced(sql, job, async (tx) => {
    const [row] = await tx<
      {
        status: SubmissionState;
        hotkey: string;
        code_hash: string;
        bundle: Buffer;
        epoch_id: string | number;
        platform_failures: number;
      }[]
    >`
      select status, hotkey, code_hash, bundle, epoch_id, platform_failures
      from submissions where id = ${id}::bigint for update`;
    if (!row) return { kind: "missing" } as const;
    if (row.status !== "pending" && row.status !== "running") {
      return { kind: "settled", status: row.status } as const;
    }
    await tx`update submissions set status = 'running' where id = ${id}::bigint`;
    return {
      kind: "claimed",
      submission: {
        id,
        hotkey: row.hotkey,
        codeHash: row.code_hash,
        zip: Buffer.from(row.bundle),
        epochId: Number(row.epoch_id),
        platformFailures: row.platform_failures,
      },
    } as const;
  });
}

/** The claimed submission's bundle, re-opened from its stored ZIP. */
export function reopenBundle(submission: ClaimedSubmission): Promise<BundleResult<Bundle>> {
  return openBundle(submission.zip);
}
