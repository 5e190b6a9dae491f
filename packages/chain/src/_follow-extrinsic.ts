import type { ExtrinsicStatus } from "@polkadot/types/interfaces";
import type { Codec } from "@polkadot/types/types";
import { errorText, readReceipt } from "./_receipt.js";
import type { Reconciler, SubmitterContext } from "./_reconcile-attempts.js";
import { type ChainConnection, ChainError } from "./chain-client.js";
import { storageEntry } from "./commit-reveal.js";
import type { SubmissionRecord } from "./submission-store.js";

/** What the node's `submitAndWatchExtrinsic` subscription delivered, in order. */
export type Item =
  | { kind: "status"; status: ExtrinsicStatus }
  | { kind: "error"; error: unknown }
  | { kind: "complete" };

/** Waits for `promise`, the connection's loss, a timeout or the caller's abort (which throws). */
export function waitFor(
  promise: Promise<void>,
  connection: ChainConnection,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<"answered" | "lost" | "timeout"> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish("timeout"), ms);
    const onLost = () => finish("lost");
    const onAbort = () => {
      cleanup();
      reject(new ChainError("aborted", "aborted", { cause: signal?.reason }));
    };
    function cleanup() {
      clearTimeout(timer);
      connection.lost.removeEventListener("abort", onLost);
      signal?.removeEventListener("abort", onAbort);
    }
    function finish(outcome: "answered" | "lost" | "timeout") {
      cleanup();
      resolve(outcome);
    }
    if (signal?.aborted) return onAbort();
    if (connection.lost.aborted) return finish("lost");
    connection.lost.addEventListener("abort", onLost, { once: true });
    signal?.addEventListener("abort", onAbort, { once: true });
    promise.then(() => finish("answered"));
  });
}

/**
 * Follows a sent extrinsic through the node's status updates (`items`, pushed as they come;
 * `wake.notify` called on each) to a final row: in a block, finalized with its receipt, or
 * dropped by the pool once the chain confirms it is in no block. Anything unclear (the
 * subscription ended, the connection lost, no final status in time) is settled from the chain
 * by the reconciler.
 */
export function createFollower(ctx: SubmitterContext, reconciler: Reconciler) {
  const { client, store, log, emit, settleTimeoutMs } = ctx;
  const { reconcileOne, reconcileUntilFinal, settled, settleFromReceipt } = reconciler;

  const follow = async (
    row: SubmissionRecord,
    connection: ChainConnection,
    items: Item[],
    wake: { notify: (() => void) | undefined },
    signal: AbortSignal | undefined,
  ): Promise<SubmissionRecord> => {
    const deadline = Date.now() + settleTimeoutMs;
    let current = row;
    const offHead = client.onHead(() => wake.notify?.());
    try {
      for (;;) {
        if (signal?.aborted) throw new ChainError("aborted", "aborted", { cause: signal.reason });
        const item = items.shift();
        if (!item) {
          if (connection.lost.aborted) {
            log.warn("connection lost while following an extrinsic; reconciling from the chain", {
              id: row.id,
            });
            return reconcileUntilFinal(current, signal);
          }
          const head = client.head()?.number ?? 0;
          if (head >= row.eraDeath + 8 || Date.now() >= deadline) {
            log.warn("no final status for an extrinsic; reconciling from the chain", {
              id: row.id,
            });
            return reconcileUntilFinal(current, signal);
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(
              done,
              Math.max(1, Math.min(deadline - Date.now(), client.blockTimeMs)),
            );
            function done() {
              clearTimeout(timer);
              wake.notify = undefined;
              connection.lost.removeEventListener("abort", done);
              signal?.removeEventListener("abort", done);
              resolve();
            }
            wake.notify = done;
            connection.lost.addEventListener("abort", done, { once: true });
            signal?.addEventListener("abort", done, { once: true });
          });
          continue;
        }
        if (item.kind !== "status") {
          log.warn("the extrinsic's status subscription ended early; reconciling from the chain", {
            id: row.id,
            error: item.kind === "error" ? errorText(item.error) : null,
          });
          return reconcileUntilFinal(current, signal);
        }
        const status = item.status;
        try {
          const done = await onStatus(status);
          if (done) return done;
        } catch (error) {
          if (error instanceof ChainError && error.kind === "aborted") throw error;
          log.warn("following an extrinsic failed; reconciling from the chain", {
            id: row.id,
            error: errorText(error),
          });
          return reconcileUntilFinal(current, signal);
        }
      }
    } finally {
      offHead();
    }

    // Applies one status; returns the final row once there is one.
    async function onStatus(status: ExtrinsicStatus): Promise<SubmissionRecord | undefined> {
      if (status.isInBlock) {
        const hash = status.asInBlock.toHex();
        const receipt = await client.call(
          "reading the receipt",
          (api) => readReceipt(api, hash, row.extrinsicHash, row),
          { signal },
        );
        if (receipt) {
          current = await store.markInBlock(row.id, receipt.block);
          emit({ type: "in_block", record: current });
        }
      } else if (status.isRetracted) {
        current = await store.markRetracted(row.id);
      } else if (status.isFinalized) {
        const hash = status.asFinalized.toHex();
        const receipt = await client.call(
          "reading the receipt",
          (api) => readReceipt(api, hash, row.extrinsicHash, row),
          { signal },
        );
        if (receipt) return settleFromReceipt(row, receipt);
        return reconcileUntilFinal(current, signal);
      } else if (status.isFinalityTimeout) {
        return reconcileUntilFinal(current, signal);
      } else if (status.isInvalid || status.isDropped || status.isUsurped) {
        // The pool's word; check the chain once before believing it.
        const now = await reconcileOne(current, signal);
        if (now.status !== "pending" && now.status !== "in_block") return now;
        if (now.status === "in_block") return reconcileUntilFinal(now, signal);
        // Not in any block up to the best one: a commit whose round the best block has already
        // stored can never be included after it (it arrived late), which is why the pool let it go.
        const passed = row.commit
          ? await client.call(
              "reading Drand.LastStoredRound",
              async (api) => {
                const head = (await api.rpc.chain.getHeader()).hash.toHex();
                const value = await storageEntry(api, "drand", "lastStoredRound").at(head);
                return BigInt((value as Codec).toString());
              },
              { signal },
            )
          : undefined;
        if (row.commit && passed !== undefined && passed > BigInt(row.commit.revealRound)) {
          return settled(
            await store.settle(row.id, {
              status: "dropped",
              error: {
                code: "round",
                name: "RevealRoundPassed",
                message: `the node reported ${status.type}: Drand.LastStoredRound ${passed} at the best block is past its round ${row.commit.revealRound} (it arrived late)`,
              },
            }),
          );
        }
        return settled(
          await store.settle(row.id, {
            status: "dropped",
            error: { code: "pool", name: status.type, message: `the node reported ${status.type}` },
          }),
        );
      }
      return undefined;
    }
  };

  return follow;
}

/** Follows one sent extrinsic to its final row (see {@link createFollower}). */
export type Follow = ReturnType<typeof createFollower>;
