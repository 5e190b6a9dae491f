import { randomBytes } from "node:crypto";
import { encodeAddress } from "@polkadot/util-crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cleanup, chainClient, chainNode, until } from "./_test-chain.js";
import type { ChainClient } from "./chain-client.js";
import { chainMetagraph, KEYS_PAGE_SIZE, readMetagraph } from "./chain-metagraph.js";
import type { LocalSubtensor } from "./local-subtensor/index.js";
import { MetagraphError } from "./metagraph-provider.js";

describe("metagraph from the chain", () => {
  const cleanup = new Cleanup();
  let node: LocalSubtensor;
  let client: ChainClient;
  const hotkeys = Array.from({ length: 4096 }, () => new Uint8Array(randomBytes(32)));
  let uids: number[];

  const finalizedPast = async (block: number) =>
    until(
      async () => (await client.finalized()).number >= block,
      10_000,
      `block ${block} finalized`,
    );

  beforeAll(async () => {
    node = await chainNode(cleanup);
    client = chainClient(cleanup, [node.url]);
    // 4,096 neurons, registered in one block.
    uids = await Promise.all(hotkeys.map((h) => node.registerNeuron(7, h)));
    await finalizedPast(node.status().head.number);
  });
  afterAll(() => cleanup.run());

  it("reads 4,096 uids in one pass at a pinned finalized block, and reuses it for cacheSeconds", async () => {
    const metagraph = chainMetagraph(client, { netuid: 7, cacheSeconds: 300 });
    expect(metagraph.last()).toBeUndefined();
    const map = await metagraph.uids();
    expect(map.size).toBe(4096);
    hotkeys.forEach((h, i) => {
      expect(map.get(encodeAddress(h, 42))).toBe(uids[i]);
    });
    const read = metagraph.last();
    if (!read) throw new Error("no read recorded");
    expect(read.netuid).toBe(7);
    expect(read.hotkeys).toHaveLength(4096);
    expect(read.hotkeys.every((h) => h !== null)).toBe(true);
    // More than one page: the pages were chained from the same pinned block.
    expect(4096).toBeGreaterThan(KEYS_PAGE_SIZE);
    const pinned = await client.call("hash", (api) =>
      api.rpc.chain.getBlockHash(read.block.number),
    );
    expect(pinned.toHex()).toBe(read.block.hash);

    // A newer neuron is not seen until the cache expires or a refresh.
    const late = new Uint8Array(randomBytes(32));
    const lateUid = await node.registerNeuron(7, late);
    await finalizedPast(node.status().head.number);
    expect((await metagraph.uids()).size).toBe(4096);
    const fresh = await metagraph.refresh();
    expect(fresh.uids.get(encodeAddress(late, 42))).toBe(lateUid);
    expect(fresh.block.number).toBeGreaterThan(read.block.number);
    expect((await metagraph.uids()).size).toBe(4097);

    // cacheSeconds 0: every call reads the chain; concurrent calls share one read.
    const uncached = chainMetagraph(client, { netuid: 7, cacheSeconds: 0 });
    const [a, b] = await Promise.all([uncached.uids(), uncached.uids()]);
    expect(a.size).toBe(4097);
    expect(b).toEqual(a);
  });

  it("names a netuid that does not exist", async () => {
    const error = await readMetagraph(client, 3).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MetagraphError);
    expect((error as Error).message).toMatch(/^netuid 3 does not exist at block \d+$/);
  });

  it("throws MetagraphError with a readable reason when the chain cannot be read, keeping the last read", async () => {
    const other = await chainNode(cleanup);
    await other.registerNeuron(1, new Uint8Array(randomBytes(32)));
    // Generous bounds for the good read (a busy machine); once the node is gone, the read fails
    // within the connection bound.
    const shortClient = chainClient(cleanup, [other.url], { connectTimeoutMs: 3_000 });
    const registered = other.status().head.number;
    await until(async () => (await shortClient.finalized()).number >= registered);
    const metagraph = chainMetagraph(shortClient, { netuid: 1, cacheSeconds: 0 });
    expect((await metagraph.uids()).size).toBe(1);
    const good = metagraph.last();
    await other.close();
    const error = await metagraph.uids().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, String(error)).toBeInstanceOf(MetagraphError);
    expect((error as Error).message).toMatch(/^cannot read the metagraph from the chain \(.+\)$/);
    expect(metagraph.last()).toBe(good);
  });
});
