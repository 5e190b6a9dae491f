import type { Database, WeightsSnapshot } from "@platform/core";
import type { ApiPromise } from "@polkadot/api";
import type { EventRecord } from "@polkadot/types/interfaces";
import type { Codec } from "@polkadot/types/types";
import { hexToU8a, u8aToHex } from "@polkadot/util";
import { blake2AsHex } from "@polkadot/util-crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readReceipt } from "./_receipt.js";
import {
  Cleanup,
  chainClient,
  chainNode,
  chainTestBackend,
  devKeys,
  quiet,
  recordingLogger,
  snapshotOf,
  validatorDatabase,
} from "./_test-chain.js";
import type { ChainClient } from "./chain-client.js";
import {
  COMMIT_REVEAL_VERSION,
  commitEpochOf,
  expectedWeights,
  FINNEY_GENESIS_HASH,
  firstCommitBlockOf,
  readCommitEpochs,
  resolveBeacon,
  storageEntry,
  trackReveal,
} from "./commit-reveal.js";
import { DRAND_QUICKNET } from "./drand-beacon.js";
import { historyHealthGate } from "./health-gate.js";
import type { LocalSubtensor } from "./local-subtensor/index.js";
import { epochIndex, firstBlockOfEpoch } from "./rules/epoch.js";
import { SubmissionStore } from "./submission-store.js";
import { checkCommitTimelocked, LocalCheckError, readSubnetRules } from "./subnet-rules.js";
import { timelockEncrypt } from "./timelock.js";
import { runValidator, type ValidatorOptions } from "./validator-loop.js";
import { createWeightsSubmitter, type SubmitterEvent } from "./weights-submitter.js";
import { encodeWeightsTlockPayload } from "./weights-tlock-payload.js";

const show = (value: unknown) =>
  JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

// Subnets created with tempo 9: an epoch is 10 blocks (1 s at 100 ms blocks), and a commit
// reveals 4 blocks into the next epoch (its round is the pulse due 3 blocks in, stored then).
const TEMPO = 9;

describe("commit-reveal v4 against a local subtensor", () => {
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
      tempo: TEMPO,
      subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
    });
    const { alice, bob, charlie } = keys;
    const nets = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    await Promise.all(nets.map((n) => node.registerNeuron(n, alice.address, true)));
    await Promise.all(nets.map((n) => node.registerNeuron(n, bob.address)));
    await Promise.all([
      ...nets.map((n) => node.registerNeuron(n, charlie.address)),
      node.setHyperparameter(6, "WeightsSetRateLimit", 100000),
      node.setHyperparameter(7, "Tempo", 1000),
    ]);
    client = chainClient(cleanup, [node.url]);
    // Rules are read at the finalized block: wait until it holds every registration.
    const registered = node.status().head.number;
    while (node.status().finalized.number < registered) await node.nextBlock();
    snapshot = snapshotOf({ [bob.address]: 0.25, [charlie.address]: 0.75 }, 11);
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
      eraPeriod: 16,
      retryMs: 200,
      signal: new AbortController().signal,
      log: quiet,
      ...extra,
    });

  const submitter = (
    netuid: number,
    extra: Parameters<typeof createWeightsSubmitter>[0] | object = {},
  ) =>
    createWeightsSubmitter({
      client,
      sql: db.sql,
      netuid,
      keypair: keys.alice,
      log: quiet,
      eraPeriod: 16,
      ...extra,
    });

  const nonce = () =>
    client.call("nonce", async (api) =>
      (await api.rpc.system.accountNextIndex(keys.alice.address)).toNumber(),
    );

  /** Every extrinsic call of alice's in blocks from..to, as `pallet.method`. */
  const callsOfAlice = (from: number, to: number) =>
    client.call("scanning blocks", async (api: ApiPromise) => {
      const out: string[] = [];
      for (let n = from; n <= to; n++) {
        const hash = await api.rpc.chain.getBlockHash(n);
        const block = await api.rpc.chain.getBlock(hash);
        for (const ex of block.block.extrinsics) {
          if (ex.isSigned && ex.signer.toString() === keys.alice.address) {
            out.push(`${ex.method.section}.${ex.method.method}`);
          }
        }
      }
      return out;
    });

  const at = (n: number) =>
    client.call("block hash", async (api) => (await api.rpc.chain.getBlockHash(n)).toHex());

  const eventsAt = (n: number) =>
    client.call("events", async (api) => {
      const hash = (await api.rpc.chain.getBlockHash(n)).toHex();
      const records = (await storageEntry(api, "system", "events").at(
        hash,
      )) as unknown as EventRecord[];
      return [...records].map((r) => ({
        name: `${r.event.section}.${r.event.method}`,
        phase: r.phase.type,
        data: r.event.data.toJSON() as unknown[],
      }));
    });

  const pulseStored = (round: number, n: number) =>
    client.call("pulse", async (api) => {
      const hash = (await api.rpc.chain.getBlockHash(n)).toHex();
      return !((await storageEntry(api, "drand", "pulses").at(hash, round)) as Codec).isEmpty;
    });

  const weightsAt = (netuid: number, uid: number, n: number) =>
    client.call("weights", async (api) => {
      const hash = (await api.rpc.chain.getBlockHash(n)).toHex();
      return (
        (await storageEntry(api, "subtensorModule", "weights").at(hash, netuid, uid)) as Codec
      ).toJSON();
    });

  it("commits instead of setting, locked to the pulse 3 blocks into the reveal epoch, and confirms the reveal", async () => {
    const before = await nonce();
    const events: SubmitterEvent["type"][] = [];
    const outcome = await run(1, { onEvent: (e) => events.push(e.type) });
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    const record = outcome.submission;
    expect(events).toEqual(["prepared", "signed", "sent", "in_block", "settled", "reveal"]);
    expect(record).toMatchObject({
      kind: "commit",
      status: "revealed",
      snapshotId: 11,
      uids: [1, 2],
      weights: [21845, 65535],
      errorName: null,
    });
    const commit = record.commit;
    if (!commit || !record.finalizedBlock || !commit.revealBlock) throw new Error("no commit");
    expect(commit.cause).toBeNull();
    const included = record.finalizedBlock.number;
    expect(commit.commitEpoch).toBe(commitEpochOf(1, TEMPO, included));
    expect(commit.revealEpoch).toBe((commit.commitEpoch as number) + 1);
    expect(commit.beaconPublicKey).toBe(`0x${node.drandInfo().public_key}`);

    // In its block: TimelockedWeightsCommitted(who, netuid, blake2_256(commit), round).
    const committed = (await eventsAt(included)).find(
      (e) => e.name === "subtensorModule.TimelockedWeightsCommitted",
    );
    expect(committed?.data).toEqual([keys.alice.address, 1, commit.hash, commit.revealRound]);

    // The round is the pulse due 3 blocks into an epoch (the reveal epoch of the best block it
    // was built at), stored then and not before; it reveals in the block after it is stored, or
    // at the reveal epoch's start when it was already there (a commit included late).
    let stored = record.builtBlock.number;
    while (!(await pulseStored(commit.revealRound, stored))) stored += 1;
    expect(epochIndex(1, TEMPO, stored - 3)).toBe(epochIndex(1, TEMPO, stored - 4) + 1);
    const firstReveal = firstBlockOfEpoch(1, TEMPO, commit.revealEpoch as number);
    expect(stored).toBeLessThanOrEqual(firstReveal + 3);
    expect(commit.revealBlock.number).toBe(Math.max(firstReveal, stored + 1));
    // Revealed inside its reveal epoch, by the chain, with the weights as committed.
    expect(epochIndex(1, TEMPO, commit.revealBlock.number)).toBe(commit.revealEpoch);
    const revealEvents = await eventsAt(commit.revealBlock.number);
    expect(revealEvents).toContainEqual({
      name: "subtensorModule.TimelockedWeightsRevealed",
      phase: "Initialization",
      data: [1, keys.alice.address],
    });
    expect(await weightsAt(1, 0, commit.revealBlock.number)).toEqual(
      expectedWeights(record.uids, record.weights),
    );
    expect(commit.revealBlock.hash).toBe(await at(commit.revealBlock.number));
    // One extrinsic, a commit; never set_weights.
    expect(await nonce()).toBe(before + 1);
    expect(await callsOfAlice(record.builtBlock.number, commit.revealBlock.number)).toEqual([
      "subtensorModule.commitTimelockedWeights",
    ]);
    expect(await store.get(record.id)).toEqual(record);
  });

  it("reports a reveal whose weights on chain are not the committed ones as unrevealed (weights_differ)", async () => {
    const outcome = await run(11);
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    const record = outcome.submission;
    expect(record.weights).toEqual([21845, 65535]);
    // The chain revealed [21845, 65535]; followed again as if [65535, 21845] had been committed,
    // the reveal event is there but the chain's Weights are not those.
    const other = { ...record, weights: [65535, 21845] };
    const tracked = await trackReveal(client, other);
    expect(tracked).toMatchObject({
      state: "settled",
      settlement: {
        status: "unrevealed",
        cause: "weights_differ",
        block: record.commit?.revealBlock,
      },
    });
    if (tracked.state !== "settled") throw new Error(tracked.state);
    expect(tracked.settlement.detail).toContain("not the committed");
    expect(await trackReveal(client, record)).toMatchObject({
      state: "settled",
      settlement: { status: "revealed", cause: null, block: record.commit?.revealBlock },
    });
  });

  it("reports a commit whose drand round never came as unrevealed (pulse_missing), and commits again", async () => {
    const skipped: number[] = [];
    const { log, lines } = recordingLogger();
    const first = await run(2, {
      log,
      onEvent: (e) => {
        if (e.type === "signed" && e.record.commit && skipped.length === 0) {
          skipped.push(node.skipDrandRound(e.record.commit.revealRound));
        }
      },
    });
    expect(first).toMatchObject({ exitCode: 1, reason: "failed" });
    if (first.reason !== "failed" || !first.submission) throw new Error(first.reason);
    const lost = first.submission;
    expect(first.message).toMatch(/^commit #\d+ unrevealed: pulse_missing/);
    expect(lost.status).toBe("unrevealed");
    expect(lost.commit?.revealRound).toBe(skipped[0]);
    expect(lost.commit?.cause).toBe("pulse_missing");
    expect(lost.commit?.detail).toContain(`drand round ${skipped[0]} was never stored`);
    // It left the chain's storage when its reveal epoch ended, with no event.
    const left = lost.commit?.revealBlock?.number as number;
    expect(left).toBe(firstBlockOfEpoch(2, TEMPO, (lost.commit?.revealEpoch as number) + 1));
    expect((await eventsAt(left)).map((e) => e.name)).not.toContain(
      "subtensorModule.TimelockedWeightsRevealed",
    );
    const logged = lines.find((l) => String(l.msg).startsWith("commit NOT revealed"));
    expect(logged).toMatchObject({ id: lost.id, cause: "pulse_missing" });

    // The next run commits the weights again; the lost commit names it.
    const again = await run(2);
    expect(again).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (again.reason !== "confirmed") throw new Error(again.reason);
    expect(again.submission.status).toBe("revealed");
    expect((await store.get(lost.id))?.commit?.recommitId).toBe(again.submission.id);
  });

  it("commits again at once, under --once too, when the pool refuses a commit for its era", async () => {
    // The pool's word for an era that ended before the commit reached it (its epoch's block came
    // first): AncientBirthBlock. Recorded as EraExpired, not as a key problem, and sent again.
    node.fault({ kind: "reject_next", error: "AncientBirthBlock" });
    const outcome = await run(10);
    expect(outcome, show(outcome)).toMatchObject({ exitCode: 0, reason: "confirmed" });
    const [refused, confirmed] = (await store.recent({ netuid: 10 })).reverse();
    expect(refused).toMatchObject({ kind: "commit", status: "failed", errorName: "EraExpired" });
    expect(refused?.errorMessage).toMatch(/reached the pool after its era ended/);
    expect(confirmed).toMatchObject({ kind: "commit", status: "revealed" });
  });

  it("keeps a bad-signature refusal inside the commit's era a key problem, not an era's end", async () => {
    // BadProof is the era's end only once the node's best head has reached the era's death;
    // before that it is what it says, and committing the same key again would only repeat it.
    node.fault({ kind: "reject_next", error: "BadProof" });
    const outcome = await run(12);
    expect(outcome, show(outcome)).toMatchObject({
      exitCode: 1,
      reason: "failed",
      message: expect.stringMatching(/bad signature/),
    });
    const rows = await store.recent({ netuid: 12 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ kind: "commit", status: "failed", errorCode: "1010" });
    expect(rows[0]?.errorName).not.toBe("EraExpired");
    expect(rows[0]?.eraDeath).toBeGreaterThan(
      rows[0]?.builtBlock.number ?? Number.POSITIVE_INFINITY,
    );
  });

  it("reports a commit encrypted to another beacon than the chain's as unrevealed (decryption_failed)", async () => {
    const { log, lines } = recordingLogger();
    const outcome = await run(3, { log, drandPublicKey: DRAND_QUICKNET.publicKeyHex });
    expect(outcome).toMatchObject({ exitCode: 1, reason: "failed" });
    if (outcome.reason !== "failed") throw new Error(outcome.reason);
    expect(outcome.submission?.commit).toMatchObject({
      cause: "decryption_failed",
      beaconPublicKey: `0x${DRAND_QUICKNET.publicKeyHex}`,
    });
    // Taken out inside its reveal epoch, without an event.
    const commit = outcome.submission?.commit;
    expect(epochIndex(3, TEMPO, commit?.revealBlock?.number as number)).toBe(commit?.revealEpoch);
    // The operator was told before it was sent.
    expect(
      lines.find((l) => String(l.msg).includes("Drand.BeaconConfig key is not")),
    ).toMatchObject({
      encryptingTo: `0x${DRAND_QUICKNET.publicKeyHex}`,
    });
  });

  it("reports a commit whose weights the chain refuses at reveal time as unrevealed (payload_refused)", async () => {
    const outcome = await run(4, {
      onEvent: (e) => {
        // Between commit and reveal the subnet raises its version key.
        if (e.type === "settled" && e.record.status === "committed") {
          void node.setHyperparameter(4, "WeightsVersionKey", 99);
        }
      },
    });
    expect(outcome).toMatchObject({ exitCode: 1, reason: "failed" });
    if (outcome.reason !== "failed") throw new Error(outcome.reason);
    expect(outcome.submission?.commit?.cause).toBe("payload_refused");
    expect(outcome.submission?.commit?.detail).toContain("IncorrectWeightVersionKey");
    await node.setHyperparameter(4, "WeightsVersionKey", 0);
  });

  it("checks a commit locally in the chain's order, and the chain returns the same error", async () => {
    const { alice, dave } = keys;
    const vector = { uids: [1, 2], weights: [1, 2] };
    // HotKeyNotRegisteredInSubNet, CommittingWeightsTooFast; and a reveal-time check
    // (NeuronNoValidatorPermit) the chain would only apply at reveal, dropping the commit.
    const cases: [string, number, typeof alice][] = [
      ["HotKeyNotRegisteredInSubNet", 5, dave],
      ["CommittingWeightsTooFast", 6, alice],
      ["NeuronNoValidatorPermit", 5, keys.bob],
    ];
    for (const [name, netuid, signer] of cases) {
      const s = submitter(netuid, { keypair: signer });
      const rows = (await store.recent({ limit: 1000 })).length;
      const refused = await s.submitVector(vector).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused, name).toBeInstanceOf(LocalCheckError);
      expect((refused as LocalCheckError).check, name).toBe(name);
      if (name === "CommittingWeightsTooFast") {
        expect((refused as LocalCheckError).allowedFrom).toBeGreaterThan(100000);
      }
      expect((await store.recent({ limit: 1000 })).length, name).toBe(rows);
      if (name === "NeuronNoValidatorPermit") continue;
      const sent = await s.submitVector(vector, { skipLocalChecks: true });
      if (sent.status === "dry_run") throw new Error("not a dry run");
      expect(sent.status, name).toBe("failed");
      expect(sent.record.errorName, name).toBe(name);
    }

    // The version the chain expects must be the payload's (v4): otherwise nothing is sent.
    await node.setHyperparameter(0, "CommitRevealWeightsVersion", 5);
    try {
      const s = submitter(5);
      await expect(s.submitVector(vector)).rejects.toMatchObject({
        check: "IncorrectCommitRevealVersion",
      });
      const sent = await s.submitVector(vector, { skipLocalChecks: true });
      if (sent.status === "dry_run") throw new Error("not a dry run");
      expect(sent.record.errorName).toBe("IncorrectCommitRevealVersion");
    } finally {
      await node.setHyperparameter(0, "CommitRevealWeightsVersion", COMMIT_REVEAL_VERSION);
    }

    // Ten commits of a hotkey fit in an epoch, the eleventh does not (checked before sending).
    const rules = await readSubnetRules(client, 5);
    const state = { commitRevealVersion: 4, payloadVersion: 4, maxUnrevealedCommits: 10 };
    expect(
      checkCommitTimelocked(
        rules,
        alice.address,
        { ...vector, versionKey: 0n },
        {
          ...state,
          ownCommitsInEpoch: 10,
        },
      ),
    ).toEqual({ ok: false, check: "TooManyUnrevealedCommits" });
    expect(
      checkCommitTimelocked(
        rules,
        alice.address,
        { ...vector, versionKey: 0n },
        {
          ...state,
          ownCommitsInEpoch: 9,
        },
      ),
    ).toEqual({ ok: true, uid: 0 });
  });

  it("commits once per epoch: a second commit waits for the next epoch", async () => {
    // Subnet 7 has tempo 1000: the epoch does not turn during the test.
    const s = submitter(7);
    const first = await s.submit(snapshot);
    expect(first.status).toBe("committed");
    if (first.status === "dry_run") throw new Error("dry run");
    const epoch = first.record.commit?.commitEpoch as number;
    const second = await s.submit(snapshot).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(second).toMatchObject({
      check: "CommittedThisEpoch",
      allowedFrom: firstCommitBlockOf(7, 1000, epoch + 1),
    });
    expect((await store.recent({ netuid: 7 })).length).toBe(1);
  });

  it("restarted before sending, in block and before the reveal, it resumes and never commits twice in an epoch", async () => {
    const kills: SubmitterEvent["type"][] = ["signed", "in_block", "settled"];
    const before = await nonce();
    for (const point of kills) {
      const kill = new AbortController();
      const outcome = await run(8, {
        once: false,
        signal: kill.signal,
        client: chainClient(cleanup, [node.url]),
        onEvent: (e) => {
          if (e.type === point) kill.abort();
        },
      });
      expect(outcome, point).toEqual({ exitCode: 0, reason: "stopped" });
    }
    // A last run, on a new connection, until a commit of it is revealed. If the killed runs
    // already committed in this epoch, --once says from which block it may commit again.
    const fresh = chainClient(cleanup, [node.url]);
    let final = await run(8, { client: fresh });
    if (final.reason === "refused" && final.check === "CommittedThisEpoch") {
      await fresh.waitForHead((final.allowedFrom as number) - 1);
      final = await run(8, { client: fresh });
    }
    expect(final, show(final)).toMatchObject({ exitCode: 0, reason: "confirmed" });
    const rows = (await store.recent({ netuid: 8 })).reverse();
    const committed = rows.filter(
      (r) => r.commit && r.status !== "dropped" && r.status !== "failed",
    );
    // Each extrinsic the chain included is one recorded attempt (the others never reached a
    // block); at most one commit the chain holds per epoch.
    expect((await nonce()) - before).toBe(rows.filter((r) => r.finalizedBlock !== null).length);
    const epochs = committed.map((r) => r.commit?.commitEpoch);
    expect(new Set(epochs).size).toBe(epochs.length);
    // The first run was killed before sending: that attempt was never on chain. Its era ends
    // before its epoch does, and so before its round is stored; whichever the reconciler saw
    // first settles it.
    expect(rows[0]).toMatchObject({ status: "dropped" });
    expect(["EraExpired", "RevealRoundPassed"]).toContain(rows[0]?.errorName);
    // Every commit the chain accepted was followed to its reveal.
    expect(committed.every((r) => r.status === "revealed")).toBe(true);
  });

  it("after a restart whose snapshot source fails, or serves an all-burn snapshot, it sends the last verified one", async () => {
    const ok = await run(9);
    expect(ok).toMatchObject({ exitCode: 0, reason: "confirmed" });
    expect((await store.lastVerifiedSnapshot(9, keys.alice.address))?.snapshot.id).toBe(11);

    const { log, lines } = recordingLogger();
    const down = await run(9, {
      log,
      snapshotSource: () => Promise.reject(new Error("master unreachable")),
    });
    expect(down).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (down.reason !== "confirmed") throw new Error(down.reason);
    expect(down.submission).toMatchObject({ snapshotId: 11, uids: [1, 2] });
    expect(lines.find((l) => l.msg === "submitting the last verified snapshot")).toMatchObject({
      snapshot: 11,
      reason: "the snapshot source failed (master unreachable)",
    });

    const burn = await run(9, { snapshotSource: async () => snapshotOf({}, 12) });
    expect(burn).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (burn.reason !== "confirmed") throw new Error(burn.reason);
    expect(burn.submission).toMatchObject({ snapshotId: 11, uids: [1, 2] });
    expect((await store.lastVerifiedSnapshot(9, keys.alice.address))?.snapshot.id).toBe(11);
    // Never an empty or all-burn vector.
    for (const row of await store.recent({ netuid: 9 })) {
      expect(row.uids.length).toBeGreaterThan(0);
      expect(row.weights.some((w, i) => w > 0 && row.uids[i] !== 0)).toBe(true);
    }
  });

  it("refuses to commit while the health gate is closed, naming the challenge, unless overridden", async () => {
    const failing = (id: number): WeightsSnapshot => ({
      ...snapshot,
      id,
      sources: [
        {
          slug: "scoring",
          emission_percent: 60,
          status: "failed",
          epoch: null,
          hotkeys: 0,
          share: 0,
          error: "timeout",
        },
        {
          slug: "agent-eval",
          emission_percent: 40,
          status: "ok",
          epoch: 3,
          hotkeys: 2,
          share: 1,
          error: null,
        },
      ],
    });
    const healthGate = historyHealthGate({
      history: async (limit) => [4, 3, 2, 1].map(failing).slice(0, limit),
    });
    const { log, lines } = recordingLogger();
    const before = (await store.recent({ netuid: 1 })).length;
    const closed = await run(1, { healthGate, log });
    expect(closed).toMatchObject({ exitCode: 3, reason: "refused", check: "HealthGate" });
    if (closed.reason !== "refused") throw new Error(closed.reason);
    expect(closed.message).toContain("challenge scoring failed its last 4 weights collections");
    expect(lines.find((l) => String(l.msg).startsWith("health gate closed"))).toMatchObject({
      challenge: "scoring",
      failures: 4,
      graceCollections: 3,
    });
    expect((await store.recent({ netuid: 1 })).length).toBe(before);

    const overridden = await run(1, { healthGate, overrideHealthGate: true, waitForReveal: false });
    expect(overridden).toMatchObject({ exitCode: 0, reason: "committed" });
  });

  it("chooses the beacon: the operator's key, else the local subtensor's (by dev_drandInfo), else quicknet", async () => {
    const local = `0x${node.drandInfo().public_key}`;
    expect(await resolveBeacon(client, {})).toMatchObject({
      source: "local-subtensor",
      publicKeyHex: local,
      genesisTime: node.drandInfo().genesis_time,
      period: node.drandInfo().period,
    });
    expect(await resolveBeacon(client, { localChainGenesis: node.genesisHash })).toMatchObject({
      source: "local-subtensor",
    });
    // Told it is another chain's genesis: this one is not the local subtensor.
    expect(await resolveBeacon(client, { localChainGenesis: FINNEY_GENESIS_HASH })).toMatchObject({
      source: "quicknet",
      publicKeyHex: `0x${DRAND_QUICKNET.publicKeyHex}`,
    });
    expect(
      await resolveBeacon(client, { drandPublicKey: DRAND_QUICKNET.publicKeyHex }),
    ).toMatchObject({ source: "option", publicKeyHex: `0x${DRAND_QUICKNET.publicKeyHex}` });
    await expect(resolveBeacon(client, { drandPublicKey: "abcd" })).rejects.toThrow(RangeError);
  });

  it("does not take another commit's reveal for an expiring one in the same block", async () => {
    // X is locked to a skipped round and stored in epoch E: it expires at the first block of
    // E + 2. Y, of the same hotkey, is stored in E + 1 with a round already due: it reveals at
    // that same first block of E + 2. The block holds a reveal event of the hotkey, for Y.
    const netuid = 10;
    const key = hexToU8a(`0x${node.drandInfo().public_key}`);
    const payload = (values: number[]) =>
      encodeWeightsTlockPayload({
        hotkey: keys.alice.publicKey,
        uids: [0, 1],
        values,
        versionKey: 0,
      });
    const lastStored = () => BigInt(node.status().lastStoredRound);
    const sendCommit = async (values: number[], round: bigint) => {
      const bytes = timelockEncrypt(payload(values), round, key);
      const from = node.status().head.number;
      const extrinsicHash = await client.call("sending a commit", async (api) => {
        const tx = api.tx.subtensorModule?.commitTimelockedWeights?.(
          netuid,
          u8aToHex(bytes),
          round,
          COMMIT_REVEAL_VERSION,
        );
        if (!tx) throw new Error("no commitTimelockedWeights");
        await tx.signAsync(keys.alice);
        await api.rpc.author.submitExtrinsic(tx);
        return tx.hash.toHex();
      });
      // Recorded as the submitter records a commit it sent, then settled from the chain.
      const hash = blake2AsHex(bytes, 256);
      for (let n = from + 1; n <= from + 30; n++) {
        while (node.status().head.number < n) await node.nextBlock();
        const receipt = await client.call("receipt", async (api) =>
          readReceipt(api, (await api.rpc.chain.getBlockHash(n)).toHex(), extrinsicHash, {
            netuid,
            uid: 0,
            hotkey: keys.alice.address,
            commit: { hash, revealRound: Number(round) },
          }),
        );
        if (receipt) {
          expect(receipt.ok).toBe(true);
          const row = await store.insertPending({
            snapshotId: null,
            netuid,
            hotkey: keys.alice.address,
            uid: 0,
            builtBlock: receipt.block,
            extrinsicHash,
            nonce: 0,
            eraBirth: 0,
            eraDeath: 0,
            uids: [0, 1],
            weights: expectedWeights([0, 1], values).map(([, w]) => w),
            versionKey: 0n,
            commit: {
              hash,
              revealRound: Number(round),
              commitEpoch: 0,
              revealEpoch: 0,
              beaconPublicKey: u8aToHex(key),
            },
          });
          const epochs = await readCommitEpochs(client, netuid, receipt.block, hash);
          return store.settle(row.id, { status: "committed", block: receipt.block, epochs });
        }
      }
      throw new Error(`commit to round ${round} not included within 30 blocks`);
    };

    // X, early in an epoch (so Y can follow in the next one), to a round a few blocks away.
    while ((node.status().head.number + 1 + netuid + 1) % (TEMPO + 1) > 2) await node.nextBlock();
    // Rounds well ahead (4 a block): a busy machine may take a few blocks to get them included.
    const skippedRound = lastStored() + 40n;
    node.skipDrandRound(skippedRound);
    const x = await sendCommit([1, 2], skippedRound);
    const e = x.commit?.commitEpoch as number;
    // Y, once the next block is in epoch E + 1, to a round the chain stores 5 blocks later
    // (well before E + 2, 10 blocks on).
    while (commitEpochOf(netuid, TEMPO, node.status().head.number + 1) < e + 1)
      await node.nextBlock();
    const yRound = lastStored() + 20n;
    const y = await sendCommit([3, 4], yRound);
    expect(y.commit?.commitEpoch).toBe(e + 1);

    const expiry = firstBlockOfEpoch(netuid, TEMPO, e + 2);
    while (node.status().finalized.number < expiry) await node.nextBlock();
    const xOutcome = await trackReveal(client, x);
    const yOutcome = await trackReveal(client, y);
    expect(yOutcome).toMatchObject({
      state: "settled",
      settlement: { status: "revealed", block: { number: expiry } },
    });
    expect(xOutcome).toMatchObject({
      state: "settled",
      settlement: { status: "unrevealed", cause: "pulse_missing", block: { number: expiry } },
    });
    expect(
      (await eventsAt(expiry)).filter(
        (ev) => ev.name === "subtensorModule.TimelockedWeightsRevealed",
      ),
    ).toHaveLength(1);
  });
});
