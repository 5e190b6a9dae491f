import { createLogger } from "@platform/core";
import { Keyring } from "@polkadot/keyring";
import type { KeyringPair } from "@polkadot/keyring/types";
import type { EventRecord, Extrinsic } from "@polkadot/types/interfaces";
import { u8aToHex } from "@polkadot/util";
import { cryptoWaitReady } from "@polkadot/util-crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { DRAND_QUICKNET } from "../drand-beacon.js";
import { epochIndex } from "../rules/epoch.js";
import { timelockEncrypt } from "../timelock.js";
import { encodeWeightsTlockPayload } from "../weights-tlock-payload.js";
import { LocalChain } from "./_local-chain.js";
import { PoolError } from "./_pool-error.js";
import { loadNamedRuntime, type Runtime } from "./_runtime.js";

// The spec-424 runtime on the local chain, in process: the SubnetEpochIndex counter, the pool's
// Custom(n) refusals, the owner's exemptions, the stake threshold, write_pulse in the block
// after, and the upgrade from spec 393.

const spec424 = loadNamedRuntime("spec424");
const spec393 = loadNamedRuntime("spec393");

// Genesis half a period past round 1,000,000's start: by block n's time the beacon has published
// rounds up to 1,000,001 + 4n (12 simulated seconds a block, a round every 3).
const GENESIS_MS = (DRAND_QUICKNET.genesisTime + 3_000_000) * 1000 + 1500;
const publishedBy = (block: number) => 1_000_001n + 4n * BigInt(block);

// Subnet 1, tempo 9, created at block 1: LastEpochBlock = 1 - 1 % 9 = 0, so the counter's epochs
// fire at blocks 9, 18, 27, ... (period 9; the formula's period would be 10).

function chain(runtime: Runtime, lines: string[] = [], tempo = 9): LocalChain {
  return new LocalChain({
    runtime,
    finalityLag: 1,
    historyBlocks: 300,
    tempo,
    subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
    genesisSeed: new TextEncoder().encode("counter-epochs"),
    poolLimit: 64,
    blockMs: 100,
    simulatedBlockMs: 12_000,
    genesisTimestamp: GENESIS_MS,
    log: createLogger({ name: "t", level: "debug", write: (line) => lines.push(line) }),
  });
}

function until(c: LocalChain, head: number): void {
  while (c.head().number < head) c.produceBlock();
}

async function settle<T>(c: LocalChain, pending: Promise<T>): Promise<T> {
  c.produceBlock();
  return pending;
}

function sign(c: LocalChain, pair: KeyringPair, method: unknown, gap = 0): Uint8Array {
  const runtime = c.runtime;
  const ex = runtime.registry.createType(
    "Extrinsic",
    { method },
    { version: 4 },
  ) as unknown as Extrinsic;
  const birth = c.head().number;
  ex.sign(pair, {
    blockHash: c.block(birth)?.hash,
    era: runtime.registry.createType("ExtrinsicEra", { current: birth, period: 64 }),
    genesisHash: c.genesisHash,
    nonce: c.nextIndex(pair.publicKey) + gap,
    runtimeVersion: {
      specVersion: runtime.specVersion,
      transactionVersion: runtime.transactionVersion,
    },
    signedExtensions: runtime.registry.signedExtensions,
  } as unknown as Parameters<Extrinsic["sign"]>[1]);
  return ex.toU8a();
}

function setWeightsTx(c: LocalChain, pair: KeyringPair, dests: number[], weights: number[]) {
  const method = c.runtime.registry.createType("Call", {
    callIndex: c.runtime.callIndex("SubtensorModule", "set_weights"),
    args: { netuid: 1, dests, weights, version_key: 0 },
  });
  return sign(c, pair, method);
}

function commitTx(c: LocalChain, pair: KeyringPair, round: bigint, gap = 0) {
  const [uids, values] = [
    [0, 1],
    [1, 3],
  ];
  const payload = encodeWeightsTlockPayload({
    hotkey: pair.publicKey,
    uids,
    values,
    versionKey: 0,
  });
  const method = c.runtime.registry.createType("Call", {
    callIndex: c.runtime.callIndex("SubtensorModule", "commit_timelocked_weights"),
    args: {
      netuid: 1,
      commit: u8aToHex(timelockEncrypt(payload, round, c.beacon.publicKey)),
      reveal_round: round,
      commit_reveal_version: 4,
    },
  });
  return sign(c, pair, method, gap);
}

interface Ev {
  name: string;
  phase: string;
  index?: number;
  data: unknown;
}

function events(c: LocalChain, n: number): Ev[] {
  const raw = c.store.get(c.state.key("System", "Events"), n);
  if (raw === null) return [];
  // Block n runs (and its events are encoded by) the runtime its parent's state holds.
  const records = c
    .runtimeAt(n - 1)
    .registry.createType("Vec<EventRecord>", raw) as unknown as EventRecord[];
  return records.map((r) => ({
    name: `${r.event.section}.${r.event.method}`,
    phase: r.phase.type,
    ...(r.phase.isApplyExtrinsic ? { index: r.phase.asApplyExtrinsic.toNumber() } : {}),
    data: r.event.data.toJSON(),
  }));
}

const named = (c: LocalChain, n: number, name: string) =>
  events(c, n).filter((e) => e.name === name);

function refusal(run: () => unknown): { code: number; data: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof PoolError) return { code: error.code, data: error.data };
    throw error;
  }
  throw new Error("not refused");
}

function failure(c: LocalChain, n: number): unknown {
  const failed = named(c, n, "system.ExtrinsicFailed")[0];
  const module = (failed?.data as [{ module?: { index: number; error: string } }])?.[0]?.module;
  if (!module) return undefined;
  const variant = Number.parseInt(module.error.slice(2, 4), 16);
  return c.runtime.registry.findMetaError({
    index: c.runtime.registry.createType("u8", module.index),
    error: c.runtime.registry.createType("u8", variant),
  } as never).method;
}

describe("the spec-424 runtime on the local chain", () => {
  const keyring = new Keyring({ type: "sr25519", ss58Format: 42 });
  let alice: KeyringPair;
  let bob: KeyringPair;

  beforeAll(async () => {
    await cryptoWaitReady();
    alice = keyring.addFromUri("//Alice");
    bob = keyring.addFromUri("//Bob");
  });

  async function withNeurons(runtime = spec424, lines: string[] = []): Promise<LocalChain> {
    const c = chain(runtime, lines);
    await settle(
      c,
      Promise.all([
        c.registerNeuron(1, alice.publicKey, true),
        c.registerNeuron(1, bob.publicKey, true),
      ]),
    );
    return c;
  }

  it("counts epochs with SubnetEpochIndex: period tempo from LastEpochBlock, not the formula", async () => {
    const c = await withNeurons();
    const counter = () => c.state.epochCounter(1);
    expect(c.state.lastEpochBlock(1)).toBe(0);
    until(c, 8);
    expect(counter()).toBe(0);
    until(c, 9);
    expect([counter(), c.state.lastEpochBlock(1)]).toEqual([1, 9]);
    until(c, 27);
    expect([counter(), c.state.lastEpochBlock(1)]).toEqual([3, 27]);
    // The block-number formula has drifted from the chain's counter by now.
    expect(epochIndex(1, 9, 27)).toBe(2);
    // Read through the metadata's own storage types.
    expect(c.state.read("SubtensorModule", "SubnetEpochIndex", [1]).toJSON()).toBe(3);
  });

  it("defers, skips and triggers epochs as the chain's schedule does, with its events", async () => {
    const c = await withNeurons();
    until(c, 17);
    c.deferEpoch(1, 2);
    until(c, 18);
    expect(named(c, 18, "subtensorModule.EpochDeferred")).toEqual([
      { name: "subtensorModule.EpochDeferred", phase: "Initialization", data: [1, 18, 19] },
    ]);
    expect([c.state.epochCounter(1), c.state.pendingEpochAt(1)]).toEqual([1, 19]);
    until(c, 19);
    expect(named(c, 19, "subtensorModule.EpochDeferred")).toHaveLength(1);
    until(c, 20);
    expect([c.state.epochCounter(1), c.state.lastEpochBlock(1), c.state.pendingEpochAt(1)]).toEqual(
      [2, 20, 0],
    );
    // Skipped: the slot is consumed and the counter moves all the same.
    c.skipEpoch(1);
    until(c, 29);
    expect(named(c, 29, "subtensorModule.EpochSkipped")).toEqual([
      { name: "subtensorModule.EpochSkipped", phase: "Initialization", data: [1, 29] },
    ]);
    expect([c.state.epochCounter(1), c.state.lastEpochBlock(1)]).toEqual([3, 29]);
    // Triggered: PendingEpochAt fires it before LastEpochBlock + tempo.
    const at = c.triggerEpoch(1, 33);
    c.produceBlock();
    expect(await at).toBe(33);
    until(c, 33);
    expect([c.state.epochCounter(1), c.state.lastEpochBlock(1)]).toEqual([4, 33]);
    expect(() => chain(spec393).deferEpoch(1)).toThrow(/spec 393/);
  });

  it("defers the epochs past MaxEpochsPerBlock a block, in NetworksAdded's key order", async () => {
    // Tempo 5: subnets 1 and 256 share the stagger (256 % 5 = 1 % 5), so their epochs fall due
    // in the same blocks; the map's little-endian keys put 256 (0x0001) before 1 (0x0100).
    const c = chain(spec424, [], 5);
    await settle(
      c,
      Promise.all([
        c.registerNeuron(1, alice.publicKey, true),
        c.registerNeuron(256, alice.publicKey, true),
        c.setHyperparameter(0, "MaxEpochsPerBlock", 1),
      ]),
    );
    expect([c.state.lastEpochBlock(1), c.state.lastEpochBlock(256)]).toEqual([0, 0]);
    until(c, 5);
    expect(named(c, 5, "subtensorModule.EpochDeferred").map((e) => e.data)).toEqual([[1, 5, 6]]);
    expect([c.state.epochCounter(256), c.state.epochCounter(1)]).toEqual([1, 0]);
    until(c, 6);
    expect([c.state.epochCounter(256), c.state.epochCounter(1)]).toEqual([1, 1]);
    expect([c.state.lastEpochBlock(256), c.state.lastEpochBlock(1)]).toEqual([5, 6]);
  });

  it("keys commits by the counter with the lookahead, and reveals them in the chain's reveal epoch", async () => {
    const lines: string[] = [];
    const c = await withNeurons(spec424, lines);
    until(c, 12);
    // Epoch 1 (blocks 9..17): its commits reveal from block 18, when epoch 2 fires.
    c.submit(commitTx(c, alice, publishedBy(13)));
    c.produceBlock();
    expect(c.state.timelockedCommitEpochs(1)).toEqual([1]);
    const committed = named(c, 13, "subtensorModule.TimelockedWeightsCommitted");
    expect(committed).toHaveLength(1);
    // A fire block deferred: its commit belongs to the epoch about to fire (lookahead).
    until(c, 26);
    c.deferEpoch(1);
    c.submit(commitTx(c, bob, publishedBy(27)));
    c.produceBlock();
    expect(c.state.epochCounter(1)).toBe(2);
    expect(c.state.timelockedCommitEpochs(1)).toEqual([3]);
    // Alice's commit was revealed at block 18, the first block of her reveal epoch.
    const revealedAt = [18, 19, 20].find(
      (n) => named(c, n, "subtensorModule.TimelockedWeightsRevealed").length > 0,
    );
    expect(revealedAt).toBe(18);
    expect(named(c, 18, "subtensorModule.TimelockedWeightsRevealed")[0]?.data).toEqual([
      1,
      alice.address,
    ]);
    // The events carry the spec-424 indices (107 committed, 108 revealed).
    const raw = c.store.get(c.state.key("System", "Events"), 18) as Uint8Array;
    const records = spec424.registry.createType(
      "Vec<EventRecord>",
      raw,
    ) as unknown as EventRecord[];
    const revealed = records.find((r) => r.event.method === "TimelockedWeightsRevealed");
    expect([...(revealed?.event.index ?? [])]).toEqual([7, 108]);
    const commitRaw = c.store.get(c.state.key("System", "Events"), 13) as Uint8Array;
    const commitRecords = spec424.registry.createType(
      "Vec<EventRecord>",
      commitRaw,
    ) as unknown as EventRecord[];
    const commitEvent = commitRecords.find((r) => r.event.method === "TimelockedWeightsCommitted");
    expect([...(commitEvent?.event.index ?? [])]).toEqual([7, 107]);
    // Bob's (epoch 3) reveals once epoch 4 fires: at block 37 (LastEpochBlock 28 + 9).
    until(c, 37);
    expect(named(c, 36, "subtensorModule.TimelockedWeightsRevealed")).toEqual([]);
    expect(named(c, 37, "subtensorModule.TimelockedWeightsRevealed")[0]?.data).toEqual([
      1,
      bob.address,
    ]);
  });

  it("stores pulses by an unsigned write_pulse per round in the block after they are published", async () => {
    const c = chain(spec424);
    until(c, 3);
    const last = c.state.lastStoredRound();
    // By block 3 the worker has seen block 2's time: rounds up to 1,000,009.
    expect(last).toBe(publishedBy(2));
    const body = c.block(3)?.extrinsics ?? [];
    const decoded = body.map(
      (hex) => spec424.registry.createType("Extrinsic", hex) as unknown as Extrinsic,
    );
    expect(decoded.map((x) => `${x.method.section}.${x.method.method}`)).toEqual([
      "timestamp.set",
      "drand.writePulse",
      "drand.writePulse",
      "drand.writePulse",
      "drand.writePulse",
    ]);
    expect(decoded.slice(1).every((x) => !x.isSigned)).toBe(true);
    const payload = decoded[1]?.method.args[0]?.toJSON() as { pulses: { round: number }[] };
    const pulse = payload.pulses;
    expect(pulse.map((p) => p.round)).toEqual([Number(publishedBy(1)) + 1]);
    const newPulse = named(c, 3, "drand.NewPulse");
    expect(newPulse.map((e) => [e.phase, e.index, e.data])).toEqual(
      [1, 2, 3, 4].map((i) => ["ApplyExtrinsic", i, [[Number(publishedBy(1)) + i]]]),
    );
    // The stored pulse is what the extrinsic carried.
    const stored = c.state.read("Drand", "Pulses", [publishedBy(2)]).toJSON() as {
      signature: string;
    };
    expect(stored.signature).toBe(u8aToHex(c.beacon.signature(publishedBy(2))));
    // Spec 393 stores them during the block's own initialization, a block earlier.
    const old = chain(spec393);
    until(old, 3);
    expect(old.state.lastStoredRound()).toBe(publishedBy(3));
    expect(named(old, 3, "drand.NewPulse")[0]?.phase).toBe("Initialization");
  });

  it("refuses a low stake (Custom 1) and a rate-limited set_weights (Custom 6) at the pool", async () => {
    const c = await withNeurons();
    await settle(c, c.setHyperparameter(1, "CommitRevealWeightsEnabled", false));
    await settle(c, c.setHyperparameter(1, "WeightsSetRateLimit", 5));
    await settle(c, c.setHyperparameter(0, "StakeThreshold", "1000"));
    until(c, 10);
    expect(refusal(() => c.submit(setWeightsTx(c, alice, [0, 1], [1, 1])))).toEqual({
      code: 1010,
      data: "Custom error: 1",
    });
    await settle(c, c.setStake(1, alice.publicKey, 1000n));
    c.submit(setWeightsTx(c, alice, [0, 1], [1, 1]));
    const n = c.produceBlock().number;
    expect(named(c, n, "subtensorModule.WeightsSet")).toHaveLength(1);
    expect(refusal(() => c.submit(setWeightsTx(c, alice, [0, 1], [1, 2])))).toEqual({
      code: 1010,
      data: "Custom error: 6",
    });
    until(c, n + 4);
    // Five blocks after LastUpdate the pool takes it again.
    c.submit(setWeightsTx(c, alice, [0, 1], [1, 2]));
    c.produceBlock();
    expect(named(c, n + 5, "subtensorModule.WeightsSet")).toHaveLength(1);
  });

  it("exempts the subnet owner's hotkey from the validator permit and the stake", async () => {
    const c = chain(spec424);
    await settle(
      c,
      Promise.all([
        c.registerNeuron(1, alice.publicKey, false),
        c.registerNeuron(1, bob.publicKey, false),
      ]),
    );
    await settle(c, c.setHyperparameter(1, "CommitRevealWeightsEnabled", false));
    await settle(c, c.setHyperparameter(0, "StakeThreshold", "1000"));
    await settle(c, c.setStake(1, bob.publicKey, 5000n));
    // No permit, enough stake, not the owner: the chain's module error, in the block.
    c.submit(setWeightsTx(c, bob, [0, 1], [1, 1]));
    const refused = c.produceBlock().number;
    expect(failure(c, refused)).toBe("NeuronNoValidatorPermit");
    await settle(c, c.setSubnetOwner(1, alice.publicKey));
    // The owner: no permit, no stake, and its weights are set.
    c.submit(setWeightsTx(c, alice, [0, 1], [1, 1]));
    const owner = c.produceBlock().number;
    expect(named(c, owner, "subtensorModule.WeightsSet")[0]?.data).toEqual([1, 0]);
    // Spec 393 knows no such exemption.
    const old = chain(spec393);
    await settle(old, old.registerNeuron(1, alice.publicKey, false));
    await settle(old, old.registerNeuron(1, bob.publicKey, false));
    await settle(old, old.setHyperparameter(1, "CommitRevealWeightsEnabled", false));
    await settle(old, old.setSubnetOwner(1, alice.publicKey));
    old.submit(setWeightsTx(old, alice, [0, 1], [1, 1]));
    const n = old.produceBlock().number;
    expect(failure(old, n)).toBe("NeuronNoValidatorPermit");
  });

  it("drops a commit at reveal time when its hotkey's stake fell below the threshold", async () => {
    const lines: string[] = [];
    const c = await withNeurons(spec424, lines);
    await settle(c, c.setHyperparameter(0, "StakeThreshold", "1000"));
    await settle(c, c.setStake(1, alice.publicKey, 1000n));
    until(c, 11);
    c.submit(commitTx(c, alice, publishedBy(12)));
    c.produceBlock();
    expect(c.state.timelockedCommitEpochs(1)).toEqual([1]);
    await settle(c, c.setStake(1, alice.publicKey, 999n));
    until(c, 20);
    for (let n = 13; n <= 20; n++) {
      expect(named(c, n, "subtensorModule.TimelockedWeightsRevealed")).toEqual([]);
    }
    expect(c.state.timelockedCommitEpochs(1)).toEqual([]);
    const dropped = lines
      .map((l) => JSON.parse(l) as { msg: string; reason?: string })
      .find((l) => l.msg.includes("dropped"));
    expect(dropped?.reason).toMatch(/NotEnoughStakeToSetWeights/);
  });

  it("upgrades from spec 393 while running: the counter continues from the formula's epoch", async () => {
    const c = await withNeurons(spec393);
    until(c, 12);
    // Formula epoch (12 + 2) / 10 = 1: the commit is stored under 1 and reveals in epoch 2.
    c.submit(commitTx(c, alice, publishedBy(13)));
    c.produceBlock();
    expect(c.state.timelockedCommitEpochs(1)).toEqual([1]);
    expect(() => c.deferEpoch(1)).toThrow(/spec 393/);
    const upgraded = c.upgradeRuntime(spec424);
    // Signed for spec 393 and waiting on a nonce gap: once the state holds spec 424 the pool
    // checks it again and CheckSpecVersion fails it.
    const statuses: unknown[] = [];
    c.submit(commitTx(c, bob, publishedBy(30), 1), (s) => statuses.push(s));
    c.produceBlock();
    // Block 14's state holds spec 424 (what clients read at it); block 15 is the first to run it.
    expect(await upgraded).toBe(14);
    expect(statuses).toEqual(["future", "invalid"]);
    expect(c.runtimeAt(13).specVersion).toBe(393);
    expect(c.runtimeAt(14).specVersion).toBe(424);
    expect(c.state.runtime.specVersion).toBe(393);
    c.produceBlock();
    expect(c.state.runtime.specVersion).toBe(424);
    expect(c.state.read("System", "LastRuntimeUpgrade").toJSON()).toEqual({
      specVersion: 424,
      specName: "node-subtensor",
    });
    // migrate_dynamic_tempo at block 15: counter (15 + 2) / 10 = 1, and LastEpochBlock puts the
    // next epoch at block 17, the last block of the formula's epoch 1.
    expect([c.state.epochCounter(1), c.state.lastEpochBlock(1)]).toEqual([1, 8]);
    until(c, 17);
    expect(c.state.epochCounter(1)).toBe(2);
    expect(named(c, 17, "subtensorModule.TimelockedWeightsRevealed")[0]?.data).toEqual([
      1,
      alice.address,
    ]);
    // No way back.
    await expect(c.upgradeRuntime(spec393)).rejects.toThrow(/not newer/);
  });
});
