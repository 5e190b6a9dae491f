/**
 * The worker's side of the instance-seed release: a fresh X25519 key pair held in memory, a
 * quote binding its public key to this run's plan, the sealed answer opened, and the families
 * and seed checked against the plan (the family set's revision, the seed's sha256) before any
 * trial runs. A seed the plan does not commit to, or families other than the plan's, run
 * nothing.
 */
import {
  instanceSeedReportData,
  type VmAttestationInput,
  vmAttestation,
} from "../attestation/index.js";
import { openFromKey, type SealedToKey, sha256Hex, x25519KeyPair } from "../crypto/index.js";
import type { EvalPlan } from "../eval/eval-plan.js";
import { type FamilySet, loadFamilySet, type TaskFamily } from "../eval/families/index.js";
import { INSTANCE_SEED_SEAL_LABEL, type InstanceRelease } from "../eval/instance-seed-release.js";
import { WorkerFailure } from "../worker/worker-failure.js";
import type { EvalVmClient } from "./eval-client.js";
import type { EvalFailureReason } from "./run-eval.js";

export interface RunInstances {
  seed: Buffer;
  familySet: FamilySet;
  /** The plan's families, in its order. */
  families: TaskFamily[];
}

const EvalFailure = WorkerFailure<EvalFailureReason>;

/** Ask for, open and check the run's instance seed and families. */
export async function releasedInstances(
  client: EvalVmClient,
  plan: EvalPlan,
  planDigest: string,
  attestation: VmAttestationInput,
): Promise<RunInstances> {
  const keys = x25519KeyPair();
  const reportData = instanceSeedReportData({
    planDigest,
    runId: plan.run_id,
    nonce: plan.nonce,
    publicKey: keys.publicKey,
  });
  const answer = await client.instanceSeed({
    public_key: keys.publicKey,
    report_data_hex: reportData.toString("hex"),
    attestation: await vmAttestation(attestation, reportData),
  });
  const sealed = answer.body?.sealed;
  if (answer.status !== 200 || sealed === undefined) {
    throw new EvalFailure(
      "instances_unavailable",
      `the instance seed was not released: HTTP ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`,
    );
  }
  const release = JSON.parse(
    openFromKey(keys, sealed as SealedToKey, INSTANCE_SEED_SEAL_LABEL).toString("utf8"),
  ) as InstanceRelease;
  return instancesOf(plan, release);
}

/** The seed and families of `release`, checked against `plan` (also a replay's entry point). */
export async function instancesOf(plan: EvalPlan, release: InstanceRelease): Promise<RunInstances> {
  const seed = Buffer.from(release.seed, "hex");
  if (sha256Hex(seed) !== plan.task_set.instance_seed_sha256) {
    throw new EvalFailure("plan_invalid", "the released seed is not the one the plan commits to");
  }
  const familySet = await loadFamilySet(release.operator_families);
  if (familySet.revision_id !== plan.task_set.revision_id) {
    throw new EvalFailure(
      "task_set_mismatch",
      `the plan's task set ${plan.task_set.revision_id} is not this worker's ${familySet.revision_id}`,
    );
  }
  const byId = new Map(familySet.families.map((family) => [family.id, family]));
  const families = plan.task_set.task_ids.map((id) => byId.get(id));
  if (families.some((family) => family === undefined)) {
    throw new EvalFailure("plan_invalid", "the plan names a task family this worker lacks");
  }
  return { seed, familySet, families: families as TaskFamily[] };
}
