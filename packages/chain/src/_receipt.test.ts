import type { Database } from "@platform/core";
import type { ApiPromise } from "@polkadot/api";
import type { SignedBlock } from "@polkadot/types/interfaces";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlockUnavailableError, type ReceiptExpectation, readReceipt } from "./_receipt.js";
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
import type { SubmissionRecord } from "./submission-store.js";
import { createWeightsSubmitter } from "./weights-submitter.js";

// What a block's events must show before an extrinsic is believed: real extrinsics on a local
// subtensor, read back with expectations that differ from them in one field each.
describe("readReceipt against a local subtensor", () => {
  const cleanup = new Cleanup();
  let node: LocalSubtensor;
  let client: ChainClient;
  let db: Database;
  let keys: Awaited<ReturnType<typeof devKeys>>;
  // A confirmed set_weights (subnet 1) and a confirmed commit (subnet 2), both alice's (uid 0).
  let set: SubmissionRecord;
  let commit: SubmissionRecord;

  beforeAll(async () => {
    keys = await devKeys();
    db = await validatorDatabase(cleanup, await chainTestBackend());
    node = await chainNode(cleanup, {
      subnetDefaults: { CommitRevealWeightsEnabled: false, WeightsSetRateLimit: 0 },
    });
    const { alice, bob } = keys;
    await Promise.all([1, 2].map((n) => node.registerNeuron(n, alice.address, true)));
    await Promise.all([
      ...[1, 2].map((n) => node.registerNeuron(n, bob.address)),
      node.setHyperparameter(2, "CommitRevealWeightsEnabled", true),
    ]);
    await untilFinal(node);
    client = chainClient(cleanup, [node.url]);
    const submit = async (netuid: number) => {
      const s = createWeightsSubmitter({
        client,
        sql: db.sql,
        netuid,
        keypair: alice,
        log: quiet,
        eraPeriod: 16,
      });
      const result = await s.submit(snapshotOf({ [bob.address]: 1 }));
      if (result.status === "dry_run") throw new Error("not a dry run");
      return result.record;
    };
    // One after the other: both are alice's, each takes the next nonce.
    set = await submit(1);
    commit = await submit(2);
    expect(set.status).toBe("finalized");
    expect(commit.status).toBe("committed");
  });
  afterAll(() => cleanup.run());

  const receipt = (row: SubmissionRecord, expect: ReceiptExpectation) =>
    client.call("receipt", (api) =>
      readReceipt(api, row.finalizedBlock?.hash as string, row.extrinsicHash, expect),
    );

  const commitExpectation = (row: SubmissionRecord) => ({
    netuid: row.netuid,
    uid: row.uid,
    hotkey: row.hotkey,
    commit: {
      hash: row.commit?.hash as string,
      revealRound: row.commit?.revealRound as number,
    },
  });

  it("believes a set_weights only with WeightsSet for its own netuid and uid", async () => {
    expect(await receipt(set, { netuid: 1, uid: 0 })).toMatchObject({ ok: true, error: null });
    // ExtrinsicSuccess is in the block for each of these; WeightsSet(1, 0) is not what they ask.
    for (const expectation of [
      { netuid: 2, uid: 0 },
      { netuid: 1, uid: 1 },
    ]) {
      expect(await receipt(set, expectation), JSON.stringify(expectation)).toMatchObject({
        ok: false,
        error: { code: "receipt", name: "NoWeightsSetEvent" },
      });
    }
    // A commit succeeds without any WeightsSet: read as a set_weights, it is not believed.
    expect(await receipt(commit, { netuid: 2, uid: 0 })).toMatchObject({
      ok: false,
      error: { code: "receipt", name: "NoWeightsSetEvent" },
    });
  });

  it("believes a commit only with TimelockedWeightsCommitted of its hash, round and signer", async () => {
    const expected = commitExpectation(commit);
    expect(await receipt(commit, expected)).toMatchObject({ ok: true, error: null });
    const otherHash = `0x${"ab".repeat(32)}`;
    const mismatches: [string, ReceiptExpectation][] = [
      ["hash", { ...expected, commit: { ...expected.commit, hash: otherHash } }],
      [
        "round",
        {
          ...expected,
          commit: { ...expected.commit, revealRound: expected.commit.revealRound + 1 },
        },
      ],
      ["signer", { ...expected, hotkey: keys.bob.address }],
      ["netuid", { ...expected, netuid: 1 }],
    ];
    for (const [what, expectation] of mismatches) {
      expect(await receipt(commit, expectation), what).toMatchObject({
        ok: false,
        error: { code: "receipt", name: "CommittedEventMismatch" },
      });
    }
    // A set_weights succeeds without any commit event.
    expect(await receipt(set, { ...commitExpectation(commit), netuid: 1, uid: 0 })).toMatchObject({
      ok: false,
      error: { code: "receipt", name: "NoCommittedEvent" },
    });
  });

  it("says the block is unavailable when the body answered is not the block asked for, never 'not in it'", async () => {
    // A node that no longer keeps a body (substrate's --blocks-pruning) answers null, which
    // decodes to an empty block; a lagging or lying endpoint may answer another block. Read as
    // "not in this block", the attempt could be dropped and sent again.
    const included = set.finalizedBlock?.hash as string;
    const answers: [string, (api: ApiPromise) => Promise<SignedBlock>][] = [
      ["null", async (api) => api.createType("SignedBlock", null) as SignedBlock],
      [
        "its parent",
        async (api) => api.rpc.chain.getBlock((await api.rpc.chain.getHeader(included)).parentHash),
      ],
    ];
    for (const [what, answer] of answers) {
      const read = client.call("receipt", (api) =>
        readReceipt(
          answeringBlocks(api, () => answer(api)),
          included,
          set.extrinsicHash,
          set,
        ),
      );
      await expect(read, what).rejects.toBeInstanceOf(BlockUnavailableError);
    }
    // The same api, answering the block itself, finds it.
    expect(
      await client.call("receipt", (api) =>
        readReceipt(
          answeringBlocks(api, () => api.rpc.chain.getBlock(included)),
          included,
          set.extrinsicHash,
          set,
        ),
      ),
    ).toMatchObject({ ok: true, block: set.finalizedBlock });
  });
});

/** `api` whose `rpc.chain.getBlock` answers `body()` whatever hash is asked for. */
function answeringBlocks(api: ApiPromise, body: () => Promise<SignedBlock>): ApiPromise {
  const through = <T extends object>(target: T, replace: (key: PropertyKey) => unknown) =>
    new Proxy(target, {
      get(t, key) {
        const replaced = replace(key);
        if (replaced !== undefined) return replaced;
        const value = Reflect.get(t, key, t);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
  return through(api, (key) =>
    key === "rpc"
      ? through(api.rpc, (k) =>
          k === "chain"
            ? through(api.rpc.chain, (m) => (m === "getBlock" ? body : undefined))
            : undefined,
        )
      : undefined,
  );
}
