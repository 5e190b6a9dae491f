import { decodeAddress } from "@polkadot/util-crypto";
import { compact, fromHex, readCompact, toHex, u32le, u64le } from "./_bytes.js";
import type { HyperparameterValue } from "./_chain-state.js";
import { decodeExtrinsic } from "./_extrinsic.js";
import type { DrandInfo } from "./_local-beacon.js";
import {
  type BlockRecord,
  callRefTime,
  headerJson,
  type LocalChain,
  type TxStatus,
  UnknownBlockError,
} from "./_local-chain.js";
import { PoolError } from "./_pool-error.js";
import { invalidParams, RpcError, type RpcHandler, subscription } from "./_rpc-server.js";
import { concatBytes, loadNamedRuntime, runtimeName } from "./_runtime.js";

/** A `dev_fault` request. */
export interface LocalSubtensorFault {
  /** `close`: drop every connection; `stall`: answer nothing and produce no block for `seconds`;
   * `reject_next`: refuse (pool error) or fail (module error) the next submitted extrinsic. */
  kind: "close" | "stall" | "reject_next";
  /** `stall`: how long (default 5); `close`: how long new connections are refused (default 0). */
  seconds?: number;
  /** `reject_next`: an InvalidTransaction variant (`Stale`, `BadProof`, …) or a module error
   * name (`SettingWeightsTooFast`, `Pallet.Error`). */
  error?: string;
}

/** What the node reports of itself (`dev_status`). */
export interface LocalSubtensorStatus {
  genesisHash: string;
  head: { number: number; hash: string };
  finalized: { number: number; hash: string };
  /** Transactions waiting in the pool. */
  pending: number;
  /** `Timestamp.Now` of the best block (simulated time, Unix ms). */
  timestamp: number;
  /** `Drand.LastStoredRound` at the best block. */
  lastStoredRound: number;
  /** The spec version of the best block's runtime (393 or 424). */
  specVersion: number;
}

/** `dev_drandInfo`: the local beacon, as drand's `/info` describes a beacon. */
export type LocalSubtensorDrandInfo = DrandInfo;

/** `dev_status`: genesis, best and finalized blocks, pool size. */
export function chainStatus(chain: LocalChain): LocalSubtensorStatus {
  const head = chain.head();
  const finalized = chain.finalized();
  return {
    genesisHash: chain.genesisHash,
    head: { number: head.number, hash: head.hash },
    finalized: { number: finalized.number, hash: finalized.hash },
    pending: chain.pending().length,
    timestamp: chain.timestampOf(head.number),
    lastStoredRound: Number(chain.state.lastStoredRound()),
    specVersion: chain.runtime.specVersion,
  };
}

/** `dev_skipDrandRound`'s parameter: a round number (u64, as a number or decimal string). */
export function roundParam(value: unknown): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return BigInt(value);
  if (typeof value === "bigint" && value > 0n && value < 1n << 64n) return value;
  if (typeof value === "string" && /^\d{1,20}$/.test(value)) {
    const round = BigInt(value);
    if (round > 0n && round < 1n << 64n) return round;
  }
  throw new Error("round must be a positive u64");
}

/** The server-level controls the dev methods need. */
export interface NodeControls {
  blockMs: number;
  fault(fault: LocalSubtensorFault): void;
}

// Substrate's state errors (sc-rpc-api state): 4003 is a client error, 4002 a bad page count.
const clientError = (message: string) => new RpcError(4003, `Client error: ${message}`);
const MAX_KEYS_PAGE = 1000;

const HASH = /^0x[0-9a-fA-F]{64}$/;

function optionalHash(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !HASH.test(value)) throw invalidParams("expected a block hash");
  return value.toLowerCase();
}

function hexParam(value: unknown, what: string): string {
  if (typeof value !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(value)) {
    throw invalidParams(`${what} must be 0x-prefixed hex`);
  }
  return value.toLowerCase();
}

function blockNumberParam(value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === "string" && /^(0x[0-9a-fA-F]+|\d+)$/.test(value)) return Number(value);
  throw invalidParams("expected a block number");
}

function accountParam(value: unknown): Uint8Array {
  if (typeof value !== "string") throw invalidParams("expected an SS58 address or 0x account id");
  try {
    const bytes = value.startsWith("0x") ? fromHex(value) : decodeAddress(value);
    if (bytes.length !== 32) throw new Error("not 32 bytes");
    return bytes;
  } catch {
    throw invalidParams("expected an SS58 address or 0x account id");
  }
}

const blockJson = (block: BlockRecord) => ({
  block: { header: headerJson(block.header), extrinsics: block.extrinsics ?? [] },
  justifications: null,
});

const FINAL_STATUSES = new Set(["invalid", "dropped"]);
const isFinal = (status: TxStatus) =>
  typeof status === "string" ? FINAL_STATUSES.has(status) : "finalized" in status;

/**
 * The JSON-RPC methods the local subtensor answers: the subset of a substrate node's API that
 * @polkadot/api uses (chain, state, author, system, payment, rpc) plus the `dev_` namespace.
 */
export function rpcMethods(chain: LocalChain, controls: NodeControls): Record<string, RpcHandler> {
  const atBlock = (hash: unknown): number => {
    try {
      return chain.stateAt(optionalHash(hash));
    } catch (error) {
      if (error instanceof UnknownBlockError) throw clientError(`UnknownBlock: ${error.message}`);
      throw error;
    }
  };
  const blockAt = (hash: unknown): BlockRecord | undefined => {
    const h = optionalHash(hash);
    return h === undefined ? chain.head() : chain.blockByHash(h);
  };
  const storageAt = (key: unknown, at: number) => {
    const value = chain.store.get(hexParam(key, "storage key"), at);
    return value === null ? null : toHex(value);
  };

  const stateCall = (method: string, data: Uint8Array, at: number): Uint8Array => {
    const runtime = chain.runtimeAt(at);
    switch (method) {
      case "Core_version":
        return runtime.versionBytes;
      case "Metadata_metadata":
        return concatBytes([compact(runtime.metadataBytes.length), runtime.metadataBytes]);
      case "Metadata_metadata_versions":
        // Only the V16 bytes ship with the project, so only V16 is offered.
        return concatBytes([compact(1), u32le(16)]);
      case "Metadata_metadata_at_version": {
        const version =
          data.length >= 4 ? new DataView(data.buffer, data.byteOffset).getUint32(0, true) : -1;
        return version === 16
          ? concatBytes([
              new Uint8Array([1]),
              compact(runtime.metadataBytes.length),
              runtime.metadataBytes,
            ])
          : new Uint8Array([0]);
      }
      case "AccountNonceApi_account_nonce": {
        if (data.length < 32) throw clientError("Execution failed: could not decode the account");
        return u32le(chain.state.nonce(data.subarray(0, 32), at));
      }
      case "TransactionPaymentApi_query_info": {
        const { value: len, length } = readCompact(data, 0);
        const ex = decodeExtrinsic(runtime, data.subarray(0, length + Number(len)));
        // Only the free weights calls are ever accepted here; other calls get no estimate.
        const refTime = callRefTime(ex.pallet, ex.method) ?? 0n;
        // RuntimeDispatchInfo { weight: Weight(compact ref_time, compact proof_size), class, fee: u64 }
        return concatBytes([compact(refTime), compact(0), new Uint8Array([0]), u64le(0)]);
      }
      case "AuraApi_slot_duration":
        return u64le(controls.blockMs);
      default:
        throw clientError(`Execution failed: Other: Exported method ${method} is not found`);
    }
  };

  const methods: Record<string, RpcHandler> = {
    // ---- rpc / system ----
    // The dev_ namespace is left out: polkadot-js warns about every listed method it does not know.
    rpc_methods: () => ({
      version: 1,
      methods: Object.keys(methods)
        .filter((m) => !m.startsWith("dev_"))
        .sort(),
    }),
    system_chain: () => "Local Subtensor",
    system_name: () => "local-subtensor",
    system_version: () => `1.0.0-local-spec${chain.runtime.specVersion}`,
    system_chainType: () => "Development",
    system_properties: () => ({ ss58Format: 42, tokenDecimals: 9, tokenSymbol: "TAO" }),
    system_health: () => ({ peers: 0, isSyncing: false, shouldHavePeers: false }),
    system_peers: () => [],
    system_nodeRoles: () => ["Authority"],
    system_localPeerId: () => "12D3KooWLocalSubtensor",
    system_localListenAddresses: () => [],
    system_syncState: () => ({
      startingBlock: 0,
      currentBlock: chain.head().number,
      highestBlock: chain.head().number,
    }),
    system_accountNextIndex: ([who]) => chain.nextIndex(accountParam(who)),

    // ---- chain ----
    chain_getBlockHash: ([n]) => {
      if (n === undefined || n === null) return chain.head().hash;
      if (Array.isArray(n)) return n.map((x) => chain.block(blockNumberParam(x))?.hash ?? null);
      return chain.block(blockNumberParam(n))?.hash ?? null;
    },
    chain_getHeader: ([hash]) => {
      const block = blockAt(hash);
      return block ? headerJson(block.header) : null;
    },
    chain_getBlock: ([hash]) => {
      const block = blockAt(hash);
      return block?.extrinsics ? blockJson(block) : null;
    },
    chain_getFinalizedHead: () => chain.finalized().hash,
    chain_subscribeNewHeads: () =>
      subscription("chain_newHead", (emit) => {
        emit(headerJson(chain.head().header));
        return chain.onNewHead((b) => emit(headerJson(b.header)));
      }),
    chain_subscribeAllHeads: () =>
      subscription("chain_allHead", (emit) => {
        emit(headerJson(chain.head().header));
        return chain.onNewHead((b) => emit(headerJson(b.header)));
      }),
    chain_subscribeFinalizedHeads: () =>
      subscription("chain_finalizedHead", (emit) => {
        emit(headerJson(chain.finalized().header));
        return chain.onFinalized((b) => emit(headerJson(b.header)));
      }),
    chain_unsubscribeNewHeads: ([id], conn) => conn.unsubscribe(id),
    chain_unsubscribeAllHeads: ([id], conn) => conn.unsubscribe(id),
    chain_unsubscribeFinalizedHeads: ([id], conn) => conn.unsubscribe(id),

    // ---- state ----
    state_getRuntimeVersion: ([hash]) => chain.runtimeAt(atBlock(hash)).versionJson,
    // A new version is announced with the first block that runs it (a runtime upgrade).
    state_subscribeRuntimeVersion: () =>
      subscription("state_runtimeVersion", (emit) => {
        let current = chain.runtime;
        emit(current.versionJson);
        return chain.onNewHead((b) => {
          const next = chain.runtimeAt(b.number);
          if (next !== current) {
            current = next;
            emit(next.versionJson);
          }
        });
      }),
    state_unsubscribeRuntimeVersion: ([id], conn) => conn.unsubscribe(id),
    state_getMetadata: ([hash]) => chain.runtimeAt(atBlock(hash)).metadataHex,
    state_call: ([method, data, hash]) => {
      if (typeof method !== "string") throw invalidParams("expected a runtime api method");
      const at = atBlock(hash);
      try {
        return toHex(stateCall(method, fromHex(hexParam(data, "call data")), at));
      } catch (error) {
        if (error instanceof RpcError) throw error;
        throw clientError(`Execution failed: ${(error as Error).message}`);
      }
    },
    state_getStorage: ([key, hash]) => storageAt(key, atBlock(hash)),
    state_getStorageHash: ([key, hash]) => {
      const value = storageAt(key, atBlock(hash));
      return value === null ? null : toHex(chain.runtime.registry.hash(fromHex(value)).toU8a());
    },
    state_getStorageSize: ([key, hash]) => {
      const value = storageAt(key, atBlock(hash));
      return value === null ? null : (value.length - 2) / 2;
    },
    state_getKeysPaged: ([prefix, count, startKey, hash]) => {
      const at = atBlock(hash);
      const p = prefix === undefined || prefix === null ? "0x" : hexParam(prefix, "prefix");
      if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
        throw invalidParams("expected a page size");
      }
      if (count > MAX_KEYS_PAGE) {
        throw new RpcError(
          4002,
          `count exceeds maximum value. value: ${count}, max: ${MAX_KEYS_PAGE}`,
        );
      }
      const start =
        startKey === undefined || startKey === null ? undefined : hexParam(startKey, "start key");
      return chain.store.keysPaged(p, count, start, at);
    },
    state_queryStorageAt: ([keys, hash]) => {
      if (!Array.isArray(keys)) throw invalidParams("expected a list of storage keys");
      const at = atBlock(hash);
      const block = chain.block(at) as BlockRecord;
      return [
        {
          block: block.hash,
          changes: keys.map((k) => [hexParam(k, "storage key"), storageAt(k, at)]),
        },
      ];
    },
    state_subscribeStorage: ([keys]) => {
      if (!Array.isArray(keys)) {
        throw invalidParams("subscribing to every storage change is not supported here");
      }
      const wanted = keys.map((k) => hexParam(k, "storage key"));
      return subscription("state_storage", (emit) => {
        const last = new Map<string, string | null>();
        const changes = (at: number, all: boolean) => {
          const out: [string, string | null][] = [];
          for (const key of wanted) {
            const value = storageAt(key, at);
            if (all || last.get(key) !== value) out.push([key, value]);
            last.set(key, value);
          }
          return out;
        };
        emit({ block: chain.head().hash, changes: changes(chain.head().number, true) });
        return chain.onNewHead((b) => {
          const changed = changes(b.number, false);
          if (changed.length > 0) emit({ block: b.hash, changes: changed });
        });
      });
    },
    state_unsubscribeStorage: ([id], conn) => conn.unsubscribe(id),

    // ---- author ----
    author_submitExtrinsic: ([ext]) => {
      try {
        return chain.submit(fromHex(hexParam(ext, "extrinsic"))).ex.hash;
      } catch (error) {
        throw asRpcError(error);
      }
    },
    author_submitAndWatchExtrinsic: ([ext]) => {
      const early: TxStatus[] = [];
      let emitNow: ((s: TxStatus) => void) | undefined;
      try {
        chain.submit(fromHex(hexParam(ext, "extrinsic")), (status) => {
          if (emitNow) emitNow(status);
          else early.push(status);
        });
      } catch (error) {
        throw asRpcError(error);
      }
      return subscription("author_extrinsicUpdate", (emit, end) => {
        const forward = (status: TxStatus) => {
          emit(status);
          if (isFinal(status)) end();
        };
        for (const status of early) forward(status);
        emitNow = forward;
        // Unwatching stops the updates; the transaction stays in the pool.
        return () => {
          emitNow = () => {};
        };
      });
    },
    author_unwatchExtrinsic: ([id], conn) => conn.unsubscribe(id),
    author_pendingExtrinsics: () => chain.pending().map((t) => toHex(t.ex.bytes)),

    // ---- payment (deprecated upstream, still served by subtensor) ----
    payment_queryInfo: ([ext, hash]) => {
      const runtime = chain.runtimeAt(atBlock(hash));
      let ex: ReturnType<typeof decodeExtrinsic>;
      try {
        ex = decodeExtrinsic(runtime, fromHex(hexParam(ext, "extrinsic")));
      } catch (error) {
        if (error instanceof RpcError) throw error;
        throw clientError(`Execution failed: ${(error as Error).message}`);
      }
      return {
        weight: { ref_time: Number(callRefTime(ex.pallet, ex.method) ?? 0n), proof_size: 0 },
        class: "normal",
        partialFee: "0",
      };
    },

    // ---- dev ----
    dev_registerNeuron: ([netuid, hotkey, permit]) => {
      if (permit !== undefined && permit !== null && typeof permit !== "boolean") {
        throw invalidParams("validator_permit must be a boolean");
      }
      return devCall(() =>
        chain.registerNeuron(Number(netuid), accountParam(hotkey), permit === true),
      );
    },
    dev_setHyperparameter: ([netuid, name, value]) => {
      if (typeof name !== "string") throw invalidParams("expected a hyperparameter name");
      return devCall(async () => {
        await chain.setHyperparameter(Number(netuid), name, value as HyperparameterValue);
        return true;
      });
    },
    dev_fault: ([fault]) => {
      const f = fault as LocalSubtensorFault | undefined;
      if (!f || !["close", "stall", "reject_next"].includes(f.kind)) {
        throw invalidParams('expected {kind: "close" | "stall" | "reject_next"}');
      }
      try {
        controls.fault(f);
      } catch (error) {
        throw invalidParams((error as Error).message);
      }
      return true;
    },
    dev_status: () => chainStatus(chain),
    dev_setStake: ([netuid, hotkey, stake]) =>
      devCall(async () => {
        await chain.setStake(netuidParam(netuid), accountParam(hotkey), stakeParam(stake));
        return true;
      }),
    dev_setSubnetOwner: ([netuid, hotkey]) =>
      devCall(async () => {
        await chain.setSubnetOwner(netuidParam(netuid), accountParam(hotkey));
        return true;
      }),
    dev_deferEpoch: ([netuid, times]) =>
      devCall(async () => {
        chain.deferEpoch(netuidParam(netuid), countParam(times));
        return true;
      }),
    dev_skipEpoch: ([netuid, times]) =>
      devCall(async () => {
        chain.skipEpoch(netuidParam(netuid), countParam(times));
        return true;
      }),
    dev_triggerEpoch: ([netuid, at]) =>
      devCall(() =>
        chain.triggerEpoch(
          netuidParam(netuid),
          at === undefined || at === null ? undefined : blockNumberParam(at),
        ),
      ),
    dev_upgradeRuntime: ([name]) =>
      devCall(async () => ({
        block: await chain.upgradeRuntime(loadNamedRuntime(runtimeName(name ?? "spec424"))),
        specVersion: chain.runtime.specVersion,
      })),
    dev_drandInfo: () => chain.beacon.info(),
    dev_skipDrandRound: ([round]) => {
      try {
        return Number(chain.skipDrandRound(roundParam(round)));
      } catch (error) {
        throw invalidParams((error as Error).message);
      }
    },
  };
  // The other names substrate serves the same methods under (polkadot-js subscribes to new
  // heads as `chain_subscribeNewHead`).
  const aliases: Record<string, string> = {
    chain_subscribeNewHead: "chain_subscribeNewHeads",
    chain_unsubscribeNewHead: "chain_unsubscribeNewHeads",
    subscribe_newHead: "chain_subscribeNewHeads",
    unsubscribe_newHead: "chain_unsubscribeNewHeads",
    chain_subscribeFinalisedHeads: "chain_subscribeFinalizedHeads",
    chain_unsubscribeFinalisedHeads: "chain_unsubscribeFinalizedHeads",
    chain_getFinalisedHead: "chain_getFinalizedHead",
    chain_getHead: "chain_getBlockHash",
    chain_getRuntimeVersion: "state_getRuntimeVersion",
    chain_subscribeRuntimeVersion: "state_subscribeRuntimeVersion",
    chain_unsubscribeRuntimeVersion: "state_unsubscribeRuntimeVersion",
    state_getStorageAt: "state_getStorage",
    state_getKeysPagedAt: "state_getKeysPaged",
  };
  for (const [alias, target] of Object.entries(aliases))
    methods[alias] = methods[target] as RpcHandler;
  return methods;
}

function netuidParam(value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 4095) {
    return value;
  }
  throw invalidParams("netuid must be an integer in 1..4095");
}

function countParam(value: unknown): number {
  if (value === undefined || value === null) return 1;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 1000) {
    return value;
  }
  throw invalidParams("times must be an integer in 1..1000");
}

/** A stake in rao: a u64 as a number or a decimal string. */
export function stakeParam(value: unknown): bigint {
  const text = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text === "string" && /^\d{1,20}$/.test(text) && BigInt(text) < 1n << 64n) {
    return BigInt(text);
  }
  throw invalidParams("stake must be a u64 (rao), as a number or a decimal string");
}

async function devCall<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RpcError) throw error;
    throw invalidParams((error as Error).message);
  }
}

function asRpcError(error: unknown): unknown {
  return error instanceof PoolError ? new RpcError(error.code, error.message, error.data) : error;
}
