/**
 * The behavioural copy check, after a completed scored run: does this bundle compute what an
 * earlier accepted bundle computes? Earlier accepted means a smaller submission id, `completed`
 * (so not rejected as a duplicate of anything, not failed), scored on the same bytes (the same
 * `stream_sha256`: curves on different bytes do not compare). The earliest match keeps the
 * weight; this bundle is rejected naming it (behaviour-signature.ts has the measure and the
 * threshold). Reports without a signature (harnesses before it) are never matched.
 */
import type { Sql } from "@platform/challenge-sdk";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { behaviourDistance, COPY_DISTANCE, isBehaviouralCopy } from "../behaviour-signature.js";
import { BehaviourSignature, type RunReport } from "../harness-report.js";

/** An earlier accepted bundle this one computes the same as. */
export interface BehaviourMatch {
  submissionId: string;
  /** Mean absolute difference of the two loss curves, nats per byte. */
  distance: number;
}

// Earlier completed runs on one stream read per check, earliest first (an epoch's worth).
const MAX_CANDIDATES = 5000;
const isSignature = TypeCompiler.Compile(BehaviourSignature);

/** The earliest earlier accepted run whose curve is within COPY_DISTANCE of `report`'s, or null. */
export async function behaviourStage(
  sql: Sql,
  id: string,
  report: RunReport,
  threshold: number = COPY_DISTANCE,
): Promise<BehaviourMatch | null> {
  const signature = report.behaviour;
  if (signature === undefined || report.stream_sha256 === null) return null;
  const earlier = await sql<{ id: string; behaviour: unknown }[]>`
    select id::text as id, report -> 'behaviour' as behaviour from submissions
    where status = 'completed'
      and report ->> 'stream_sha256' = ${report.stream_sha256}
      and id < ${id}::bigint
    order by id
    limit ${MAX_CANDIDATES}`;
  for (const row of earlier) {
    if (!isSignature.Check(row.behaviour)) continue;
    const distance = behaviourDistance(signature, row.behaviour);
    if (isBehaviouralCopy(distance, threshold)) {
      return { submissionId: row.id, distance: distance! };
    }
  }
  return null;
}

/** The sentence a rejected behavioural copy's `error` carries. */
export function behaviourMessage(match: BehaviourMatch): string {
  return (
    `duplicate: this bundle computes what submission ${match.submissionId} computes ` +
    `(loss-curve distance ${match.distance.toFixed(4)} nats per byte on the same bytes, ` +
    `within the seed noise of one model, limit ${COPY_DISTANCE})`
  );
}
