import type { SubmittableExtrinsic } from "@polkadot/api/types";
import type { ExtrinsicEra } from "@polkadot/types/interfaces";
import type { IKeyringPair } from "@polkadot/types/types";
import { u8aToHex } from "@polkadot/util";
import { blake2AsHex } from "@polkadot/util-crypto";
import { type Follow, type Item, waitFor } from "./_follow-extrinsic.js";
import { errorText, rpcError } from "./_receipt.js";
import type { Reconciler, SubmitterContext } from "./_reconcile-attempts.js";
import { ChainError } from "./chain-client.js";
import {
  advanceCommitState,
  COMMIT_REVEAL_VERSION,
  minRoundMarginBlocks,
  planCommit,
  readBestTime,
  roundMarginBlocks,
} from "./commit-reveal.js";
import { poolRejection } from "./pool-rejection.js";
import type { SubmissionRecord } from "./submission-store.js";
import { CommitRevealEnabledError, localCheckError } from "./subnet-rules.js";
import { timelockEncrypt } from "./timelock.js";
import type {
  PreparedCommit,
  PreparedWeights,
  SubmitOptions,
  SubmitResult,
} from "./weights-submitter.js";
import { encodeWeightsTlockPayload } from "./weights-tlock-payload.js";

/**
 * Sends one prepared attempt: refused locally unless its checks passed; a commit re-planned from
 * the head as it is now and timelock-encrypted; signed with a mortal era; recorded `pending`
 * BEFORE it is sent; then followed to its outcome, or settled from the chain when the node's
 * answer is lost.
 */
export function createSender(
  ctx: SubmitterContext,
  parts: {
    keypair: IKeyringPair;
    eraPeriod: number;
    reconciler: Reconciler;
    follow: Follow;
  },
) {
  const { client, netuid, hotkey, store, log, emit } = ctx;
  const { keypair, eraPeriod, follow } = parts;
  const { reconcileUntilFinal, settled } = parts.reconciler;

  // The plan again from the best head as it is now, once its round is due far enough away: in an
  // epoch's last blocks the round is only 4 or 5 blocks off, a block or two later (the next
  // epoch) it is an epoch further, and the commit reveals no later.
  const freshPlan = async (
    commit: PreparedCommit,
    signal: AbortSignal | undefined,
  ): Promise<PreparedCommit> => {
    const { tempo, revealPeriodEpochs } = commit.state;
    const least = minRoundMarginBlocks(tempo);
    let now = await readBestTime(client, { signal, netuid });
    const margin = () =>
      roundMarginBlocks(now.schedule ?? commit.state.schedule, revealPeriodEpochs);
    for (let waited = 0; waited < least && margin() < least; waited++) {
      await client.waitForHead(now.best.number + 1, { signal }).catch((error) => {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
      });
      now = await readBestTime(client, { signal, netuid });
    }
    const state = advanceCommitState(netuid, commit.state, now);
    if (state === commit.state) return commit;
    return { ...commit, state, plan: planCommit(netuid, state, commit.beacon) };
  };

  const send = async (result: PreparedWeights, opts: SubmitOptions): Promise<SubmitResult> => {
    const { signal } = opts;
    if (!result.check.ok && !opts.skipLocalChecks) {
      if (result.check.check === "CommitRevealEnabled") throw new CommitRevealEnabledError(netuid);
      throw localCheckError(result.check, result.rules);
    }
    let commit = result.mode === "commit" ? result.commit : undefined;
    if (result.mode === "commit" && !commit)
      throw new Error("a commit was prepared without its plan");
    if (opts.dryRun) {
      log.info(commit ? "dry run: would commit weights" : "dry run: would send set_weights", {
        netuid,
        hotkey,
        uid: result.uid ?? null,
        block: result.rules.block.number,
        versionKey: result.versionKey.toString(),
        uids: result.uids,
        weights: result.weights,
        ...(commit
          ? {
              revealRound: commit.plan.revealRound,
              commitEpoch: commit.plan.commitEpoch,
              revealEpoch: commit.plan.revealEpoch,
              beacon: commit.beacon.source,
            }
          : {}),
      });
      return { status: "dry_run", prepared: result };
    }
    const next = await client.call(
      "reading the account nonce",
      async (api) => (await api.rpc.system.accountNextIndex(hotkey)).toNumber(),
      { signal },
    );
    if (commit) {
      // Locked to the round due from the head as it is now, not when the rules were read: the
      // round is a few blocks away, and only encrypting, signing and recording the attempt come
      // between this and the send.
      commit = await freshPlan(commit, signal);
      result = { ...result, commit };
    }
    // The commit: the payload the chain will decrypt, timelocked to the planned round.
    const sealed = commit
      ? (() => {
          const payload = encodeWeightsTlockPayload({
            hotkey: keypair.publicKey,
            uids: result.uids,
            values: result.weights,
            versionKey: result.versionKey,
          });
          const bytes = timelockEncrypt(payload, commit.plan.revealRound, commit.beacon.publicKey);
          return { bytes, hash: blake2AsHex(bytes, 256) };
        })()
      : undefined;
    const what = commit ? "commit_timelocked_weights" : "set_weights";
    // The era's birth right before signing: waiting for the round above must not eat the era.
    const birth = await client.finalized({ signal });
    // Signed and sent on one connection: the extrinsic is built with that api's registry.
    const { tx, nonce, era, connection } = await client.call(
      `signing ${what}`,
      async (api, connection) => {
        let extrinsic: SubmittableExtrinsic<"promise">;
        if (commit && sealed) {
          const call = api.tx["subtensorModule"]?.["commitTimelockedWeights"];
          if (!call)
            throw new Error("the runtime has no SubtensorModule.commit_timelocked_weights");
          // The version of the payload encrypted; the local checks require the chain's
          // CommitRevealWeightsVersion to be the same, so this is the value the chain asks for.
          extrinsic = call(
            netuid,
            u8aToHex(sealed.bytes),
            commit.plan.revealRound,
            COMMIT_REVEAL_VERSION,
          ) as SubmittableExtrinsic<"promise">;
        } else {
          const call = api.tx["subtensorModule"]?.["setWeights"];
          if (!call) throw new Error("the runtime has no SubtensorModule.set_weights");
          extrinsic = call(
            netuid,
            result.uids,
            result.weights,
            result.versionKey,
          ) as SubmittableExtrinsic<"promise">;
        }
        const mortal = api.createType("ExtrinsicEra", {
          current: birth.number,
          period: eraPeriod,
        }) as ExtrinsicEra;
        await extrinsic.signAsync(keypair, { nonce: next, era: mortal, blockHash: birth.hash });
        return { tx: extrinsic, nonce: next, era: mortal, connection };
      },
      { signal },
    );
    const eraBirth = era.asMortalEra.birth(birth.number);
    const eraDeath = era.asMortalEra.death(birth.number);
    const row = await store.insertPending({
      snapshotId: result.snapshotId,
      netuid,
      hotkey,
      uid: result.uid ?? null,
      builtBlock: result.rules.block,
      extrinsicHash: tx.hash.toHex(),
      nonce,
      eraBirth,
      eraDeath,
      uids: result.uids,
      weights: result.weights,
      versionKey: result.versionKey,
      ...(commit && sealed
        ? {
            commit: {
              hash: sealed.hash,
              revealRound: commit.plan.revealRound,
              commitEpoch: commit.plan.commitEpoch,
              revealEpoch: commit.plan.revealEpoch,
              beaconPublicKey: commit.beacon.publicKeyHex,
            },
          }
        : {}),
    });
    emit({ type: "signed", record: row });
    if (signal?.aborted)
      throw new ChainError("aborted", "aborted before sending", { cause: signal.reason });

    const items: Item[] = [];
    const wake: { notify: (() => void) | undefined } = { notify: undefined };
    const push = (item: Item) => {
      items.push(item);
      wake.notify?.();
    };
    let first: (() => void) | undefined;
    let firstError: unknown;
    const answered = new Promise<void>((resolve) => {
      first = resolve;
    });
    const subscription = connection.api.rx.rpc.author.submitAndWatchExtrinsic(tx).subscribe({
      next: (status) => {
        push({ kind: "status", status });
        first?.();
      },
      error: (error: unknown) => {
        firstError ??= error;
        push({ kind: "error", error });
        first?.();
      },
      complete: () => {
        push({ kind: "complete" });
        first?.();
      },
    });
    const final = (record: SubmissionRecord): SubmitResult => ({
      // A commit already revealed by the time it is reported is still a committed one.
      status: (record.status === "revealed" || record.status === "unrevealed"
        ? "committed"
        : record.status) as "finalized" | "failed" | "dropped" | "committed",
      prepared: result,
      record,
    });
    try {
      const answer = await waitFor(answered, connection, client.callTimeoutMs, signal);
      if (answer !== "answered") {
        // No answer: the node may or may not have it. Only the chain can tell.
        if (answer === "timeout") client.reconnect(`submitting ${what} timed out`);
        log.warn("no answer to the submission; reconciling from the chain", {
          id: row.id,
          reason: answer,
        });
        return final(await reconcileUntilFinal(row, signal));
      }
      if (items[0]?.kind !== "status") {
        const refused = rpcError(firstError);
        if (refused) {
          // Named as the chain names it (`RateLimitExceeded`, `StakeAmountTooLow`...), with what
          // to do: the pool's `Custom(n)` alone tells an operator nothing.
          const rejection = poolRejection(refused);
          const error = rejection
            ? { code: refused.code, name: rejection.name, message: rejection.message }
            : refused;
          log.error(`the node's pool refused ${what}`, { id: row.id, netuid, ...error });
          return final(settled(await store.settle(row.id, { status: "failed", error })));
        }
        log.warn("the submission failed without a pool error; reconciling from the chain", {
          id: row.id,
          error: errorText(firstError),
        });
        return final(await reconcileUntilFinal(row, signal));
      }
      emit({ type: "sent", record: row });
      log.info(`${what} sent`, {
        id: row.id,
        netuid,
        extrinsicHash: row.extrinsicHash,
        uids: result.uids.length,
        ...(commit ? { revealRound: commit.plan.revealRound } : {}),
      });
      return final(await follow(row, connection, items, wake, signal));
    } finally {
      subscription.unsubscribe();
    }
  };

  return send;
}
