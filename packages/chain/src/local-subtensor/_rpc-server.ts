import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

/** A JSON-RPC error answer (code, message, optional data). */
export class RpcError extends Error {
  override readonly name = "RpcError";
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** -32602, what jsonrpsee answers for parameters that do not parse. */
export function invalidParams(detail: string): RpcError {
  return new RpcError(-32602, "Invalid params", detail);
}

/**
 * What a subscribe method returns: the notification method name and `start`, run once the
 * subscription id has been answered. `start` gets `emit` (one notification) and `end` (emit
 * nothing more and forget the subscription); it returns its cleanup.
 */
export interface Subscription {
  readonly [SUBSCRIPTION]: true;
  readonly notify: string;
  start(emit: (result: unknown) => void, end: () => void): () => void;
}

const SUBSCRIPTION: unique symbol = Symbol("subscription");

/** Marks a handler's result as a new subscription whose notifications are called `notify`. */
export function subscription(
  notify: string,
  start: (emit: (result: unknown) => void, end: () => void) => () => void,
): Subscription {
  return { [SUBSCRIPTION]: true, notify, start };
}

/** The connection a call arrived on. */
export interface RpcConnection {
  /** Ends one of this connection's subscriptions; false if it had none by that id. */
  unsubscribe(id: unknown): boolean;
}

/** One JSON-RPC method. */
export type RpcHandler = (params: unknown[], conn: RpcConnection) => unknown;

/** Options of `startRpcServer`. */
export interface RpcServerOptions {
  host: string;
  port: number;
  methods: Record<string, RpcHandler>;
  /** Called with each method name a client calls (known or not). */
  onCall?: (method: string) => void;
  onError?: (error: unknown) => void;
}

/** A JSON-RPC 2.0 server on a websocket, with subscriptions and the dev faults. */
export interface RpcServer {
  url: string;
  port: number;
  /** Stops answering (calls wait, sockets stay open) for `ms`. */
  stall(ms: number): void;
  /** Milliseconds of stall left (0 when answering). */
  stallRemaining(): number;
  /** Drops every connection now and refuses new ones for `refuseMs`. */
  dropAll(refuseMs: number): void;
  /** Open connections. */
  connections(): number;
  close(): Promise<void>;
}

interface Connection extends RpcConnection {
  socket: WebSocket;
  subs: Map<string, () => void>;
  closed: boolean;
}

/** Listens on `host:port` (0: any free port) and serves `methods`. */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const wss = new WebSocketServer({ host: options.host, port: options.port });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", resolve);
    wss.once("error", reject);
  });
  const port = (wss.address() as AddressInfo).port;
  const connections = new Set<Connection>();
  let stallUntil = 0;
  let stallTimer: NodeJS.Timeout | undefined;
  let held: [Connection, RawData][] = [];
  let refuseUntil = 0;
  const report = options.onError ?? (() => {});

  const send = (conn: Connection, message: unknown) => {
    if (conn.socket.readyState === conn.socket.OPEN) conn.socket.send(JSON.stringify(message));
  };

  const call = async (conn: Connection, request: unknown): Promise<unknown> => {
    if (typeof request !== "object" || request === null || Array.isArray(request)) {
      return { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid request" } };
    }
    const {
      id = null,
      method,
      params,
    } = request as {
      id?: unknown;
      method?: unknown;
      params?: unknown;
    };
    if (typeof method !== "string") {
      return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid request" } };
    }
    options.onCall?.(method);
    const handler = Object.hasOwn(options.methods, method) ? options.methods[method] : undefined;
    if (!handler) {
      return { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } };
    }
    const args = params === undefined || params === null ? [] : params;
    if (!Array.isArray(args)) {
      return { jsonrpc: "2.0", id, error: { code: -32602, message: "Invalid params" } };
    }
    try {
      const result = await handler(args, conn);
      if (isSubscription(result)) {
        const subId = randomBytes(8).toString("hex");
        let ended = false;
        const end = () => {
          ended = true;
          const cleanup = conn.subs.get(subId);
          conn.subs.delete(subId);
          cleanup?.();
        };
        conn.subs.set(subId, () => {});
        // The id goes out first: a notification must never precede it.
        send(conn, { jsonrpc: "2.0", id, result: subId });
        const cleanup = result.start((value) => {
          if (!ended && conn.subs.has(subId)) {
            send(conn, {
              jsonrpc: "2.0",
              method: result.notify,
              params: { subscription: subId, result: value },
            });
          }
        }, end);
        // A socket that closed while the handler ran never sees its subscription's cleanup run.
        if (ended || conn.closed || !conn.subs.has(subId)) {
          conn.subs.delete(subId);
          cleanup();
        } else conn.subs.set(subId, cleanup);
        return undefined;
      }
      return { jsonrpc: "2.0", id, result: result === undefined ? null : result };
    } catch (error) {
      if (error instanceof RpcError) {
        const body: Record<string, unknown> = { code: error.code, message: error.message };
        if (error.data !== undefined) body.data = error.data;
        return { jsonrpc: "2.0", id, error: body };
      }
      report(error);
      return { jsonrpc: "2.0", id, error: { code: -32603, message: "Internal error" } };
    }
  };

  const handle = async (conn: Connection, data: RawData) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.toString());
    } catch {
      send(conn, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
      return;
    }
    if (Array.isArray(parsed)) {
      const answers = (await Promise.all(parsed.map((r) => call(conn, r)))).filter(
        (a) => a !== undefined,
      );
      if (answers.length > 0) send(conn, answers);
      return;
    }
    const answer = await call(conn, parsed);
    if (answer !== undefined) send(conn, answer);
  };

  const release = () => {
    stallTimer = undefined;
    const waiting = held;
    held = [];
    for (const [conn, data] of waiting) handle(conn, data).catch(report);
  };

  wss.on("connection", (socket) => {
    if (Date.now() < refuseUntil) {
      socket.terminate();
      return;
    }
    const conn: Connection = {
      socket,
      subs: new Map(),
      closed: false,
      unsubscribe(id) {
        if (typeof id !== "string" && typeof id !== "number") return false;
        const key = String(id);
        const cleanup = conn.subs.get(key);
        if (!cleanup) return false;
        conn.subs.delete(key);
        cleanup();
        return true;
      },
    };
    connections.add(conn);
    socket.on("message", (data) => {
      if (Date.now() < stallUntil) held.push([conn, data]);
      else handle(conn, data).catch(report);
    });
    socket.on("close", () => {
      conn.closed = true;
      connections.delete(conn);
      for (const cleanup of conn.subs.values()) cleanup();
      conn.subs.clear();
    });
    socket.on("error", report);
  });

  return {
    url: `ws://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`,
    port,
    stall(ms) {
      stallUntil = Math.max(stallUntil, Date.now() + ms);
      if (stallTimer) clearTimeout(stallTimer);
      stallTimer = setTimeout(release, Math.max(0, stallUntil - Date.now()));
    },
    stallRemaining: () => Math.max(0, stallUntil - Date.now()),
    dropAll(refuseMs) {
      refuseUntil = Date.now() + refuseMs;
      // After the current answer is written: the fault's own caller gets its reply first.
      setImmediate(() => {
        for (const conn of connections) conn.socket.terminate();
      });
    },
    connections: () => connections.size,
    async close() {
      if (stallTimer) clearTimeout(stallTimer);
      held = [];
      for (const conn of connections) conn.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

function isSubscription(value: unknown): value is Subscription {
  return typeof value === "object" && value !== null && SUBSCRIPTION in value;
}
