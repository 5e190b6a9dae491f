import { afterEach, describe, expect, it, vi } from "vitest";
import { Cleanup, chainClient, chainNode, recordingLogger, until } from "./_test-chain.js";
import { ChainError, createChainClient, describeEndpoint } from "./chain-client.js";

describe("chain client", () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  it("reads at a pinned finalized block, follows heads and knows the genesis hash", async () => {
    const node = await chainNode(cleanup);
    const client = chainClient(cleanup, [node.url]);
    const finalized = await client.finalized();
    expect(client.genesisHash).toBe(node.genesisHash);
    expect(finalized.number).toBeLessThanOrEqual(node.status().finalized.number);
    const at = await client.at(finalized.hash);
    const number = Number((await at.query["system"]?.["number"]?.())?.toJSON());
    expect(number).toBe(finalized.number);
    const head = await client.waitForHead(finalized.number + 3);
    expect(head.number).toBeGreaterThanOrEqual(finalized.number + 3);
    expect(client.status()).toMatchObject({
      connected: true,
      genesisHash: node.genesisHash,
      reconnects: 0,
      lastError: null,
      closed: false,
      endpoint: describeEndpoint(node.url),
    });
    await client.close();
    await expect(client.finalized()).rejects.toMatchObject({ kind: "closed" });
  });

  it("fails over to the next endpoint when endpoint 1 dies mid-run", async () => {
    // Two nodes of one chain (same genesis), as two RPC providers would be.
    const first = await chainNode(cleanup, { genesisSeed: "failover" });
    const second = await chainNode(cleanup, { genesisSeed: "failover" });
    expect(first.genesisHash).toBe(second.genesisHash);
    const { log, lines } = recordingLogger();
    const client = chainClient(cleanup, [first.url, second.url], { log });
    await client.finalized();
    expect(client.status().endpoint).toBe(describeEndpoint(first.url));

    await first.close();
    const after = await client.finalized();
    expect(after.hash).toBe(
      (await client.call("hash", (api) => api.rpc.chain.getBlockHash(after.number))).toHex(),
    );
    expect(client.status()).toMatchObject({
      endpoint: describeEndpoint(second.url),
      connected: true,
      reconnects: 1,
    });
    expect(client.status().lastError).toMatch(/closed the connection/);
    const dropped = lines.find(
      (l) => l.msg === "chain connection dropped; moving to the next endpoint",
    );
    expect(dropped).toMatchObject({
      endpoint: describeEndpoint(first.url),
      reason: expect.any(String),
    });
    // Heads keep coming, from the second node.
    const head = client.head()?.number ?? 0;
    await client.waitForHead(head + 2);
  });

  it("refuses an endpoint that serves another chain", async () => {
    const ours = await chainNode(cleanup, { genesisSeed: "ours" });
    const theirs = await chainNode(cleanup, { genesisSeed: "theirs" });
    const client = chainClient(cleanup, [theirs.url], {
      genesisHash: ours.genesisHash,
      callTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
    });
    await expect(client.finalized()).rejects.toMatchObject({ kind: "unavailable" });
    expect(client.status().lastError).toMatch(/serves another chain/);
  });

  it("recovers from a stall without a restart: no new head, it moves on", async () => {
    const first = await chainNode(cleanup, { genesisSeed: "stall" });
    const second = await chainNode(cleanup, { genesisSeed: "stall" });
    const client = chainClient(cleanup, [first.url, second.url], {
      staleHeadBlocks: 5,
      callTimeoutMs: 2_000,
    });
    await client.finalized();
    // The first node stops answering and producing blocks, its socket open (half-open).
    first.fault({ kind: "stall", seconds: 30 });
    await until(() => client.status().reconnects >= 1, 10_000, "a reconnect");
    expect(client.status().lastError).toMatch(/no new head for \d+ ms \(5 block times\)/);
    const finalized = await client.finalized();
    expect(finalized.number).toBeGreaterThan(0);
    expect(client.status().endpoint).toBe(describeEndpoint(second.url));
  });

  it("bounds a call on a half-open connection and drops it", async () => {
    const node = await chainNode(cleanup);
    // Heads are not watched closely here: the call's own timeout must catch the stall.
    const client = chainClient(cleanup, [node.url], { staleHeadBlocks: 1000, callTimeoutMs: 500 });
    await client.finalized();
    node.fault({ kind: "stall", seconds: 2 });
    const started = performance.now();
    const error = await client.finalized().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ChainError);
    expect((error as ChainError).kind).toBe("timeout");
    // Its own 500 ms timeout ended it (with room for a loaded machine), not the 2 s stall.
    expect(performance.now() - started).toBeLessThan(4 * 500);
    expect(client.status().reconnects).toBe(1);
    expect(client.status().lastError).toMatch(/reading the finalized head timed out after 500 ms/);
    // Once the node answers again, the same client carries on.
    await until(
      () =>
        client.finalized({ timeoutMs: 1_000 }).then(
          () => true,
          () => false,
        ),
      15_000,
      "the client to recover",
    );
  });

  it("never hangs when no endpoint answers", async () => {
    const client = createChainClient({
      endpoints: ["ws://127.0.0.1:9", "ws://127.0.0.1:10"],
      callTimeoutMs: 300,
      connectTimeoutMs: 300,
      blockTimeMs: 100,
      log: recordingLogger().log,
    });
    cleanup.add(client, (c) => c.close());
    const error = await client.finalized().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "ChainError", kind: "unavailable" });
    expect((error as Error).message).toMatch(/no chain endpoint answered within 300 ms/);
    await expect(client.waitForHead(5, { timeoutMs: 200 })).rejects.toMatchObject({
      kind: "timeout",
    });
    const aborted = new AbortController();
    const waiting = client.connection({ signal: aborted.signal, timeoutMs: 60_000 });
    aborted.abort();
    await expect(waiting).rejects.toMatchObject({ kind: "aborted" });
    expect(() => createChainClient({ endpoints: ["http://x"] })).toThrow(/ws:\/\/ or wss:\/\//);
    expect(() => createChainClient({ endpoints: [] })).toThrow(/at least one/);
  });

  it("closed while it connects, leaves nothing behind: no polkadot FATAL once the node goes too", async () => {
    // platform dev stops the master, then its local chain: a client closed in the middle of
    // loading the runtime must finish (or drop) that connection inside close().
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const delayMs of [0, 2, 5, 10, 20, 40, 80]) {
        const node = await chainNode(cleanup);
        const client = createChainClient({
          endpoints: [node.url],
          blockTimeMs: 100,
          log: recordingLogger().log,
        });
        client.finalized().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        await client.close();
        await node.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const fatal = printed.mock.calls.map((call) => call.map(String).join(" "));
      expect(fatal.filter((line) => /Unable to initialize the API/.test(line))).toEqual([]);
    } finally {
      printed.mockRestore();
    }
  });

  it("logs endpoints without their credentials", () => {
    expect(describeEndpoint("wss://user:secret@rpc.example:8443/ws?apikey=k")).toBe(
      "wss://rpc.example:8443/ws",
    );
  });
});
