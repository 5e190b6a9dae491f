import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { RpcError, type RpcServer, startRpcServer, subscription } from "./_rpc-server.js";

// A raw JSON-RPC client: every message the server sends, in order.
async function connect(url: string) {
  const socket = new WebSocket(url);
  const messages: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  socket.on("message", (data) => {
    messages.push(JSON.parse(data.toString()) as Record<string, unknown>);
    for (const w of waiters.splice(0)) w();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const until = async (count: number) => {
    while (messages.length < count) await new Promise<void>((r) => waiters.push(r));
    return messages;
  };
  return {
    messages,
    closed,
    send: (body: unknown) => socket.send(typeof body === "string" ? body : JSON.stringify(body)),
    until,
    close: () => socket.close(),
  };
}

describe("JSON-RPC websocket server", () => {
  let server: RpcServer;
  let ticks: ((n: number) => void) | undefined;

  beforeAll(async () => {
    server = await startRpcServer({
      host: "127.0.0.1",
      port: 0,
      methods: {
        echo: (params) => params,
        fail: () => {
          throw new RpcError(1010, "Invalid Transaction", "Transaction is outdated");
        },
        crash: () => {
          throw new Error("bug");
        },
        slow: async () => {
          await new Promise((r) => setTimeout(r, 20));
          return "done";
        },
        ticker_subscribe: () =>
          subscription("ticker_tick", (emit) => {
            emit(0);
            ticks = emit;
            return () => {
              ticks = undefined;
            };
          }),
        ticker_unsubscribe: ([id], conn) => conn.unsubscribe(id),
      },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it("answers calls, errors and unknown methods as JSON-RPC 2.0", async () => {
    const c = await connect(server.url);
    c.send({ jsonrpc: "2.0", id: 1, method: "echo", params: [1, "a"] });
    c.send({ jsonrpc: "2.0", id: 2, method: "fail", params: [] });
    c.send({ jsonrpc: "2.0", id: 3, method: "nope", params: [] });
    c.send({ jsonrpc: "2.0", id: 4, method: "crash" });
    c.send("{not json");
    c.send({ jsonrpc: "2.0", id: 5, method: "echo", params: { a: 1 } });
    const messages = await c.until(6);
    const byId = (id: unknown) => messages.find((m) => m.id === id);
    expect(byId(1)).toEqual({ jsonrpc: "2.0", id: 1, result: [1, "a"] });
    expect(byId(2)).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: 1010, message: "Invalid Transaction", data: "Transaction is outdated" },
    });
    expect(byId(3)).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32601, message: "Method not found" },
    });
    expect(byId(4)).toEqual({
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32603, message: "Internal error" },
    });
    expect(byId(null)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error" },
    });
    expect(byId(5)).toMatchObject({ error: { code: -32602 } });
    c.close();
  });

  it("answers a batch with one array", async () => {
    const c = await connect(server.url);
    c.send([
      { jsonrpc: "2.0", id: 1, method: "slow" },
      { jsonrpc: "2.0", id: 2, method: "echo", params: [2] },
    ]);
    const [batch] = await c.until(1);
    expect(batch).toEqual([
      { jsonrpc: "2.0", id: 1, result: "done" },
      { jsonrpc: "2.0", id: 2, result: [2] },
    ]);
    c.close();
  });

  it("sends a subscription's id before its first notification, and stops on unsubscribe", async () => {
    const c = await connect(server.url);
    c.send({ jsonrpc: "2.0", id: 1, method: "ticker_subscribe", params: [] });
    const [answer, first] = await c.until(2);
    const id = answer?.result as string;
    expect(typeof id).toBe("string");
    expect(first).toEqual({
      jsonrpc: "2.0",
      method: "ticker_tick",
      params: { subscription: id, result: 0 },
    });
    ticks?.(1);
    await c.until(3);
    c.send({ jsonrpc: "2.0", id: 2, method: "ticker_unsubscribe", params: [id] });
    c.send({ jsonrpc: "2.0", id: 3, method: "ticker_unsubscribe", params: [id] });
    const messages = await c.until(5);
    expect(messages[2]).toMatchObject({ params: { subscription: id, result: 1 } });
    expect(messages.slice(3)).toEqual([
      { jsonrpc: "2.0", id: 2, result: true },
      { jsonrpc: "2.0", id: 3, result: false },
    ]);
    expect(ticks).toBeUndefined();
    c.close();
  });

  it("stall: holds calls on open sockets, then answers them in order", async () => {
    const c = await connect(server.url);
    server.stall(400);
    expect(server.stallRemaining()).toBeGreaterThan(0);
    c.send({ jsonrpc: "2.0", id: 1, method: "echo", params: ["a"] });
    c.send({ jsonrpc: "2.0", id: 2, method: "echo", params: ["b"] });
    await new Promise((r) => setTimeout(r, 100));
    expect(c.messages).toHaveLength(0);
    const messages = await c.until(2);
    expect(messages.map((m) => m.id)).toEqual([1, 2]);
    expect(server.stallRemaining()).toBe(0);
    c.close();
  });

  it("dropAll: closes every socket and refuses connections for a while", async () => {
    const a = await connect(server.url);
    const b = await connect(server.url);
    expect(server.connections()).toBe(2);
    server.dropAll(300);
    await Promise.all([a.closed, b.closed]);
    const refused = new WebSocket(server.url);
    const code = await new Promise<number>((resolve) => refused.once("close", (c) => resolve(c)));
    expect(code).toBe(1006);
    await new Promise((r) => setTimeout(r, 350));
    const again = await connect(server.url);
    again.send({ jsonrpc: "2.0", id: 1, method: "echo", params: [] });
    expect((await again.until(1))[0]).toEqual({ jsonrpc: "2.0", id: 1, result: [] });
    again.close();
  });
});
