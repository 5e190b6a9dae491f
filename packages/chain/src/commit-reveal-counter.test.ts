import type { ApiPromise } from "@polkadot/api";
import type { Codec } from "@polkadot/types/types";
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
import { readStoredCommits, storageEntry } from "./commit-reveal.js";
import { runtimeFeatures } from "./epoch-model.js";
import type { LocalSubtensor } from "./local-subtensor/index.js";
import type { SubmissionRecord } from "./submission-store.js";
import { runValidator, type ValidatorOptions } from "./validator-loop.js";
import { createWeightsSubmitter } from "./weights-submitter.js";

// The validator on the counter epoch model (spec 423 on) against a running local subtensor that
// serves it (`runtime: "spec424"`, its default) and its dev methods; nothing in it fakes a chain.
// A node that does not serve the counter model fails the suite: it never skips.

const TEMPO = 9;

describe("commit-reveal on the counter epoch model (a local subtensor serving spec 424)", () => {
  const cleanup = new Cleanup();
  let node: LocalSubtensor;
  let client: ChainClient;
  let sql: Awaited<ReturnType<typeof validatorDatabase>>["sql"];
  let keys: Awaited<ReturnType<typeof devKeys>>;

  beforeAll(async () => {
    keys = await devKeys();
    sql = (await validatorDatabase(cleanup, await chainTestBackend())).sql;
    node = await chainNode(cleanup, {
      tempo: TEMPO,
      subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
      runtime: "spec424",
    });
    client = chainClient(cleanup, [node.url]);
    const model = await client.call(
      "reading the runtime",
      async (api) => runtimeFeatures(api).epochModel,
    );
    expect(model, "the local subtensor serves the counter model").toBe("counter");
    const { alice, bob, charlie } = keys;
    for (const netuid of [1, 2, 3, 4, 5, 6]) {
      await node.registerNeuron(netuid, alice.address, true);
      await node.registerNeuron(netuid, bob.address);
      await node.registerNeuron(netuid, charlie.address);
    }
    await untilFinal(node);
  }, 60_000);
  afterAll(() => cleanup.run());

  const run = (netuid: number, extra: Partial<ValidatorOptions> = {}) =>
    runValidator({
      client,
      sql,
      netuid,
      keypair: keys.alice,
      snapshotSource: async () =>
        snapshotOf({ [keys.bob.address]: 0.25, [keys.charlie.address]: 0.75 }, netuid),
      once: true,
      eraPeriod: 16,
      retryMs: 200,
      signal: new AbortController().signal,
      log: quiet,
      ...extra,
    });

  const read = (n: number, what: (api: ApiPromise, hash: string) => Promise<unknown>) =>
    client.call(`reading block ${n}`, async (api) =>
      what(api, (await api.rpc.chain.getBlockHash(n)).toHex()),
    );
  const counterAt = async (netuid: number, n: number) =>
    Number(
      (await read(n, (api, hash) =>
        storageEntry(api, "subtensorModule", "subnetEpochIndex")
          .at(hash, netuid)
          .then((v) => (v as Codec).toString()),
      )) as string,
    );
  const lastEpochBlockAt = async (netuid: number, n: number) =>
    Number(
      (await read(n, (api, hash) =>
        storageEntry(api, "subtensorModule", "lastEpochBlock")
          .at(hash, netuid)
          .then((v) => (v as Codec).toString()),
      )) as string,
    );
  const pulseStoredAt = (round: number, n: number) =>
    read(n, async (api, hash) => {
      const pulse = await storageEntry(api, "drand", "pulses").at(hash, round);
      return !(pulse as Codec).isEmpty;
    });

  /** The checks every confirmed commit on the counter model must pass. */
  const expectUnderTheChainsKey = async (netuid: number, record: SubmissionRecord) => {
    const commit = record.commit;
    if (!commit || !record.finalizedBlock || !commit.revealBlock) throw new Error("no commit");
    const included = record.finalizedBlock.number;
    // Stored under the key the chain gave it (read back by hash at its own block).
    const stored = await read(included, (api, hash) =>
      readStoredCommits(api, hash, netuid, commit.commitEpoch as number),
    );
    expect((stored as { hash: string }[]).map((c) => c.hash)).toContain(commit.hash);
    // That key is the counter (with its lookahead), which the block-number formula is not.
    const index = await counterAt(netuid, included);
    expect([index, index + 1]).toContain(commit.commitEpoch);
    // Revealed in its reveal epoch as the counter numbers it.
    expect(await counterAt(netuid, commit.revealBlock.number)).toBe(commit.revealEpoch);
    // The round's pulse was not on chain before the reveal epoch began: nobody could decrypt the
    // weights before the chain revealed them.
    const firstOfReveal = await lastEpochBlockAt(netuid, commit.revealBlock.number);
    expect(await counterAt(netuid, firstOfReveal)).toBe(commit.revealEpoch);
    // Only a deferral the chain made after the commit was built (the per-block cap: EpochDeferred)
    // starts the reveal epoch later than predicted, by one block each.
    let deferred = 0;
    for (let n = record.builtBlock.number + 1; n <= firstOfReveal; n++) {
      const events = (await read(n, (api, hash) =>
        storageEntry(api, "system", "events").at(hash),
      )) as unknown as { event: { method: string; data: { toJSON(): unknown } } }[];
      deferred += [...events].filter(
        (r) =>
          r.event.method === "EpochDeferred" && (r.event.data.toJSON() as unknown[])[0] === netuid,
      ).length;
    }
    expect(await pulseStoredAt(commit.revealRound, firstOfReveal - 1 - deferred)).toBe(false);
  };

  it("commits, finds and confirms its reveal under the chain's own key, never before the reveal epoch", async () => {
    const outcome = await run(1);
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    expect(outcome.submission).toMatchObject({ kind: "commit", status: "revealed" });
    await expectUnderTheChainsKey(1, outcome.submission);
  });

  it("follows deferred, skipped and triggered epochs", async () => {
    // A deferral (the per-block cap's, one block) and a skipped epoch, both behind it by the time
    // it commits: their effect is in the schedule it reads (LastEpochBlock, the counter). Then an
    // owner's trigger a few blocks ahead (PendingEpochAt), which it reads and follows. (A
    // deferral or trigger the chain makes after a commit is built moves its reveal epoch on the
    // chain's own terms: a deferral takes a block of the round's margin, a trigger can expire it.)
    node.deferEpoch(2, 1);
    node.skipEpoch(2, 1);
    const start = await counterAt(2, node.status().head.number);
    while ((await counterAt(2, node.status().head.number)) < start + 2) await node.nextBlock();
    const at = await node.triggerEpoch(2, node.status().head.number + 4);
    const outcome = await run(2);
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    expect(at).toBeGreaterThan(0);
    await expectUnderTheChainsKey(2, outcome.submission);
  });

  it("lets the subnet owner's hotkey commit without a validator permit", async () => {
    // Bob holds no permit on subnet 3; as the subnet's owner he needs none on this runtime.
    await node.setSubnetOwner(3, keys.bob.address);
    await untilFinal(node);
    const outcome = await run(3, {
      keypair: keys.bob,
      snapshotSource: async () =>
        snapshotOf({ [keys.alice.address]: 0.5, [keys.charlie.address]: 0.5 }, 3),
    });
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
  });

  it("refuses locally, by name, a hotkey whose stake is below StakeThreshold", async () => {
    await node.setHyperparameter(4, "StakeThreshold", 1_000_000);
    await node.setStake(4, keys.alice.address, 10);
    await untilFinal(node);
    const submitter = createWeightsSubmitter({
      client,
      sql,
      netuid: 4,
      keypair: keys.alice,
      log: quiet,
    });
    const refused = await submitter.submit(snapshotOf({ [keys.bob.address]: 1 }, 4)).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).toMatch(
      /^NotEnoughStakeToSetWeights: .*StakeAmountTooLow.*stake 10, threshold 1000000/,
    );
    expect(await submitter.store.recent({ netuid: 4, hotkey: keys.alice.address })).toEqual([]);
  });

  it("reports a commit dropped at reveal for a stake below StakeThreshold as stake_too_low", async () => {
    // StakeThreshold is chain-wide: enough stake to commit, then too little by the reveal.
    await node.setHyperparameter(5, "StakeThreshold", 1_000_000);
    await node.setStake(5, keys.alice.address, 2_000_000);
    await untilFinal(node);
    let lowered: Promise<void> | undefined;
    const outcome = await run(5, {
      onEvent: (event) => {
        if (event.type === "settled" && !lowered) {
          lowered = node.setStake(5, keys.alice.address, 10);
        }
      },
    });
    await lowered;
    expect(outcome).toMatchObject({ exitCode: 1, reason: "failed" });
    if (outcome.reason !== "failed") throw new Error(outcome.reason);
    expect(outcome.submission?.commit).toMatchObject({ cause: "stake_too_low" });
    expect(outcome.submission?.commit?.detail).toMatch(/StakeThreshold.*stake more/);
  });

  it("reports a commit whose reveal epoch the subnet owner brought forward as epoch_moved", async () => {
    // Once the commit is in a block, the owner triggers an epoch and another right after it: the
    // reveal epoch lasts two blocks, long before the block its round was aimed at. Not the
    // beacon's fault (pulse_missing) nor the node's (pulse_late).
    // A 30-block tempo, and the validator started as an epoch begins: the commit lands early in
    // its epoch, so its round is aimed some 30 blocks later, far behind the triggered epochs on a
    // slow machine too.
    await node.setStake(6, keys.alice.address, 2_000_000);
    await node.setHyperparameter(6, "Tempo", 30);
    await untilFinal(node);
    for (;;) {
      const head = node.status().head.number;
      if (head - (await lastEpochBlockAt(6, head)) <= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    let moved: Promise<void> | undefined;
    const nextBlockAfter = async (n: number) => {
      while (node.status().head.number <= n) await new Promise((r) => setTimeout(r, 10));
    };
    const outcome = await run(6, {
      onEvent: (event) => {
        if (event.type !== "in_block" || moved) return;
        moved = (async () => {
          // Two blocks ahead each: PendingEpochAt is in the state of the block before the one
          // that runs the epoch, as an owner's extrinsic puts it there.
          const first = await node.triggerEpoch(6, node.status().head.number + 2);
          await nextBlockAfter(first - 1);
          await node.triggerEpoch(6, node.status().head.number + 2);
        })();
      },
    });
    await moved;
    expect(outcome, "message" in outcome ? outcome.message : "").toMatchObject({
      exitCode: 1,
      reason: "failed",
    });
    if (outcome.reason !== "failed") throw new Error(outcome.reason);
    expect(outcome.submission?.commit, outcome.submission?.commit?.detail ?? "").toMatchObject({
      cause: "epoch_moved",
    });
    expect(outcome.submission?.commit?.detail).toMatch(/brought forward.*PendingEpochAt/);
  });

  it("follows a commit made on spec 393 through an upgrade to the counter runtime", async () => {
    // A node of its own on the spec-393 runtime, upgraded while the commit awaits its reveal.
    const old = await chainNode(cleanup, {
      tempo: TEMPO,
      subnetDefaults: { CommitRevealWeightsEnabled: true, WeightsSetRateLimit: 0 },
      runtime: "spec393",
    });
    const { alice, bob, charlie } = keys;
    await old.registerNeuron(1, alice.address, true);
    await old.registerNeuron(1, bob.address);
    await old.registerNeuron(1, charlie.address);
    await untilFinal(old);
    const oldClient = chainClient(cleanup, [old.url]);
    const models: string[] = [];
    let upgraded: Promise<number> | undefined;
    const outcome = await run(1, {
      client: oldClient,
      onEvent: (event) => {
        if (event.type === "settled" && !upgraded) upgraded = old.upgradeRuntime("spec424");
      },
    });
    expect(outcome).toMatchObject({ exitCode: 0, reason: "confirmed" });
    if (outcome.reason !== "confirmed") throw new Error(outcome.reason);
    const upgradeBlock = await upgraded;
    const record = outcome.submission;
    expect(record).toMatchObject({ kind: "commit", status: "revealed" });
    // Committed under the formula's key before the upgrade, revealed after it by the counter
    // the migration seeded from that formula.
    const included = record.finalizedBlock?.number as number;
    const revealed = record.commit?.revealBlock?.number as number;
    expect(included).toBeLessThanOrEqual(upgradeBlock as number);
    expect(revealed).toBeGreaterThan(upgradeBlock as number);
    for (const n of [included, revealed]) {
      models.push(
        await oldClient.call(
          "runtime",
          async (api) =>
            runtimeFeatures(await api.at((await api.rpc.chain.getBlockHash(n)).toHex())).epochModel,
        ),
      );
    }
    expect(models).toEqual(["block-number", "counter"]);
  });
});
