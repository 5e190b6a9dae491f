import type { ApiPromise, WsProvider } from "@polkadot/api";
import { encodeAddress } from "@polkadot/util-crypto";
import type { BlockRef, ChainClient } from "./chain-client.js";
import { MetagraphError, type MetagraphProvider } from "./metagraph-provider.js";

/** The node's largest `state_getKeysPaged` page (substrate's limit). */
export const KEYS_PAGE_SIZE = 1000;

/** Options of {@link chainMetagraph}. */
export interface ChainMetagraphOptions {
  netuid: number;
  /** How long one read is reused; default 300 s. 0 reads the chain on every call. */
  cacheSeconds?: number;
  /** SS58 prefix of the hotkeys returned; default 42 (what Bittensor wallets print). */
  ss58Format?: number;
  /** Bound on one whole read (every page); default the client's call timeout. */
  timeoutMs?: number;
}

/** A metagraph read: uid -> hotkey (null for an empty slot) and the block it was read at. */
export interface MetagraphRead {
  netuid: number;
  block: BlockRef;
  /** Index = uid; null where `Keys` holds nothing. */
  hotkeys: (string | null)[];
  /** hotkey (SS58) -> uid. */
  uids: Map<string, number>;
  /** When the read finished (ms since the epoch). */
  readAt: number;
}

/** The chain metagraph provider: the collector's `MetagraphProvider`, plus the block behind it. */
export interface ChainMetagraph extends MetagraphProvider {
  /** The last successful read (undefined before the first). */
  last(): MetagraphRead | undefined;
  /** Reads the chain now, ignoring the cache (and refreshing it). */
  refresh(): Promise<MetagraphRead>;
}

function storagePrefix(api: ApiPromise, netuid: number): string {
  const keys = api.query["subtensorModule"]?.["keys"];
  if (!keys) throw new MetagraphError("the chain's runtime has no SubtensorModule.Keys");
  return keys.keyPrefix(netuid);
}

/**
 * Reads `SubtensorModule.Keys(netuid, *)` at block `hash` with raw paged RPCs: key pages of
 * {@link KEYS_PAGE_SIZE} (`state_getKeysPaged`), each page's values in one `state_queryStorageAt`.
 * Both hashers are Identity, so the uid is the key's last two bytes (u16 LE) and the value is the
 * 32-byte account id. Returns uid -> SS58 hotkey (null for an empty slot).
 */
export async function readKeysAt(
  api: ApiPromise,
  provider: WsProvider,
  netuid: number,
  hash: string,
  ss58Format = 42,
): Promise<(string | null)[]> {
  const prefix = storagePrefix(api, netuid);
  const hotkeys: (string | null)[] = [];
  let start: string | null = null;
  for (;;) {
    const page = (await provider.send("state_getKeysPaged", [
      prefix,
      KEYS_PAGE_SIZE,
      start,
      hash,
    ])) as string[];
    if (page.length === 0) break;
    const sets = (await provider.send("state_queryStorageAt", [page, hash])) as {
      changes: [string, string | null][];
    }[];
    for (const set of sets) {
      for (const [key, value] of set.changes) {
        // prefix ‖ netuid (2 B, already in the prefix) ‖ uid (2 B): 4 hex digits past the prefix.
        if (key.length !== prefix.length + 4 || !key.startsWith(prefix)) {
          throw new MetagraphError(`unexpected Keys storage key ${key.slice(0, 80)}`);
        }
        const uid = Number.parseInt(key.slice(-2) + key.slice(-4, -2), 16);
        if (value === null) continue;
        if (!/^0x[0-9a-fA-F]{64}$/.test(value)) {
          throw new MetagraphError(`Keys(${netuid}, ${uid}) is not a 32-byte account id`);
        }
        hotkeys[uid] = encodeAddress(value, ss58Format);
      }
    }
    if (page.length < KEYS_PAGE_SIZE) break;
    start = page[page.length - 1] as string;
  }
  for (let uid = 0; uid < hotkeys.length; uid++) hotkeys[uid] ??= null;
  return hotkeys;
}

/** hotkey -> uid of a `readKeysAt` result; a hotkey on two uids keeps the lower (it cannot happen on chain). */
export function uidsOf(hotkeys: readonly (string | null)[]): Map<string, number> {
  const map = new Map<string, number>();
  hotkeys.forEach((hotkey, uid) => {
    if (hotkey !== null && !map.has(hotkey)) map.set(hotkey, uid);
  });
  return map;
}

/**
 * Reads the whole metagraph of `netuid` (hotkey <-> uid) at the newest finalized block, in one
 * pass of paged reads, bounded by `timeoutMs`. Throws `MetagraphError` with a readable reason
 * when the chain cannot be read or the subnet does not exist.
 */
export async function readMetagraph(
  client: ChainClient,
  netuid: number,
  options: { ss58Format?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<MetagraphRead> {
  try {
    const block = await client.finalized({ signal: options.signal });
    const hotkeys = await client.call(
      `reading the metagraph of netuid ${netuid} at block ${block.number}`,
      async (api, connection) => {
        const at = await api.at(block.hash);
        const added = at.query["subtensorModule"]?.["networksAdded"];
        if (!added) throw new MetagraphError("the chain's runtime has no SubtensorModule");
        if (!(await added(netuid)).toJSON()) {
          throw new MetagraphError(`netuid ${netuid} does not exist at block ${block.number}`);
        }
        return readKeysAt(api, connection.provider, netuid, block.hash, options.ss58Format);
      },
      { timeoutMs: options.timeoutMs, signal: options.signal },
    );
    return { netuid, block, hotkeys, uids: uidsOf(hotkeys), readAt: Date.now() };
  } catch (error) {
    if (error instanceof MetagraphError) throw error;
    throw new MetagraphError(
      `cannot read the metagraph from the chain (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

/**
 * A `MetagraphProvider` that reads hotkey -> uid from `SubtensorModule.Keys` at the newest
 * finalized block, reusing a read for `cacheSeconds`. When the chain cannot be read it throws
 * `MetagraphError`, and the collector's stale/failed handling applies (its last good map).
 * Concurrent callers share one read.
 * @example const metagraph = chainMetagraph(client, { netuid: 7 }); await metagraph.uids();
 */
export function chainMetagraph(
  client: ChainClient,
  options: ChainMetagraphOptions,
): ChainMetagraph {
  const cacheMs = (options.cacheSeconds ?? 300) * 1000;
  let cached: MetagraphRead | undefined;
  let inFlight: Promise<MetagraphRead> | undefined;

  const refresh = (): Promise<MetagraphRead> => {
    inFlight ??= readMetagraph(client, options.netuid, {
      ss58Format: options.ss58Format,
      timeoutMs: options.timeoutMs,
    })
      .then((read) => {
        cached = read;
        return read;
      })
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  return {
    async uids() {
      const fresh = cached && Date.now() - cached.readAt < cacheMs ? cached : await refresh();
      return new Map(fresh.uids);
    },
    last: () => cached,
    refresh,
  };
}
