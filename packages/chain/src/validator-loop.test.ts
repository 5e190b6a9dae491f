import type { Database, WeightsSnapshot } from "@platform/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Cleanup,
  chainClient,
  chainNode,
  chainTestBackend,
  devKeys,
  quiet,
  recordingLogger,
  snapshotOf,
  until,
  untilFinal,
  validatorDatabase,
} from "./_test-chain.js";
import { type ChainClient, describeEndpoint } from "./chain-client.js";
import type { LocalSubtensor } from "./local-subtensor/index.js";
import { SubmissionStore } from "./submission-store.js";
import { runValidator, VALIDATOR_EXIT, type ValidatorOptions } from "./validator-loop.js";
import type { SubmitterEvent } from "./weights-submitter.js";

describe("validator loop against a local subtensor", () => {
  const cleanup = new Cleanup();
  let node: LocalSubtensor;
  let client: ChainClient;
  let db: Database;
  let store: SubmissionStore;
  let keys: Awaited<ReturnType<typeof devKeys>>;
  let snapshot: WeightsSnapshot;

  beforeAll(async () => {
    keys = await devKeys();
    db = await validatorDatabase(cleanup, await chainTestBackend());
    store = new SubmissionStore(db.sql);
    node = await chainNode(cleanup, {
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    });
    const { alice, bob, charlie } = keys;
    const nets = [1, 2, 3, 4, 5, 6];
    await Promise.all(nets.map((n) => node.registerNeuron(n, alice.address, true)));
    await Promise.all(nets.map((n) => node.registerNeuron(n, bob.address)));
    await Promise.all([
      ...nets.map((n) => node.registerNeuron(n, charlie.address)),
      node.setHyperparameter(2, "CommitRevealWeightsEnabled", true),
      node.setHyperparameter(3, "WeightsSetRateLimit", 8),
      node.setHyperparameter(6, "WeightsSetRateLimit", 100000),
    ]);
    await untilFinal(node);
    client = chainClient(cleanup, [node.url]);
    snapshot = snapshotOf({ [bob.address]: 0.5, [charlie.address]: 0.5 }, 3);
  });
  afterAll(() => cleanup.run());

  const run = (netuid: number, extra: Partial<ValidatorOptions> = {}) =>
    runValidator({
      client,
      sql: db.sql,
      netuid,
      keypair: keys.alice,
      snapshotSource: async () => snapshot,
      once: true,
      eraPeriod: 8,
      retryMs: 200,
      signal: new AbortController().signal,
      log: quiet,
      ...extra,
    });

  const nonce = () =>
    client.call("nonce", async (api) =>
      (await api.rpc.system.accountNextIndex(keys.alice.address)).toNumber(),
    );

  const lastUpdate = (netuid: number) =>
    client.call("lastUpdate", async (api) => {
      const value = await api.query["subtensorModule"]?.["lastUpdate"]?.(netuid);
      return ((value?.toJSON() ?? []) as number[])[0] as number;
    });

  it("--once exits 0 after a confirmed submission", async () => {
    const outcome = await run(1);
    expect(outcome).toMatchObject({ exitCode: VALIDATOR_EXIT.ok, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    expect(outcome.submission).toMatchObject({ status: "finalized", snapshotId: 3, uids: [1, 2] });
  });

  it("--once exits 3 naming the check (and for the rate limit the block from which it is allowed); commits under commit-reveal", async () => {
    const limited = await run(6);
    expect(limited).toMatchObject({
      exitCode: 3,
      reason: "refused",
      check: "SettingWeightsTooFast",
    });
    if (limited.reason !== "refused") throw new Error(limited.reason);
    expect(limited.allowedFrom).toBeGreaterThan(100000);
    expect(limited.message).toContain(`allowed from block ${limited.allowedFrom}`);

    // Commit-reveal on: it commits (commit-reveal.test.ts follows commits to their reveal).
    const commitReveal = await run(2, { waitForReveal: false });
    expect(commitReveal).toMatchObject({ exitCode: 0, reason: "committed" });

    // Nothing verified on subnet 4 yet: an all-burn snapshot has nothing to give way to.
    const allBurn = await run(4, { snapshotSource: async () => snapshotOf({}) });
    expect(allBurn).toMatchObject({ exitCode: 3, check: "AllBurn" });
  });

  it("--once exits 1 on any other failure", async () => {
    node.fault({ kind: "reject_next", error: "NotEnoughStakeToSetWeights" });
    const failed = await run(1);
    expect(failed).toMatchObject({ exitCode: VALIDATOR_EXIT.failed, reason: "failed" });
    if (failed.reason !== "failed") throw new Error(failed.reason);
    expect(failed.message).toMatch(/^set_weights failed: NotEnoughStakeToSetWeights/);
    expect(failed.submission?.errorCode).toBe("module");

    // Nothing verified yet on subnet 5 to fall back on (commit-reveal.test.ts covers the fallback).
    const noSnapshot = await run(5, {
      snapshotSource: () => Promise.reject(new Error("master unreachable")),
    });
    expect(noSnapshot).toEqual({ exitCode: 1, reason: "failed", message: "master unreachable" });
  });

  it("sends the last verified snapshot, not the fresh one, when the health gate cannot answer", async () => {
    const verified = snapshotOf({ [keys.bob.address]: 0.5, [keys.charlie.address]: 0.5 }, 31);
    const open = async () => ({ ok: true as const });
    const first = await run(1, { snapshotSource: async () => verified, healthGate: open });
    expect(first).toMatchObject({ exitCode: 0, submission: { snapshotId: 31 } });
    expect((await store.lastVerifiedSnapshot(1, keys.alice.address))?.snapshot.id).toBe(31);

    // A fresh snapshot that builds fine, but nobody could say the challenges are healthy.
    const { log, lines } = recordingLogger();
    const outcome = await run(1, {
      log,
      snapshotSource: async () => snapshotOf({ [keys.bob.address]: 1 }, 32),
      healthGate: () => Promise.reject(new Error("master history unreachable")),
    });
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    expect(outcome.submission).toMatchObject({ snapshotId: 31, uids: [1, 2] });
    expect(lines.find((l) => l.msg === "submitting the last verified snapshot")).toMatchObject({
      snapshot: 31,
      reason: "the health gate could not answer",
    });
    // The fresh one did not become the verified one.
    expect((await store.lastVerifiedSnapshot(1, keys.alice.address))?.snapshot.id).toBe(31);
  });

  it("--dry-run prints what would be sent and sends nothing", async () => {
    const before = await nonce();
    const { log, lines } = recordingLogger();
    const outcome = await run(1, { dryRun: true, log });
    expect(outcome).toMatchObject({ exitCode: 0, reason: "dry_run" });
    const printed = lines.find((l) => l.msg === "dry run: would send set_weights");
    expect(printed).toMatchObject({
      netuid: 1,
      uids: [1, 2],
      weights: [65535, 65535],
      versionKey: "0",
    });
    expect(await nonce()).toBe(before);
  });

  it("runs until stopped, waiting for the allowed block between submissions", async () => {
    const stop = new AbortController();
    const settled: SubmitterEvent[] = [];
    const running = run(3, {
      once: false,
      signal: stop.signal,
      onEvent: (event) => {
        if (event.type !== "settled") return;
        settled.push(event);
        if (settled.length === 2) stop.abort();
      },
    });
    const outcome = await running;
    expect(outcome).toEqual({ exitCode: 0, reason: "stopped" });
    const [first, second] = settled.map((e) => (e.type === "settled" ? e.record : undefined));
    expect(first?.status).toBe("finalized");
    expect(second?.status).toBe("finalized");
    // Never early: the second was included at least WeightsSetRateLimit (8) blocks after the first.
    expect(
      (second?.finalizedBlock?.number ?? 0) - (first?.finalizedBlock?.number ?? 0),
    ).toBeGreaterThanOrEqual(8);
    expect((await store.recent({ netuid: 3 })).every((r) => r.status === "finalized")).toBe(true);
  });

  it("restarted after sending, it confirms the attempt from the chain and does not send again within the rate limit", async () => {
    const before = await nonce();
    const registeredAt = await lastUpdate(4);
    // Run A is killed right after the extrinsic is sent, before any confirmation.
    const kill = new AbortController();
    const a = await run(4, {
      once: false,
      signal: kill.signal,
      onEvent: (event) => {
        if (event.type === "sent") kill.abort();
      },
    });
    expect(a).toEqual({ exitCode: 0, reason: "stopped" });
    const [open] = await store.open(4, keys.alice.address);
    expect(open?.status).toBe("pending");
    // The chain includes it all the same; then the subnet's rate limit goes up.
    await until(async () => (await lastUpdate(4)) > registeredAt, 10_000, "the extrinsic included");
    await node.setHyperparameter(4, "WeightsSetRateLimit", 100000);
    // The validator reads the subnet's rules at the finalized block: the new limit must be final.
    await untilFinal(node);

    // Run B, on the same database and a new connection.
    const fresh = chainClient(cleanup, [node.url]);
    const b = await run(4, { client: fresh });
    expect(b, `${b.reason}: ${"message" in b ? b.message : ""}`).toMatchObject({
      exitCode: 3,
      check: "SettingWeightsTooFast",
    });
    const rows = await store.recent({ netuid: 4 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: open?.id, status: "finalized", errorName: null });
    expect(rows[0]?.finalizedBlock?.number).toBe(await lastUpdate(4));
    if (b.reason !== "refused") throw new Error(b.reason);
    expect(b.allowedFrom).toBe((rows[0]?.finalizedBlock?.number ?? 0) + 100000);
    // Exactly one extrinsic from alice.
    expect(await nonce()).toBe(before + 1);
  });

  it("restarted before sending, it finds the attempt, settles it as dropped once its era ends, and sends anew", async () => {
    const before = await nonce();
    const kill = new AbortController();
    const a = await run(5, {
      once: false,
      signal: kill.signal,
      onEvent: (event) => {
        if (event.type === "signed") kill.abort();
      },
    });
    expect(a).toEqual({ exitCode: 0, reason: "stopped" });
    expect(await store.open(5, keys.alice.address)).toHaveLength(1);
    const b = await run(5, { client: chainClient(cleanup, [node.url]) });
    expect(b).toMatchObject({ exitCode: 0, reason: "confirmed" });
    const rows = (await store.recent({ netuid: 5 })).reverse();
    expect(rows.map((r) => r.status)).toEqual(["dropped", "finalized"]);
    expect(rows[0]?.errorName).toMatch(/^(EraExpired|NonceUsed)$/);
    expect(await nonce()).toBe(before + 1);
  });

  it("fails over when endpoint 1 dies mid-run and keeps confirming on endpoint 2", async () => {
    const { alice, bob, charlie } = keys;
    const one = await chainNode(cleanup, {
      genesisSeed: "loop-failover",
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    });
    const two = await chainNode(cleanup, {
      genesisSeed: "loop-failover",
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    });
    for (const n of [one, two]) {
      await n.registerNeuron(1, alice.address, true);
      await n.registerNeuron(1, bob.address);
      await n.registerNeuron(1, charlie.address);
    }
    const pair = chainClient(cleanup, [one.url, two.url]);
    const stop = new AbortController();
    const confirmed: string[] = [];
    let killed = false;
    const outcome = await run(1, {
      client: pair,
      netuid: 1,
      sql: db.sql,
      once: false,
      signal: stop.signal,
      onEvent: (event) => {
        if (event.type !== "settled" || event.record.status !== "finalized") return;
        confirmed.push(pair.status().endpoint ?? "");
        if (!killed) {
          killed = true;
          // Endpoint 1 goes away for good, mid-run.
          void one.close();
        } else if (pair.status().endpoint === describeEndpoint(two.url)) {
          stop.abort();
        }
      },
    });
    expect(outcome).toEqual({ exitCode: 0, reason: "stopped" });
    expect(confirmed[0]).toBe(describeEndpoint(one.url));
    expect(confirmed[confirmed.length - 1]).toBe(describeEndpoint(two.url));
    expect(pair.status().reconnects).toBeGreaterThanOrEqual(1);
  });
});
