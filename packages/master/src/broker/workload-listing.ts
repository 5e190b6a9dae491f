import type { BrokerCleanupRequest, BrokerContainer } from "@platform/core";
import type { Executor } from "./executor.js";
import type { RunLedger } from "./run-ledger.js";

/**
 * What a challenge may see and remove of its workloads: only its own, in this deployment.
 * Docker is asked with label filters, and every label is checked again before anything is
 * returned or removed, so another challenge's container is neither listed nor removed.
 */
export class WorkloadListing {
  constructor(
    private readonly executor: Executor,
    private readonly ledger: RunLedger,
  ) {}

  /** The caller's workloads (verified by label), optionally of one job. */
  async list(slug: string, jobId?: string): Promise<BrokerContainer[]> {
    const masterId = await this.ledger.instanceId();
    const workloads = await this.executor.list(masterId, slug);
    return workloads
      .filter((workload) => workload.slug === slug && (!jobId || workload.jobId === jobId))
      .map((workload) => ({
        container_name: workload.name,
        job_id: workload.jobId,
        image: workload.image,
        state: workload.state,
        created_at: workload.createdAt.toISOString(),
        gpus: workload.gpus,
      }));
  }

  /** Remove the caller's workloads (all, one job's, or one by name); answers the names removed. */
  async cleanup(slug: string, request: BrokerCleanupRequest): Promise<string[]> {
    const masterId = await this.ledger.instanceId();
    const targets = (await this.executor.list(masterId, slug)).filter(
      (workload) =>
        workload.slug === slug &&
        (!request.job_id || workload.jobId === request.job_id) &&
        (!request.container_name || workload.name === request.container_name),
    );
    // Rows end first, so a run waiting on one of these knows it was cleaned, not finished.
    await this.ledger.finishMany(
      targets.map((workload) => workload.name),
      "cleaned",
    );
    const removed: string[] = [];
    for (const workload of targets) {
      if (await this.executor.remove(workload.name)) removed.push(workload.name);
    }
    return removed;
  }
}
