/**
 * The miner's flow, one function per step, each printing what it did: submit the agent, set or
 * confirm its env, launch, review (prepare, deployed, the review worker, the verdict), eval
 * (prepare, the telemetry grant, the eval worker, the result), and, through a master, the weight
 * that followed. `run` chains them; every step is also its own subcommand (miner.ts).
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Static } from "@platform/challenge-sdk";
import type { Sr25519Keypair } from "@platform/challenge-sdk/signing";
import { sha256Hex } from "../crypto/index.js";
import type { EvalHistoryResponse } from "../eval/eval-schemas.js";
import type { EvalPrepareAnswer } from "../eval/issue-run.js";
import { signTelemetryGrant } from "../eval/telemetry-grant.js";
import type { ReviewAuditResponse } from "../review/audit-schemas.js";
import type { ReviewPrepareAnswer } from "../review/review-answer.js";
import { agentArchive } from "./agent-archive.js";
import { type ChallengeClient, MinerError } from "./challenge-client.js";
import { ensureAgentImage, runEvalWorker, runReviewWorker } from "./workers.js";

export interface Miner {
  client: ChallengeClient;
  pair: Sr25519Keypair;
}

const say = (line: string) => console.log(`miner: ${line}`);

export async function submitAgent(miner: Miner, agentPath: string, name: string) {
  const zip = agentArchive(agentPath);
  say(
    `submitting ${agentPath} (${zip.byteLength} bytes, sha256 ${sha256Hex(zip).slice(0, 16)}...)`,
  );
  const answer = await miner.client.signed<{ id: number; artifact_sha256?: string }>(
    "POST",
    "/submissions",
    { name, artifact_b64: zip.toString("base64") },
  );
  say(`submission ${answer.id} stored for ${miner.pair.address}`);
  return answer.id;
}

/** PUT env (`env` non-empty) or confirm that the agent needs none. */
export async function setEnv(miner: Miner, id: number, env: Record<string, string>) {
  const names = Object.keys(env);
  if (names.length === 0) {
    await miner.client.signed("POST", `/submissions/${id}/env/confirm-empty`);
    say("env: confirmed empty");
    return;
  }
  await miner.client.signed("PUT", `/submissions/${id}/env`, { env });
  // Names only: values are secrets (API keys), and the challenge never shows them either.
  say(`env: ${names.length} value(s) set, sealed at rest (${names.sort().join(", ")})`);
}

export async function launch(miner: Miner, id: number) {
  await miner.client.signed("POST", `/submissions/${id}/launch`);
  say("launched: the env is locked; evaluation may start after the review allows");
}

/** The review: prepare, record the deployment, run the reference review worker, read the verdict. */
export async function review(miner: Miner, id: number): Promise<"allowed" | string> {
  const prepared = await miner.client.signed<ReviewPrepareAnswer>(
    "POST",
    `/submissions/${id}/review/prepare`,
  );
  say(`review: assignment ${prepared.assignment_id} (${prepared.state})`);
  const token = prepared.secret_delivery?.token;
  if (token) {
    await miner.client.signed("POST", `/submissions/${id}/review/deployed`, {
      assignment_id: prepared.assignment_id,
      vm_id: `local-${process.pid}`,
      provider_receipt: "miner.js: the reference review worker as a local process",
      image_digest: `sha256:${sha256Hex("agent-eval reference review worker (local process)")}`,
      compose_hash: sha256Hex("miner.js local review"),
    });
    say("review: deployed; running the reference review worker");
    const code = await runReviewWorker({ token, challengeUrl: miner.client.base });
    if (code !== 0) say(`review: the worker exited ${code}`);
  } else {
    say("review: its token was delivered before; reading the verdict");
  }
  const history = await miner.client.signed<Static<typeof ReviewAuditResponse>>(
    "GET",
    `/submissions/${id}/review/history?limit=16`,
  );
  const current = history.items.find((item) => item.assignment_id === prepared.assignment_id);
  const verdict = current?.outcome ?? current?.state ?? "unknown";
  say(`review: ${verdict}${current?.verification_code ? ` (${current.verification_code})` : ""}`);
  return verdict;
}

/** The evaluation: prepare the run, sign its telemetry grant, run the eval worker, read the score. */
export async function evaluate(
  miner: Miner,
  id: number,
  options: { agentImage: string },
): Promise<{ state: string; score: number | null }> {
  const prepared = await miner.client.signed<EvalPrepareAnswer>(
    "POST",
    `/submissions/${id}/eval/prepare`,
  );
  const { task_ids } = prepared.plan.task_set;
  say(`eval: run ${prepared.run_id}: ${task_ids.length} tasks x ${prepared.plan.trials} trials`);
  const token = prepared.secret_delivery?.token;
  if (!token) {
    throw new MinerError(
      `eval run ${prepared.run_id} was prepared before and its token delivered then; ` +
        "cancel it (eval/cancel) and retry, or wait for its result",
    );
  }
  // The worker never sees the mnemonic: it gets this grant, good for this run and plan only.
  const grant = signTelemetryGrant(miner.pair, {
    runId: prepared.run_id,
    planSha256: prepared.plan_digest,
  });
  say("eval: telemetry grant signed; running the reference eval worker");
  await ensureAgentImage(options.agentImage);
  const code = await runEvalWorker({
    token,
    grant,
    challengeUrl: miner.client.base,
    internalUrl: miner.client.internal,
    agentImage: options.agentImage,
  });
  if (code !== 0) say(`eval: the worker exited ${code}`);
  const status = await evalStatus(miner, id);
  const run = status.items.find((item) => item.run_id === prepared.run_id);
  say(`eval: run ${prepared.run_id} ${run?.state ?? "unknown"}`);
  return { state: run?.state ?? "unknown", score: run?.score ?? null };
}

export function evalStatus(miner: Miner, id: number): Promise<Static<typeof EvalHistoryResponse>> {
  return miner.client.signed("GET", `/submissions/${id}/eval/status?limit=16`);
}

interface WeightsSnapshot {
  computed_at: string;
  hotkeys?: Record<string, number>;
}

/** Through a master: wait (up to `seconds`) for a snapshot giving `hotkey` a weight. */
export async function awaitWeight(miner: Miner, seconds: number): Promise<number | null> {
  const master = miner.client.master;
  if (master === null || seconds <= 0) return null;
  say(`weights: waiting up to ${seconds} s for ${master}/v1/weights/latest`);
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const snapshot = await miner.client.get<WeightsSnapshot>(`${master}/v1/weights/latest`);
    const weight = snapshot?.hotkeys?.[miner.pair.address];
    if (typeof weight === "number" && weight > 0) {
      say(
        `weights: ${miner.pair.address} holds ${weight} in the snapshot of ${snapshot!.computed_at}`,
      );
      return weight;
    }
    if (Date.now() >= deadline) {
      say(
        "weights: none for this hotkey (yet: the master collects every 30 s by default; " +
          "winner-take-all gives the weight to the best agent only)",
      );
      return null;
    }
    await delay(2000);
  }
}

interface ChainWeights {
  validator: string | null;
  uid?: number | null;
  last_confirmed: {
    /** `commit` under commit-reveal: `block` is where the chain revealed it. */
    kind?: "set_weights" | "commit";
    block: { number: number; hash: string };
    commit_block?: { number: number };
    uids: number[];
    weights_u16: number[];
  } | null;
}

/**
 * Through a master that sets weights on chain (`GET /v1/weights/chain`; 404 when it does not):
 * wait (up to `seconds`) for `hotkey`'s uid to carry a weight in a confirmed submission.
 */
export async function awaitChainWeight(miner: Miner, seconds: number): Promise<void> {
  const master = miner.client.master;
  if (master === null || seconds <= 0) return;
  const target = `${master}/v1/weights/chain?hotkey=${encodeURIComponent(miner.pair.address)}`;
  const deadline = Date.now() + seconds * 1000;
  let announced = false;
  for (;;) {
    const view = await miner.client.get<ChainWeights>(target);
    if (view === null || view.validator === null) return; // this master sets no weights on chain
    if (!announced) {
      say(`chain: waiting up to ${seconds} s for ${master}/v1/weights/chain`);
      announced = true;
    }
    const uid = view.uid;
    const confirmed = view.last_confirmed;
    const at = typeof uid === "number" && confirmed ? confirmed.uids.indexOf(uid) : -1;
    if (at >= 0 && confirmed && (confirmed.weights_u16[at] ?? 0) > 0) {
      say(
        `chain: ${miner.pair.address} is uid ${uid}; its weight ${confirmed.weights_u16[at]}/65535 was confirmed in block #${confirmed.block.number} ${confirmed.block.hash}${
          confirmed.kind === "commit" && confirmed.commit_block
            ? ` (revealed there from the validator's commit in block #${confirmed.commit_block.number})`
            : ""
        }`,
      );
      return;
    }
    if (Date.now() >= deadline) {
      say(
        typeof uid === "number"
          ? `chain: uid ${uid} has no confirmed weight yet (the validator sets weights once per rate limit)`
          : "chain: this hotkey has no uid on the subnet yet",
      );
      return;
    }
    await delay(2000);
  }
}

/** The whole flow. Resolves to the final score (0 when the review did not allow the agent). */
export async function runAll(
  miner: Miner,
  input: {
    agentPath: string;
    name: string;
    env: Record<string, string>;
    agentImage: string;
    waitWeightSeconds: number;
  },
): Promise<number> {
  const id = await submitAgent(miner, input.agentPath, input.name);
  await setEnv(miner, id, input.env);
  await launch(miner, id);
  const verdict = await review(miner, id);
  if (verdict !== "allowed") {
    say(`the review did not allow this agent (${verdict}): it is not evaluated`);
    return 0;
  }
  const result = await evaluate(miner, id, { agentImage: input.agentImage });
  if (result.state !== "accepted" || result.score === null) {
    say(`the run ended ${result.state}: no score`);
    return 0;
  }
  if (result.score > 0 && (await awaitWeight(miner, input.waitWeightSeconds)) !== null)
    await awaitChainWeight(miner, input.waitWeightSeconds);
  return result.score;
}
