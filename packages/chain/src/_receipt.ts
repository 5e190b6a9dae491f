// Reading an extrinsic's outcome from a block: the receipt the submitter believes, and the
// JSON-RPC error a pool refusal carries.
import type { ApiPromise } from "@polkadot/api";
import type { DispatchError, EventRecord } from "@polkadot/types/interfaces";
import { u8aToHex } from "@polkadot/util";
import type { BlockRef } from "./chain-client.js";
import { publicKeyHex } from "./subnet-rules.js";

/** What the block's events say about one extrinsic. */
export interface Receipt {
  block: BlockRef;
  ok: boolean;
  error: { code: string; name: string; message: string | null } | null;
}

export function rpcError(
  error: unknown,
): { code: string; name: string; message: string } | undefined {
  const e = error as { code?: unknown; data?: unknown; message?: unknown };
  if (typeof e?.code !== "number" || e.code <= 0) return undefined;
  const text = typeof e.message === "string" ? e.message : String(error);
  const name = typeof e.data === "string" && e.data ? e.data : text.replace(/^\d+:\s*/, "");
  return { code: String(e.code), name, message: text };
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The node does not have a block's body (pruned, or not yet imported). */
export class BlockUnavailableError extends Error {
  override readonly name = "BlockUnavailableError";

  constructor(hash: string) {
    super(`the node has no body for block ${hash}`);
  }
}

/**
 * What a receipt must show. A set_weights: `WeightsSet(netuid, uid)`. A commit (`commit` given):
 * `TimelockedWeightsCommitted(who, netuid, hash, round)` with the hotkey's key, the commit's
 * blake2_256 and its round. A `SubmissionRecord` is one.
 */
export interface ReceiptExpectation {
  netuid: number;
  uid: number | null;
  /** The signer (SS58); needed for a commit. */
  hotkey?: string;
  commit?: { hash: string; revealRound: number } | null;
}

/**
 * Reads an extrinsic's receipt from block `hash`: its index in the body, then the block's
 * `System.Events` for that index. Success is `System.ExtrinsicSuccess` AND
 * `SubtensorModule.WeightsSet(netuid, uid)` (a commit: `TimelockedWeightsCommitted(who, netuid,
 * blake2_256(commit), round)`); a failure carries the decoded module error. Undefined when the
 * extrinsic is not in that block.
 */
export async function readReceipt(
  api: ApiPromise,
  hash: string,
  extrinsicHash: string,
  expect: ReceiptExpectation,
): Promise<Receipt | undefined> {
  const signed = await api.rpc.chain.getBlock(hash);
  // A node that no longer keeps the body answers null, which decodes to an empty block: only a
  // header that hashes to the block asked for proves the body is the real one.
  if (signed.block.header.hash.toHex() !== hash) throw new BlockUnavailableError(hash);
  const index = signed.block.extrinsics.findIndex((ex) => ex.hash.toHex() === extrinsicHash);
  if (index < 0) return undefined;
  const block = { number: signed.block.header.number.toNumber(), hash };
  const at = await api.at(hash);
  const eventsEntry = at.query["system"]?.["events"];
  if (!eventsEntry) throw new Error("the runtime has no System.Events");
  const records = (await eventsEntry()) as unknown as EventRecord[];
  const mine = records.filter(
    (r) => r.phase.isApplyExtrinsic && r.phase.asApplyExtrinsic.toNumber() === index,
  );
  const failed = mine.find(
    (r) => r.event.section === "system" && r.event.method === "ExtrinsicFailed",
  );
  if (failed) {
    const dispatchError = failed.event.data[0] as DispatchError;
    if (dispatchError.isModule) {
      const meta = api.registry.findMetaError(dispatchError.asModule);
      return {
        block,
        ok: false,
        error: {
          code: "module",
          name: meta.name,
          message: `${meta.section}.${meta.name}: ${meta.docs.join(" ")}`,
        },
      };
    }
    return {
      block,
      ok: false,
      error: { code: "dispatch", name: dispatchError.type, message: null },
    };
  }
  const success = mine.some(
    (r) => r.event.section === "system" && r.event.method === "ExtrinsicSuccess",
  );
  if (expect.commit) {
    const who = expect.hotkey === undefined ? undefined : publicKeyHex(expect.hotkey);
    const committed = mine.filter(
      (r) =>
        r.event.section === "subtensorModule" && r.event.method === "TimelockedWeightsCommitted",
    );
    const matches = committed.some((r) => {
      const [account, netuid, commitHash, round] = r.event.data;
      return (
        (who === undefined || u8aToHex(account?.toU8a()) === who) &&
        Number(netuid?.toString()) === expect.netuid &&
        commitHash?.toHex() === expect.commit?.hash &&
        Number(round?.toString()) === expect.commit?.revealRound
      );
    });
    if (success && matches) return { block, ok: true, error: null };
    return {
      block,
      ok: false,
      error: {
        code: "receipt",
        name: !success
          ? "NoExtrinsicSuccessEvent"
          : committed.length === 0
            ? "NoCommittedEvent"
            : "CommittedEventMismatch",
        message: !success
          ? "neither ExtrinsicSuccess nor ExtrinsicFailed for this extrinsic"
          : "ExtrinsicSuccess without TimelockedWeightsCommitted(who, netuid, blake2_256(commit), round) for this commit",
      },
    };
  }
  const weightsSet = mine.some(
    (r) =>
      r.event.section === "subtensorModule" &&
      r.event.method === "WeightsSet" &&
      Number(r.event.data[0]?.toString()) === expect.netuid &&
      (expect.uid === null || Number(r.event.data[1]?.toString()) === expect.uid),
  );
  if (success && weightsSet) return { block, ok: true, error: null };
  return {
    block,
    ok: false,
    error: {
      code: "receipt",
      name: success ? "NoWeightsSetEvent" : "NoExtrinsicSuccessEvent",
      message: success
        ? "ExtrinsicSuccess without SubtensorModule.WeightsSet for this netuid and uid"
        : "neither ExtrinsicSuccess nor ExtrinsicFailed for this extrinsic",
    },
  };
}
