import type { Logger } from "@platform/core";
import type { Codec } from "@polkadot/types/types";
import { BlockUnavailableError, errorText, type Receipt, readReceipt } from "./_receipt.js";
import { type ChainClient, ChainError } from "./chain-client.js";
import { readCommitEpochs, storageEntry } from "./commit-reveal.js";
import type { SubmissionRecord, SubmissionStore } from "./submission-store.js";
import type { SubmitterEvent } from "./weights-submitter.js";

/** What the submitter's parts share: one (netuid, hotkey), its chain client and its store. */
export interface SubmitterContext {
  client: ChainClient;
  netuid: number;
  hotkey: string;
  store: SubmissionStore;
  log: Logger;
  emit: (event: SubmitterEvent) => void;
  /** How long an attempt may stay open while it is followed or reconciled. */
  settleTimeoutMs: number;
}

/** The reconciler's operations (see {@link createReconciler}). */
export type Reconciler = ReturnType<typeof createReconciler>;

/**
 * Settles attempts from the chain alone, never from memory: the blocks of an attempt's era are
 * searched for its hash; found, the row takes that block's verdict; not found and its era over,
 * its nonce used, or (a commit) its drand round stored, it is dropped.
 */
export function createReconciler(ctx: SubmitterContext) {
  const { client, netuid, hotkey, store, log, emit, settleTimeoutMs } = ctx;
  // The last block scanned for each open attempt (only an optimisation: a restart rescans).
  const scanned = new Map<number, number>();

  // Looks for the attempt in blocks it could be in (after its era's birth); settles it when the
  // answer is final. Returns the row as it now stands.
  const reconcileOne = async (
    row: SubmissionRecord,
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    // One bounded call per block: a long scan never trips the call timeout, and a dropped
    // connection costs one block's read, not the whole scan.
    const receiptIn = (n: number) =>
      client.call(
        `looking for extrinsic ${row.extrinsicHash} in block ${n}`,
        async (api) => {
          const hash = await api.rpc.chain.getBlockHash(n);
          if (hash.isEmpty) return undefined;
          return readReceipt(api, hash.toHex(), row.extrinsicHash, row);
        },
        { signal },
      );
    const finalized = await client.finalized({ signal });
    const last = Math.min(finalized.number, row.eraDeath - 1);
    const unavailable: number[] = [];
    for (let n = Math.max(row.eraBirth, scanned.get(row.id) ?? row.eraBirth) + 1; n <= last; n++) {
      let receipt: Receipt | undefined;
      try {
        receipt = await receiptIn(n);
      } catch (error) {
        if (!(error instanceof BlockUnavailableError)) throw error;
        unavailable.push(n);
        continue;
      }
      if (receipt) return settleFromReceipt(row, receipt);
      if (unavailable.length === 0) scanned.set(row.id, n);
    }
    // Not in a finalized block: is it in a best block past the finalized one?
    const best = await client.call(
      "reading the best head",
      async (api) => (await api.rpc.chain.getHeader()).number.toNumber(),
      { signal },
    );
    for (
      let n = Math.max(finalized.number, row.eraBirth) + 1;
      n <= Math.min(best, row.eraDeath - 1);
      n++
    ) {
      const receipt = await receiptIn(n).catch((error: unknown) => {
        if (error instanceof BlockUnavailableError) return undefined;
        throw error;
      });
      if (receipt) return store.markInBlock(row.id, receipt.block);
    }
    if (row.commit && unavailable.length === 0) {
      // Searched up to the finalized block and not past it: once the chain has stored a round
      // past the commit's, SubtensorTransactionExtension refuses it in every later block.
      const stored = await client.call(
        "reading Drand.LastStoredRound",
        async (api) =>
          BigInt(
            (
              (await storageEntry(api, "drand", "lastStoredRound").at(finalized.hash)) as Codec
            ).toString(),
          ),
        { signal },
      );
      if (stored > BigInt(row.commit.revealRound)) {
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: {
              code: "round",
              name: "RevealRoundPassed",
              message: `not in any block up to ${finalized.number}, where Drand.LastStoredRound ${stored} is past its round ${row.commit.revealRound}`,
            },
          }),
        );
      }
    }
    if (finalized.number >= row.eraDeath - 1) {
      if (unavailable.length > 0) {
        // It cannot be confirmed nor ruled out. It is final for this record (the validator must
        // not stay blocked on it); a resend is still bounded by the chain's own LastUpdate.
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: {
              code: "unverifiable",
              name: "BlocksUnavailable",
              message: `the node has no body for ${unavailable.length} block(s) its era allowed (first ${unavailable[0]})`,
            },
          }),
        );
      }
      return settled(
        await store.settle(row.id, {
          status: "dropped",
          error: {
            code: "era",
            name: "EraExpired",
            message: `not in any block up to ${row.eraDeath - 1}, the last its era allowed`,
          },
        }),
      );
    }
    if (unavailable.length > 0) return row;
    // Every block up to the finalized one was searched: if the account's nonce there is past
    // ours, another extrinsic used it and ours can never be included.
    const nonce = await client.call(
      "reading the account nonce",
      async (api) => {
        const at = await api.at(finalized.hash);
        const account = await at.query["system"]?.["account"]?.(row.hotkey);
        return Number((account?.toJSON() as { nonce?: number } | undefined)?.nonce ?? 0);
      },
      { signal },
    );
    if (nonce > row.nonce) {
      return settled(
        await store.settle(row.id, {
          status: "dropped",
          error: {
            code: "nonce",
            name: "NonceUsed",
            message: `nonce ${row.nonce} was used by another extrinsic by block ${finalized.number}`,
          },
        }),
      );
    }
    if (row.status === "in_block") return store.markRetracted(row.id);
    return row;
  };

  const settled = (record: SubmissionRecord): SubmissionRecord => {
    scanned.delete(record.id);
    emit({ type: "settled", record });
    const fields = {
      id: record.id,
      netuid,
      kind: record.kind,
      status: record.status,
      extrinsicHash: record.extrinsicHash,
      block: record.finalizedBlock?.number ?? null,
      error: record.errorName,
    };
    if (record.status === "finalized") log.info("weights confirmed on chain", fields);
    else if (record.status === "committed") {
      log.info("weights committed on chain; the reveal is awaited", {
        ...fields,
        revealRound: record.commit?.revealRound,
        commitEpoch: record.commit?.commitEpoch,
        revealEpoch: record.commit?.revealEpoch,
      });
    } else log.warn(record.kind === "commit" ? "weights not committed" : "weights not set", fields);
    return record;
  };

  const settleFromReceipt = async (row: SubmissionRecord, receipt: Receipt) => {
    if (!receipt.ok || !row.commit) {
      return settled(
        await store.settle(row.id, {
          status: receipt.ok ? "finalized" : "failed",
          block: receipt.block,
          error: receipt.error,
        }),
      );
    }
    const epochs = await readCommitEpochs(client, netuid, receipt.block, row.commit.hash);
    if (row.commit.commitEpoch !== null && epochs.commitEpoch !== row.commit.commitEpoch) {
      // Its era ends before the next epoch's block, so only an epoch brought forward after it
      // was signed (an owner's trigger) does this: the round aims at the planned reveal epoch,
      // before the one the chain will reveal it in.
      log.warn("commit stored under another epoch than planned: its round is due early", {
        id: row.id,
        netuid,
        planned: row.commit.commitEpoch,
        stored: epochs.commitEpoch,
        block: receipt.block.number,
        revealRound: row.commit.revealRound,
      });
    }
    const record = await store.settle(row.id, {
      status: "committed",
      block: receipt.block,
      epochs,
    });
    if (record.status === "committed") {
      const linked = await store.linkRecommit(record.id);
      if (linked.length > 0) {
        log.info("the weights of unrevealed commits were committed again", {
          id: record.id,
          unrevealed: linked,
        });
      }
    }
    return settled(record);
  };

  // Reconciles until the row is final, waiting for blocks in between; bounded.
  const reconcileUntilFinal = async (
    row: SubmissionRecord,
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    const deadline = Date.now() + settleTimeoutMs;
    let current = row;
    for (;;) {
      try {
        current = await reconcileOne(current, signal);
      } catch (error) {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
        if (Date.now() >= deadline) throw error;
        log.warn("reconciling an attempt with the chain failed; retrying", {
          id: row.id,
          error: errorText(error),
        });
      }
      if (current.status !== "pending" && current.status !== "in_block") return current;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new ChainError(
          "timeout",
          `attempt #${row.id} (${row.extrinsicHash}) is still ${current.status} after ${settleTimeoutMs} ms`,
        );
      }
      const head = client.head()?.number ?? 0;
      await client.waitForHead(head + 1, { signal, timeoutMs: left }).catch((error) => {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
      });
    }
  };

  const reconcile = async (
    opts: { wait?: boolean; signal?: AbortSignal } = {},
  ): Promise<SubmissionRecord[]> => {
    const open = await store.open(netuid, hotkey);
    const out: SubmissionRecord[] = [];
    for (const row of open) {
      log.info("reconciling an open attempt with the chain", {
        id: row.id,
        kind: row.kind,
        status: row.status,
        extrinsicHash: row.extrinsicHash,
      });
      out.push(
        opts.wait
          ? await reconcileUntilFinal(row, opts.signal)
          : await reconcileOne(row, opts.signal),
      );
    }
    return out;
  };

  return { reconcileOne, reconcileUntilFinal, reconcile, settled, settleFromReceipt };
}
