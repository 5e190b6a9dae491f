import { createHash } from "node:crypto";
import { once } from "node:events";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";

/** A request as the upstream challenge received it. */
export interface SeenRequest {
  method: string;
  /** The request target exactly as received. */
  url: string;
  path: string;
  /** The query with its "?" ("" when none). */
  query: string;
  /** Lower-cased names; repeated headers keep every value, in order. */
  headers: Record<string, string[]>;
  /** The client port of the connection it came on (one per pooled connection). */
  remotePort: number;
  /** Filled in when a handler reads the body (the default one does). */
  body?: Buffer;
}

/** Answers one request instead of the echo. */
export type UpstreamHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  seen: SeenRequest,
) => void | Promise<void>;

/** A stand-in challenge on a real loopback socket that records every request it gets. */
export interface EchoUpstream {
  url: string;
  port: number;
  /** Every request received, in arrival order (recorded before the body is read). */
  seen: SeenRequest[];
  /** Answer requests to `path` (exact, without query) with `handler`. */
  on(path: string, handler: UpstreamHandler): void;
  /** Requests seen whose path is `path`. */
  seenAt(path: string): SeenRequest[];
  close(): Promise<void>;
}

/** Read a whole node request body. */
export async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function headerLists(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const values = out[name] ?? [];
    values.push(req.rawHeaders[i + 1]!);
    out[name] = values;
  }
  return out;
}

/**
 * Start an upstream that echoes every request as JSON (method, url, path, query, headers,
 * body and its sha256) unless a handler is registered for its path.
 */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  const seen: SeenRequest[] = [];
  const handlers = new Map<string, UpstreamHandler>();
  const server = createServer(async (req, res) => {
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const record: SeenRequest = {
      method: req.method ?? "GET",
      url,
      path: question === -1 ? url : url.slice(0, question),
      query: question === -1 ? "" : url.slice(question),
      headers: headerLists(req),
      remotePort: req.socket.remotePort ?? 0,
    };
    seen.push(record);
    try {
      const handler = handlers.get(record.path);
      if (handler) {
        await handler(req, res, record);
        return;
      }
      record.body = await readAll(req);
      const payload = JSON.stringify({
        method: record.method,
        url: record.url,
        path: record.path,
        query: record.query,
        headers: record.headers,
        body: record.body.toString("utf8"),
        body_sha256: createHash("sha256").update(record.body).digest("hex"),
      });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
      });
      res.end(req.method === "HEAD" ? undefined : payload);
    } catch {
      res.destroy();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    on: (path, handler) => void handlers.set(path, handler),
    seenAt: (path) => seen.filter((request) => request.path === path),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback origin where nothing listens (connections are refused). */
export async function deadOrigin(): Promise<string> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** A response read in full by {@link rawRequest}. */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json(): unknown;
}

/** What {@link rawRequest} sends. */
export interface RawRequestOptions {
  method?: string;
  /** Sent exactly as given: no URL parsing, so every spelling reaches the server. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One HTTP/1.1 request over a fresh connection, with the target sent verbatim. */
export function rawRequest(base: string, options: RawRequestOptions): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers,
        agent: false,
      },
      async (res) => {
        const body = await readAll(res as unknown as IncomingMessage);
        const text = body.toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          text,
          json: () => JSON.parse(text),
        });
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Write bytes on a raw TCP connection and return everything the server answered. */
export async function rawSocket(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await once(socket, "connect");
  socket.end(Buffer.from(bytes, "latin1"));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("latin1");
}

/** A promise with its resolver, for handlers that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
