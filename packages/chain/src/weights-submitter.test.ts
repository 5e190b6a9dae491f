import type { Database } from "@platform/core";
import type { KeyringPair } from "@polkadot/keyring/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Cleanup,
  chainClient,
  chainNode,
  chainTestBackend,
  devKeys,
  quiet,
  snapshotOf,
  untilFinal,
  validatorDatabase,
} from "./_test-chain.js";
import type { ChainClient } from "./chain-client.js";
import type { LocalSubtensor } from "./local-subtensor/index.js";
import { SubmissionStore } from "./submission-store.js";
import { CommitRevealEnabledError, LocalCheckError, maxUpscaleU16 } from "./subnet-rules.js";
import {
  createWeightsSubmitter,
  type RawVector,
  type SubmitResult,
  type WeightsSubmitterOptions,
} from "./weights-submitter.js";

describe("weights submitter against a local subtensor", () => {
  const cleanup = new Cleanup();
  let node: LocalSubtensor;
  let client: ChainClient;
  let db: Database;
  let store: SubmissionStore;
  let keys: Awaited<ReturnType<typeof devKeys>>;

  beforeAll(async () => {
    keys = await devKeys();
    db = await validatorDatabase(cleanup, await chainTestBackend());
    store = new SubmissionStore(db.sql);
    node = await chainNode(cleanup, {
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    });
    const { alice, bob, charlie } = keys;
    // uid 0 on every subnet: alice, with a validator permit. Registrations issued together
    // land in one block.
    await Promise.all([1, 2, 3, 4, 5, 6].map((n) => node.registerNeuron(n, alice.address, true)));
    await Promise.all([1, 4, 5].map((n) => node.registerNeuron(n, bob.address, false)));
    await Promise.all([
      ...[1, 4, 5].map((n) => node.registerNeuron(n, charlie.address, n === 1)),
      node.setHyperparameter(2, "CommitRevealWeightsEnabled", true),
      node.setHyperparameter(3, "WeightsVersionKey", 5),
      node.setHyperparameter(4, "MaxWeightsLimit", 30000),
      node.setHyperparameter(5, "MinAllowedWeights", 3),
      node.setHyperparameter(6, "WeightsSetRateLimit", 100000),
      // Subnet 99 does not exist; only its commit-reveal flag is written (the default is on).
      node.setHyperparameter(99, "CommitRevealWeightsEnabled", false),
    ]);
    await untilFinal(node);
    client = chainClient(cleanup, [node.url]);
  });
  afterAll(() => cleanup.run());

  const submitter = (
    netuid: number,
    keypair: KeyringPair,
    extra: Partial<WeightsSubmitterOptions> = {},
  ) =>
    createWeightsSubmitter({
      client,
      sql: db.sql,
      netuid,
      keypair,
      log: quiet,
      eraPeriod: 16,
      ...extra,
    });

  const nonceOf = (address: string) =>
    client.call("nonce", async (api) =>
      (await api.rpc.system.accountNextIndex(address)).toNumber(),
    );

  const weightsOnChain = (netuid: number, uid: number, hash: string) =>
    client.call("weights", async (api) => {
      const at = await api.at(hash);
      return (await at.query["subtensorModule"]?.["weights"]?.(netuid, uid))?.toJSON() as [
        number,
        number,
      ][];
    });

  const lastUpdateOnChain = (netuid: number, hash: string) =>
    client.call("lastUpdate", async (api) => {
      const at = await api.at(hash);
      return (await at.query["subtensorModule"]?.["lastUpdate"]?.(netuid))?.toJSON() as number[];
    });

  it("sets a snapshot's weights and confirms them from the block's events", async () => {
    const { alice, bob, charlie, ferdie } = keys;
    const events: string[] = [];
    const s = submitter(1, alice, { onEvent: (e) => events.push(e.type) });
    expect(await s.start()).toEqual([]);
    const before = await nonceOf(alice.address);
    // Ferdie is not registered on subnet 1: dropped, his weight burned with the unpaid 0.15.
    const snapshot = snapshotOf(
      { [bob.address]: 0.25, [charlie.address]: 0.5, [ferdie.address]: 0.1 },
      41,
    );
    const result = await s.submit(snapshot);
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("finalized");
    const { record, prepared } = result;
    expect(prepared.built).toMatchObject({
      mapped: 2,
      dropped: 1,
      capped: 0,
      padded: 0,
      allBurn: false,
    });
    expect(prepared.built?.droppedWeight).toBeCloseTo(0.1, 12);
    expect(record.uids).toEqual([0, 1, 2]);
    // 0.25 (burn) : 0.25 : 0.5, max-upscaled.
    expect(record.weights).toEqual([32768, 32768, 65535]);
    expect(record).toMatchObject({
      snapshotId: 41,
      netuid: 1,
      hotkey: alice.address,
      uid: 0,
      status: "finalized",
    });
    expect(record.errorName).toBeNull();
    expect(events).toEqual(["prepared", "signed", "sent", "in_block", "settled"]);
    const block = record.finalizedBlock;
    if (!block) throw new Error("no finalized block");
    expect(block.number).toBeGreaterThan(record.builtBlock.number);
    expect(block.number).toBeLessThan(record.eraDeath);
    // On chain: exactly what was sent, which is its own max-upscale.
    const stored = await weightsOnChain(1, 0, block.hash);
    expect(stored).toEqual(record.uids.map((u, i) => [u, maxUpscaleU16(record.weights)[i]]));
    expect(stored).toEqual(record.uids.map((u, i) => [u, record.weights[i]]));
    expect((await lastUpdateOnChain(1, block.hash))[0]).toBe(block.number);
    expect(await nonceOf(alice.address)).toBe(before + 1);
    expect(await store.get(record.id)).toEqual(record);
  });

  it("catches each rejection locally before sending, and the chain returns the same one", async () => {
    const { alice, bob, dave } = keys;
    const cases: [string, number, KeyringPair, RawVector][] = [
      ["CommitRevealEnabled", 2, alice, { uids: [0], weights: [1] }],
      ["MechanismDoesNotExist", 99, alice, { uids: [0], weights: [1] }],
      ["WeightVecNotEqualSize", 1, alice, { uids: [0, 1], weights: [1] }],
      ["UidsLengthExceedUidsInSubNet", 1, alice, { uids: [0, 1, 2, 2], weights: [1, 1, 1, 1] }],
      ["HotKeyNotRegisteredInSubNet", 1, dave, { uids: [0], weights: [1] }],
      ["IncorrectWeightVersionKey", 3, alice, { uids: [0], weights: [1], versionKey: 4 }],
      ["SettingWeightsTooFast", 6, alice, { uids: [0], weights: [1] }],
      ["NeuronNoValidatorPermit", 1, bob, { uids: [0, 1], weights: [1, 1] }],
      ["DuplicateUids", 1, alice, { uids: [1, 1], weights: [1, 1] }],
      ["UidVecContainInvalidOne", 1, alice, { uids: [1, 50], weights: [1, 1] }],
      ["WeightVecLengthIsLow", 5, alice, { uids: [1, 2], weights: [1, 1] }],
      ["MaxWeightExceeded", 4, alice, { uids: [0, 1], weights: [65535, 1] }],
    ];
    for (const [name, netuid, signer, vector] of cases) {
      const s = submitter(netuid, signer);
      const rows = (await store.recent({ limit: 1000 })).length;
      const nonce = await nonceOf(signer.address);
      // On a commit-reveal subnet the submitter commits; forced to set_weights, it refuses.
      const method = name === "CommitRevealEnabled" ? ("set_weights" as const) : undefined;
      const local = await s.submitVector(vector, { method }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(local, name).toBeInstanceOf(LocalCheckError);
      expect((local as LocalCheckError).check, name).toBe(name);
      expect((local as LocalCheckError).netuid).toBe(netuid);
      if (name === "SettingWeightsTooFast") {
        expect((local as LocalCheckError).allowedFrom).toBeGreaterThan(100000);
        expect((local as LocalCheckError).message).toMatch(/allowed from block \d+/);
      }
      if (name === "CommitRevealEnabled") expect(local).toBeInstanceOf(CommitRevealEnabledError);
      // Nothing was sent or recorded.
      expect((await store.recent({ limit: 1000 })).length, name).toBe(rows);
      expect(await nonceOf(signer.address), name).toBe(nonce);

      const sent = await s.submitVector(vector, { skipLocalChecks: true, method });
      if (sent.status === "dry_run") throw new Error("not a dry run");
      expect(sent.status, name).toBe("failed");
      expect(sent.record.errorCode, name).toBe("module");
      expect(sent.record.errorName, name).toBe(name);
      expect(sent.record.errorMessage).toContain(`subtensorModule.${name}`);
      expect(sent.record.finalizedBlock).not.toBeNull();
      expect(await nonceOf(signer.address), name).toBe(nonce + 1);
    }
  });

  it("confirms from the chain, without sending again, when the connection drops after sending", async () => {
    const { alice, bob } = keys;
    const before = await nonceOf(alice.address);
    const reconnects = client.status().reconnects;
    const s = submitter(1, alice, {
      // Every connection goes the moment the extrinsic is out: its statuses are lost.
      onEvent: (e) => {
        if (e.type === "sent") node.fault({ kind: "close" });
      },
    });
    const result = await s.submit(snapshotOf({ [bob.address]: 1 }, 77));
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("finalized");
    expect(client.status().reconnects).toBeGreaterThan(reconnects);
    const rows = (await store.recent({ limit: 1000 })).filter((r) => r.snapshotId === 77);
    expect(rows).toHaveLength(1);
    expect(await nonceOf(alice.address)).toBe(before + 1);
  });

  it("submit() called while an attempt is in flight waits for it to settle: never two extrinsics out at once", async () => {
    const { alice, bob, charlie } = keys;
    const before = await nonceOf(alice.address);
    const events: { type: string; id: number; snapshotId: number | null }[] = [];
    let second: Promise<SubmitResult> | undefined;
    const s = submitter(1, alice, {
      onEvent: (e) => {
        if (e.type === "prepared") return;
        events.push({ type: e.type, id: e.record.id, snapshotId: e.record.snapshotId });
        // Called directly, as a caller without the validator loop would, the moment the first
        // extrinsic is out.
        if (e.type === "sent" && !second) {
          second = s.submit(snapshotOf({ [charlie.address]: 1 }, 52));
          second.catch(() => undefined); // awaited below
        }
      },
    });
    const first = await s.submit(snapshotOf({ [bob.address]: 1 }, 51));
    if (first.status === "dry_run" || !second) throw new Error("no second submission");
    const next = await second;
    if (next.status === "dry_run") throw new Error("not a dry run");
    expect([first.status, next.status]).toEqual(["finalized", "finalized"]);
    // The second was signed only once the first was settled, on a chain that held the first.
    const firstSettled = events.findIndex((e) => e.type === "settled" && e.id === first.record.id);
    const secondSigned = events.findIndex((e) => e.type === "signed" && e.snapshotId === 52);
    expect(firstSettled).toBeGreaterThanOrEqual(0);
    expect(secondSigned).toBeGreaterThan(firstSettled);
    expect(next.record.builtBlock.number).toBeGreaterThanOrEqual(
      first.record.finalizedBlock?.number as number,
    );
    expect(next.record.nonce).toBe(first.record.nonce + 1);
    expect(await nonceOf(alice.address)).toBe(before + 2);
    expect(events.filter((e) => e.type === "signed")).toHaveLength(2);
  });

  it("records the pool's refusal with its code and reason", async () => {
    const { alice, bob } = keys;
    node.fault({ kind: "reject_next", error: "Stale" });
    const result = await submitter(1, alice).submit(snapshotOf({ [bob.address]: 1 }));
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("failed");
    expect(result.record).toMatchObject({
      errorCode: "1010",
      errorName: "Transaction is outdated",
      inBlock: null,
      finalizedBlock: null,
    });
  });

  it("names the pool's Custom(n) refusals as the chain does, with what to do", async () => {
    const { alice, bob } = keys;
    for (const [custom, name, advice] of [
      [6, "RateLimitExceeded", /rate limit has passed/],
      [1, "StakeAmountTooLow", /stake more/],
    ] as const) {
      node.fault({ kind: "reject_next", error: `Custom:${custom}` });
      const result = await submitter(1, alice).submit(snapshotOf({ [bob.address]: 1 }));
      if (result.status === "dry_run") throw new Error("not a dry run");
      expect(result.status).toBe("failed");
      expect(result.record).toMatchObject({ errorCode: "1010", errorName: name, inBlock: null });
      expect(result.record.errorMessage).toMatch(
        new RegExp(`Custom error: ${custom} \\(${name}\\)`),
      );
      expect(result.record.errorMessage).toMatch(advice);
    }
  });

  it("on a commit-reveal subnet it starts and commits; it never sends set_weights there", async () => {
    // Alice alone on subnet 2, on the burn uid 0: her weight on herself is all-burn.
    const { alice } = keys;
    const s = submitter(2, alice, { allowBurn: true });
    expect(await s.start()).toEqual([]);
    const before = await nonceOf(alice.address);
    const forced = await s
      .submit(snapshotOf({ [alice.address]: 1 }), { method: "set_weights" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(forced).toBeInstanceOf(CommitRevealEnabledError);
    expect((forced as Error).message).toMatch(/CommitRevealWeightsEnabled is true for netuid 2/);
    expect(await nonceOf(alice.address)).toBe(before);
    const result = await s.submit(snapshotOf({ [alice.address]: 1 }, 5));
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("committed");
    expect(result.prepared.mode).toBe("commit");
    expect(result.record).toMatchObject({ kind: "commit", status: "committed", snapshotId: 5 });
    expect(await nonceOf(alice.address)).toBe(before + 1);
  });

  it("caps at MaxWeightsLimit so the chain accepts it, or refuses when it cannot be met", async () => {
    const { alice, bob, charlie } = keys;
    const s = submitter(4, alice);
    const result = await s.submit(
      snapshotOf({ [alice.address]: 0.8, [bob.address]: 0.1, [charlie.address]: 0.1 }),
    );
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("finalized");
    expect(result.prepared.built?.capped).toBe(1);
    // Alice held at 30000/65535 of the sum, the rest shared equally.
    const [a, b, c] = result.record.weights as [number, number, number];
    expect(a).toBe(65535);
    expect(b).toBe(c);
    expect(a / (a + b + c)).toBeLessThanOrEqual(30000 / 65535);
    expect(a / (a + b + c)).toBeGreaterThan(29990 / 65535);

    // Two non-zero weights can never both stay under 0.458 of the sum.
    await expect(
      s.submit(snapshotOf({ [bob.address]: 0.5, [charlie.address]: 0.5 })),
    ).rejects.toMatchObject({
      check: "MaxWeightExceeded",
      message: expect.stringMatching(/at least 3 are needed/),
    });
  });

  it("pads with zero weights up to MinAllowedWeights, which the chain accepts", async () => {
    const { alice, bob } = keys;
    const result = await submitter(5, alice).submit(snapshotOf({ [bob.address]: 1 }));
    if (result.status === "dry_run") throw new Error("not a dry run");
    expect(result.status).toBe("finalized");
    expect(result.record.uids).toEqual([0, 1, 2]);
    expect(result.record.weights).toEqual([0, 65535, 0]);
    expect(result.prepared.built?.padded).toBe(2);
  });

  it("never sends an all-burn snapshot unless allowed, nor a vector it could not read the chain for", async () => {
    const { alice, ferdie } = keys;
    const before = (await store.recent({ limit: 1000 })).length;
    // Nothing paid, or paid only to hotkeys the chain does not know: everything burns.
    for (const snapshot of [snapshotOf({}), snapshotOf({ [ferdie.address]: 1 })]) {
      await expect(submitter(1, alice).submit(snapshot)).rejects.toMatchObject({
        check: "AllBurn",
      });
    }
    expect((await store.recent({ limit: 1000 })).length).toBe(before);
    const allowed = await submitter(1, alice, { allowBurn: true }).submit(snapshotOf({}));
    if (allowed.status === "dry_run") throw new Error("not a dry run");
    expect(allowed.status).toBe("finalized");
    expect(allowed.record.uids).toEqual([0]);
    expect(allowed.record.weights).toEqual([65535]);

    // A chain that cannot be read: the metagraph read fails, nothing is built or recorded.
    const dead = chainClient(cleanup, ["ws://127.0.0.1:9"], {
      callTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
    const blind = createWeightsSubmitter({
      client: dead,
      sql: db.sql,
      netuid: 1,
      keypair: alice,
      log: quiet,
    });
    await expect(blind.submit(snapshotOf({ [keys.bob.address]: 1 }))).rejects.toMatchObject({
      name: "ChainError",
      kind: "unavailable",
    });
    expect((await store.recent({ limit: 1000 })).length).toBe(before + 1);
  });

  it("dry run: builds and checks everything, sends nothing", async () => {
    const { alice, bob } = keys;
    const nonce = await nonceOf(alice.address);
    const rows = (await store.recent({ limit: 1000 })).length;
    const result = await submitter(1, alice).submit(snapshotOf({ [bob.address]: 1 }), {
      dryRun: true,
    });
    expect(result.status).toBe("dry_run");
    expect(result.prepared.uids).toEqual([1]);
    expect(result.prepared.weights).toEqual([65535]);
    expect(result.prepared.check).toEqual({ ok: true, uid: 0 });
    expect(await nonceOf(alice.address)).toBe(nonce);
    expect((await store.recent({ limit: 1000 })).length).toBe(rows);
  });
});

describe("the rate limit, against a chain whose finality lags", () => {
  const cleanup = new Cleanup();
  afterAll(() => cleanup.run());

  it("is read at the best block's LastUpdate: a set_weights not yet final still counts", async () => {
    const { alice, bob } = await devKeys();
    const db = await validatorDatabase(cleanup, await chainTestBackend());
    // Finality 20 blocks (2 s) behind the head: a set_weights stays in best blocks that long.
    const node = await chainNode(cleanup, {
      finalityLag: 20,
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 10 },
    });
    await node.registerNeuron(1, alice.address, true);
    await node.registerNeuron(1, bob.address);
    await untilFinal(node);
    const client = chainClient(cleanup, [node.url]);
    const nonce = () =>
      client.call("nonce", async (api) =>
        (await api.rpc.system.accountNextIndex(alice.address)).toNumber(),
      );
    const bestLastUpdate = () =>
      client.call("lastUpdate", async (api) => {
        const value = await api.query["subtensorModule"]?.["lastUpdate"]?.(1);
        return Number(((value?.toJSON() ?? []) as number[])[0]);
      });
    // Alice's key sets weights elsewhere (another process): the extrinsic lands in a best block.
    const sentAt = await client.call("set_weights", async (api) => {
      const tx = api.tx["subtensorModule"]?.["setWeights"]?.(1, [1], [65535], 0);
      if (!tx) throw new Error("no set_weights");
      await tx.signAndSend(alice);
      return (await api.rpc.chain.getHeader()).number.toNumber();
    });
    while ((await bestLastUpdate()) <= sentAt) await node.nextBlock();
    const setIn = await bestLastUpdate();

    const before = await nonce();
    const refused = await createWeightsSubmitter({
      client,
      sql: db.sql,
      netuid: 1,
      keypair: alice,
      log: quiet,
      eraPeriod: 16,
    })
      .submit(snapshotOf({ [bob.address]: 1 }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // Not final yet when the rules were read: the finalized LastUpdate is the registration's.
    expect(node.status().finalized.number).toBeLessThan(setIn);
    expect(refused).toBeInstanceOf(LocalCheckError);
    expect(refused).toMatchObject({ check: "SettingWeightsTooFast", allowedFrom: setIn + 10 });
    expect(await nonce()).toBe(before);
  });
});
