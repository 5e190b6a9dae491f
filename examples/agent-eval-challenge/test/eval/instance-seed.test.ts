// Issue 36: the run's instances come from a secret no agent can know. The seed is released only
// sealed to a key an attested evaluator's quote binds to this run's plan (a run token alone, the
// miner's, gets nothing; a quote over another key or another run gets nothing); only before the
// result; never in a public response or schema. Two runs of one submission draw different
// instances, and the accepted run's replay request gives back its exact seed.
import { testBackends } from "@platform/challenge-sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEV_MEASUREMENT,
  instanceSeedReportData,
  loadDevAttestationKey,
  measuredEvent,
  replayEventLog,
  signDevQuote,
} from "../../src/attestation/index.js";
import { challenge } from "../../src/challenge.js";
import { openFromKey, sha256Hex, x25519KeyPair } from "../../src/crypto/index.js";
import { instanceInput, REFERENCE_FAMILIES } from "../../src/eval/families/index.js";
import {
  INSTANCE_SEED_SEAL_LABEL,
  type InstanceRelease,
} from "../../src/eval/instance-seed-release.js";
import { type AgentEvalTest, startAgentEval } from "../agent-eval-kit.js";
import { issuedRun, type PreparedRun, postResult, preparedRun, resultFor } from "./eval-kit.js";

const devKey = loadDevAttestationKey();
const eventLog = [measuredEvent(3, "evaluator", "test-evaluator 1")];

/** The release request of `run` for `keys`, honest unless told otherwise. */
function releaseRequest(
  run: PreparedRun,
  keys = x25519KeyPair(),
  options: { bindKey?: string; bindRun?: PreparedRun; mrtd?: string } = {},
) {
  const bound = options.bindRun ?? run;
  const reportData = instanceSeedReportData({
    planDigest: bound.planDigest,
    runId: bound.runId,
    nonce: bound.plan.nonce,
    publicKey: options.bindKey ?? keys.publicKey,
  });
  return {
    keys,
    body: {
      public_key: keys.publicKey,
      report_data_hex: reportData.toString("hex"),
      attestation: {
        quote: signDevQuote({
          privateKeyPem: devKey.privateKeyPem,
          reportData,
          mrtd: options.mrtd ?? DEV_MEASUREMENT,
          rtmrs: replayEventLog(eventLog),
        }).toString("base64"),
        event_log: eventLog,
        measurement: options.mrtd ?? DEV_MEASUREMENT,
        vm_config: { vcpus: 2, memory_mib: 2048, image_digest: `sha256:${"e".repeat(64)}` },
      },
    },
  };
}

describe.each(await testBackends())("the instance seed (issue 36) on %s", (backend) => {
  let t: AgentEvalTest;
  beforeAll(async () => {
    t = await startAgentEval(backend, { SUBMISSION_WINDOW_SECONDS: "0" });
  }, 60_000);
  afterAll(() => t?.close());

  const postRelease = (run: PreparedRun, body: unknown, token: string | null = run.runToken) =>
    t.fetch(`/evaluation/v1/runs/${run.runId}/instance-seed`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    });

  /** The seed released to an honest request of `run`, opened, and the answer's raw text. */
  async function releasedSeed(run: PreparedRun): Promise<{ seed: string; text: string }> {
    const { keys, body } = releaseRequest(run);
    const answer = await postRelease(run, body);
    const text = await answer.text();
    expect(answer.status, text).toBe(200);
    const { sealed } = JSON.parse(text) as {
      sealed: { ephemeral_public_key: string; box: string };
    };
    const release = JSON.parse(
      openFromKey(keys, sealed, INSTANCE_SEED_SEAL_LABEL).toString("utf8"),
    ) as InstanceRelease;
    expect(release.operator_families).toEqual([]);
    return { seed: release.seed, text };
  }

  const refusal = async (response: Response) => [
    response.status,
    ((await response.json()) as { code?: string }).code,
  ];

  it("releases the seed the plan commits to, sealed: the answer never shows it", async () => {
    const run = await preparedRun(t);
    const { seed, text } = await releasedSeed(run);
    expect(sha256Hex(Buffer.from(seed, "hex"))).toBe(run.plan.task_set.instance_seed_sha256);
    expect(text).not.toContain(seed);
    // Asked again (a worker restarted), the same seed: the run's instances do not move.
    expect((await releasedSeed(run)).seed).toBe(seed);
    expect(run.plan.task_set.task_ids).toEqual(REFERENCE_FAMILIES.map((family) => family.id));
  });

  it("refuses the miner's run token without a quote binding the key to this run", async () => {
    const run = await preparedRun(t);
    const other = await preparedRun(t);
    // The miner's own key, with the quote an evaluator made for its key: the binding fails.
    const honest = releaseRequest(run);
    const mine = x25519KeyPair();
    expect(
      await refusal(await postRelease(run, { ...honest.body, public_key: mine.publicKey })),
    ).toEqual([403, "report_data_binding_mismatch"]);
    // A quote made for another run's plan.
    expect(
      await refusal(await postRelease(run, releaseRequest(run, mine, { bindRun: other }).body)),
    ).toEqual([403, "report_data_binding_mismatch"]);
    // A quote from a TD whose measurement is not allowed.
    expect(
      await refusal(
        await postRelease(run, releaseRequest(run, mine, { mrtd: "ab".repeat(48) }).body),
      ),
    ).toEqual([403, "attestation_rejected"]);
    // No token, another run's token.
    expect((await postRelease(run, honest.body, null)).status).toBe(401);
    expect((await postRelease(run, honest.body, other.runToken)).status).toBe(401);
    // A body that is not a request: 422, nothing released.
    expect((await postRelease(run, { public_key: mine.publicKey })).status).toBe(422);
  });

  it("releases nothing once the run has its result", async () => {
    const run = await preparedRun(t);
    expect((await postResult(t, run, await resultFor(run))).status).toBe(202);
    expect(await refusal(await postRelease(run, releaseRequest(run).body))).toEqual([
      409,
      "run_not_running",
    ]);
  });

  it("gives two runs of one submission different instances; the replay request the same seed", async () => {
    const first = await preparedRun(t);
    const base = `/submissions/${first.submissionId}/eval`;
    const post = (path: string, json: unknown) =>
      t.signedFetch(`${base}/${path}`, { method: "POST", miner: first.miner, json });
    const firstSeed = (await releasedSeed(first)).seed;
    expect((await post("cancel", { expected_run_id: first.runId })).status).toBe(200);
    // A cancelled run releases nothing more.
    expect((await postRelease(first, releaseRequest(first).body)).status).toBe(410);
    const second = await issuedRun(first, await post("retry", { expected_run_id: first.runId }));
    expect(second.plan.agent_sha256).toBe(first.plan.agent_sha256);
    const seeds = [firstSeed, (await releasedSeed(second)).seed];
    expect(seeds[0]).not.toBe(seeds[1]);
    const inputs = (seed: string) =>
      REFERENCE_FAMILIES.map((family) => instanceInput(family, Buffer.from(seed, "hex"), 1));
    const [a, b] = [inputs(seeds[0]!), inputs(seeds[1]!)];
    for (const [i, input] of a.entries()) expect(input).not.toBe(b[i]);

    // The second run accepted: its replay request carries its seed, which draws the same inputs.
    expect((await postResult(t, second, await resultFor(second))).status).toBe(202);
    const request = await t.fetch(`/internal/v1/replay-audits/${second.runId}/request`, {
      headers: t.internalHeaders,
    });
    const text = await request.text();
    expect(request.status, text).toBe(200);
    const { instance_seed } = JSON.parse(text) as { instance_seed: string };
    expect(instance_seed).toBe(seeds[1]);
    expect(inputs(instance_seed)).toEqual(b);

    // Nowhere public: the miner's reads, the VM's reads, the public list and the live pool.
    const miner = (path: string) => t.signedFetch(path, { method: "GET", miner: first.miner });
    const vm = (path: string) =>
      t.fetch(path, { headers: { authorization: `Bearer ${second.runToken}` } });
    for (const response of [
      await miner(`${base}/status`),
      await t.signedFetch(`${base}/prepare`, { method: "POST", miner: first.miner }),
      await vm(`/evaluation/v1/runs/${second.runId}`),
      await t.fetch("/submissions"),
      await t.fetch("/v1/execution-pool/live"),
    ]) {
      const body = await response.text();
      for (const seed of seeds) expect(body, response.url).not.toContain(seed!);
    }
  });

  it("/openapi.json names the seed in the internal replay request only", () => {
    const schemas = (
      challenge.openapi() as unknown as { components: { schemas: Record<string, unknown> } }
    ).components.schemas;
    const holders = Object.entries(schemas)
      .filter(([, schema]) => JSON.stringify(schema).includes('"instance_seed"'))
      .map(([name]) => name);
    expect(holders.sort()).toEqual([
      "ReplayAuditRequestListResponse",
      "ReplayAuditRequestResponse",
    ]);
  });
});
