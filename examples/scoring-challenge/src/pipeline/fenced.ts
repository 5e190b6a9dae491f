/**
 * Every write the pipeline makes to a submission happens inside a transaction that first checks
 * the job's lease (`fence`): a worker that lost its lease (it was paused, or killed and its job
 * claimed again) writes nothing, so a bundle is scored exactly once.
 */
import type { Sql, TransactionSql } from "@platform/challenge-sdk";
import { type JobContext, LeaseLostError } from "@platform/challenge-sdk/jobs";

/** Run `write` in a transaction, only while this worker still holds the job. */
export async function fenced<T>(
  sql: Sql,
  job: Pick<JobContext, "fence">,
  write: (tx: TransactionSql) => Promise<T>,
): Promise<T> {
  const result = await sql.begin(async (tx) => {
    if (!(await job.fence(tx))) {
      throw new LeaseLostError("the job's lease moved to another worker: nothing written");
    }
    return write(tx);
  });
  return result as T;
}
