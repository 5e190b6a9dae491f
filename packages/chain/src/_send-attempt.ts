import type { IKeyringPair } from "@polkadot/types/types";
import { type Follow, type Item, waitFor } from "./_follow-extrinsic.js";
import { errorText, rpcError } from "./_receipt.js";
import type { Reconciler, SubmitterContext } from "./_reconcile-attempts.js";
import { signAttempt } from "./_sign-attempt.js";
import { ChainError } from "./chain-client.js";
import {
  advanceCommitState,
  commitInclusionRoom,
  MIN_COMMIT_INCLUSION_ROOM,
  minRoundMarginBlocks,
  planCommit,
  readBestTime,
  roundMarginBlocks,
} from "./commit-reveal.js";
import { poolRejection } from "./pool-rejection.js";
import type { SubmissionRecord } from "./submission-store.js";
import { CommitRevealEnabledError, localCheckError } from "./subnet-rules.js";
import type {
  PreparedCommit,
  PreparedWeights,
  SubmitOptions,
  SubmitResult,
} from "./weights-submitter.js";

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

  // The plan again from the best head as it is now, once its round is due far enough away and
  // the commit has blocks left to be included in before the epoch's block: in an epoch's last
  // blocks the round is only 4 or 5 blocks off and the commit would have to make the very next
  // block; a block or two later (the next epoch) the round is an epoch further, and the commit
  // reveals no later.
  const freshPlan = async (
    commit: PreparedCommit,
    signal: AbortSignal | undefined,
  ): Promise<PreparedCommit> => {
    const { tempo, revealPeriodEpochs } = commit.state;
    const least = minRoundMarginBlocks(tempo);
    let now = await readBestTime(client, { signal, netuid });
    const mustWait = () => {
      const margin = roundMarginBlocks(now.schedule ?? commit.state.schedule, revealPeriodEpochs);
      const room = commitInclusionRoom(advanceCommitState(netuid, commit.state, now));
      return margin < least || room < MIN_COMMIT_INCLUSION_ROOM;
    };
    // Bounded: within `least` blocks the next epoch starts, and both grow by an epoch.
    for (let waited = 0; waited < least && mustWait(); waited++) {
      await client.waitForHead(now.best.number + 1, { signal }).catch((error) => {
        if (error instanceof ChainError && error.kind === "aborted") throw error;
      });
      now = await readBestTime(client, { signal, netuid });
    }
    const state = advanceCommitState(netuid, commit.state, now);
    if (state === commit.state) return commit;
    return { ...commit, state, plan: planCommit(netuid, state, commit.beacon) };
  };

  // No block left before the era's death to include it in (the pool would refuse it).
  const eraEndsBeforeNextBlock = (eraDeath: number) => {
    const head = client.head()?.number;
    return head !== undefined && head + 1 >= eraDeath;
  };

  // A pool refusal that is the era's end, not a key problem: past the era's death the pool reads
  // another birth block's hash (BadProof) or none at all (AncientBirthBlock). AncientBirthBlock
  // is the era alone (the birth block its era names from the pool's current block is not one the
  // chain can check); BadProof is the era's end only when the node's own best head shows it.
  const eraOver = async (refused: { name: string }, eraDeath: number) => {
    if (/ancient birth block/i.test(refused.name)) return true;
    if (!/bad signature/i.test(refused.name)) return false;
    const best = await client
      .call("reading the best head", async (api) =>
        (await api.rpc.chain.getHeader()).number.toNumber(),
      )
      .catch(() => client.head()?.number);
    return best !== undefined && best + 1 >= eraDeath;
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
    const what = commit ? "commit_timelocked_weights" : "set_weights";
    let signed = await signAttempt(
      ctx,
      { keypair, eraPeriod },
      { result, commit, nonce: next },
      signal,
    );
    // A commit whose epoch's block came while it was sealed and signed (a slow machine, a busy
    // node) would reach the pool with its era over: planned again for the next epoch instead.
    for (let again = 0; again < 2 && commit && eraEndsBeforeNextBlock(signed.eraDeath); again++) {
      log.info("the commit's epoch ended while it was signed; planning it for the next one", {
        netuid,
        eraDeath: signed.eraDeath,
        head: client.head()?.number,
      });
      commit = await freshPlan(commit, signal);
      result = { ...result, commit };
      signed = await signAttempt(
        ctx,
        { keypair, eraPeriod },
        { result, commit, nonce: next },
        signal,
      );
    }
    const { tx, nonce, sealed, eraBirth, eraDeath, connection } = signed;
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
          // to do: the pool's `Custom(n)` alone tells an operator nothing. An era's end first: the
          // pool calls it a bad signature or an ancient birth block.
          const rejection = poolRejection(refused);
          const error = (await eraOver(refused, row.eraDeath))
            ? {
                code: refused.code,
                name: "EraExpired",
                message: `reached the pool after its era ended (block ${row.eraDeath}): the pool reads the era's birth block from its current block, hence "${refused.name}"; the weights go again`,
              }
            : rejection
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
